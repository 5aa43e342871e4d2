/*
 * Run by tests/isa.test.ts on the host and under qemu-user emulating older
 * processors: prints the CPU kernels liblltm chose (or its refusal), then
 * every output of a forward and a backward pass in float32 and float64 at
 * two sizes, one value per line, from inputs made by a fixed generator.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lltm.h"

static uint64_t state = 0x9E3779B97F4A7C15u;

static double next_value(void) {
  state = state * 6364136223846793005u + 1442695040888963407u;
  return (double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static lltm_tensor make(int32_t dtype, int64_t rows, int64_t cols) {
  lltm_tensor t = {0};
  const int64_t n = rows * cols;
  const size_t size = dtype == LLTM_FLOAT32 ? sizeof(float) : sizeof(double);
  t.data = calloc((size_t)n, size);
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == LLTM_FLOAT32) ((float*)t.data)[i] = (float)next_value();
    else ((double*)t.data)[i] = next_value();
  }
  t.ndim = cols == 1 ? 1 : 2;
  t.sizes[0] = rows;
  t.sizes[1] = cols;
  t.strides[0] = cols == 1 ? 1 : cols;
  t.strides[1] = 1;
  return t;
}

static void print(int32_t dtype, const lltm_tensor* t) {
  const int64_t n = t->sizes[0] * (t->ndim == 2 ? t->sizes[1] : 1);
  for (int64_t i = 0; i < n; ++i)
    printf("%d %.17g\n", dtype, dtype == LLTM_FLOAT32 ? (double)((float*)t->data)[i] : ((double*)t->data)[i]);
}

static int pass(int32_t dtype, int64_t B, int64_t F, int64_t S) {
  lltm_tensor x = make(dtype, B, F), w = make(dtype, 3 * S, S + F), b = make(dtype, 3 * S, 1);
  lltm_tensor h = make(dtype, B, S), c = make(dtype, B, S);
  lltm_tensor out[7] = {make(dtype, B, S), make(dtype, B, S), make(dtype, B, S), make(dtype, B, S),
                        make(dtype, B, S), make(dtype, B, S + F), make(dtype, B, 3 * S)};
  lltm_tensor gh = make(dtype, B, S), gc = make(dtype, B, S);
  lltm_tensor grads[5] = {make(dtype, B, S), make(dtype, B, F), make(dtype, 3 * S, S + F), make(dtype, 3 * S, 1),
                          make(dtype, B, S)};
  if (lltm_forward(&x, &w, &b, &h, &c, &out[0], &out[1], &out[2], &out[3], &out[4], &out[5], &out[6], dtype, LLTM_CPU,
                   0) != LLTM_OK ||
      lltm_backward(&gh, &gc, &out[1], &out[2], &out[3], &out[4], &out[5], &out[6], &w, &grads[0], &grads[1],
                    &grads[2], &grads[3], &grads[4], dtype, LLTM_CPU, 0) != LLTM_OK) {
    printf("error %s\n", lltm_last_error());
    return 1;
  }
  for (int i = 0; i < 7; ++i) print(dtype, &out[i]);
  for (int i = 0; i < 5; ++i) print(dtype, &grads[i]);
  return 0;
}

int main(void) {
  const char* kernels = lltm_cpu_kernels();
  if (kernels == NULL) {
    printf("refused %s\n", lltm_last_error());
    return 0;
  }
  printf("kernels %s\n", kernels);
  int failed = 0;
  for (int32_t dtype = LLTM_FLOAT32; dtype <= LLTM_FLOAT64; ++dtype) {
    failed |= pass(dtype, 3, 17, 5);
    failed |= pass(dtype, 13, 40, 37);
  }
  return failed;
}
