/*
 * linear_test: the linear op and its backward through lltm_run against sums
 * in long double: y = x Wᵀ + bias, d_x = grad_y W, d_weight = grad_yᵀ x,
 * d_bias = the column sums of grad_y, in float32 and float64, with and
 * without bias and accumulation, for row-major, transposed and padded views.
 * Relative tolerance (against the sum of the products' magnitudes): 1e-5 for
 * float32, 1e-12 for float64.
 *
 * usage: linear_test
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lltm.h"

static long failures;

typedef struct {
  lltm_tensor t;
  double* values; /* logical [rows, cols] row-major copy of what t holds */
  int64_t rows, cols;
} Matrix;

static double uniform(void) { return (double)rand() / RAND_MAX * 2.0 - 1.0; }

static void put(Matrix* m, int64_t i, int64_t j, double v) {
  const int64_t off = m->t.ndim == 1 ? j * m->t.strides[0] : i * m->t.strides[0] + j * m->t.strides[1];
  if (m->t.dtype == LLTM_FLOAT64)
    ((double*)m->t.data)[off] = v;
  else
    ((float*)m->t.data)[off] = (float)v;
  m->values[i * m->cols + j] = m->t.dtype == LLTM_FLOAT64 ? v : (double)(float)v;
}

static double get(const Matrix* m, int64_t i, int64_t j) {
  const int64_t off = m->t.ndim == 1 ? j * m->t.strides[0] : i * m->t.strides[0] + j * m->t.strides[1];
  return m->t.dtype == LLTM_FLOAT64 ? ((double*)m->t.data)[off] : (double)((float*)m->t.data)[off];
}

/* A [rows, cols] matrix (a vector when rows is 0) in a layout picked by `layout`: 0 row-major, 1 transposed, 2 padded. */
static Matrix make(int64_t rows, int64_t cols, int32_t dtype, int layout) {
  Matrix m;
  memset(&m, 0, sizeof m);
  m.rows = rows == 0 ? 1 : rows;
  m.cols = cols;
  m.t.dtype = dtype;
  if (rows == 0) {
    m.t.ndim = 1;
    m.t.sizes[0] = cols;
    m.t.strides[0] = layout == 2 ? 3 : 1;
  } else {
    m.t.ndim = 2;
    m.t.sizes[0] = rows;
    m.t.sizes[1] = cols;
    m.t.strides[0] = layout == 1 ? 1 : layout == 2 ? 2 * cols + 3 : cols;
    m.t.strides[1] = layout == 1 ? rows : layout == 2 ? 2 : 1;
  }
  const int64_t span = rows == 0 ? (cols - 1) * m.t.strides[0] + 1
                                 : (rows - 1) * m.t.strides[0] + (cols - 1) * m.t.strides[1] + 1;
  m.t.data = calloc((size_t)span, dtype == LLTM_FLOAT64 ? 8 : 4);
  m.values = calloc((size_t)(m.rows * cols), sizeof(double));
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < cols; ++j) put(&m, i, j, uniform());
  return m;
}

static void release(Matrix* m) {
  free(m->t.data);
  free(m->values);
}

static void expect(const char* what, const Matrix* m, const long double* want, const long double* scale, double tol) {
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t j = 0; j < m->cols; ++j) {
      const double got = get(m, i, j);
      const long double w = want[i * m->cols + j], s = scale[i * m->cols + j] + 1e-30L;
      if (fabsl((long double)got - w) > tol * s) {
        fprintf(stderr, "linear_test: %s [%lld, %lld] = %.17g, expected %.17Lg\n", what, (long long)i, (long long)j,
                got, w);
        if (++failures >= 20) exit(1);
      }
    }
}

static void run(int32_t op, lltm_call* call) {
  if (lltm_run(op, call) != LLTM_OK) {
    fprintf(stderr, "linear_test: op %d failed: %s\n", op, lltm_last_error());
    exit(1);
  }
}

static void check(int64_t N, int64_t K, int64_t M, int32_t dtype, int with_bias, int accumulate, int layout) {
  const double tol = dtype == LLTM_FLOAT64 ? 1e-12 : 1e-5;
  Matrix x = make(N, K, dtype, layout), w = make(M, K, dtype, (layout + 1) % 3), b = make(0, M, dtype, layout),
         y = make(N, M, dtype, (layout + 2) % 3);
  lltm_call call;
  memset(&call, 0, sizeof call);
  call.tensors[0] = x.t, call.tensors[1] = w.t, call.tensors[2] = b.t, call.tensors[3] = y.t;
  call.given = with_bias ? 15u : 11u;
  run(LLTM_OP_LINEAR, &call);
  long double* want = calloc((size_t)(N * (M > K ? M : K) + M * K + M), sizeof(long double));
  long double* scale = calloc((size_t)(N * (M > K ? M : K) + M * K + M), sizeof(long double));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      long double s = with_bias ? b.values[m] : 0, a = with_bias ? fabs(b.values[m]) : 0;
      for (int64_t k = 0; k < K; ++k) {
        s += (long double)x.values[n * K + k] * w.values[m * K + k];
        a += fabsl((long double)x.values[n * K + k] * w.values[m * K + k]);
      }
      want[n * M + m] = s, scale[n * M + m] = a;
    }
  expect("y", &y, want, scale, tol);
  /* The backward: grad_y is y's values; d_weight and d_bias start from their contents under accumulation. */
  Matrix gy = make(N, M, dtype, layout), dx = make(N, K, dtype, (layout + 1) % 3), dw = make(M, K, dtype, layout),
         db = make(0, M, dtype, (layout + 2) % 3);
  memset(&call, 0, sizeof call);
  call.tensors[0] = gy.t, call.tensors[1] = x.t, call.tensors[2] = w.t;
  call.tensors[3] = dx.t, call.tensors[4] = dw.t, call.tensors[5] = db.t;
  call.given = 63u;
  call.flags = accumulate ? LLTM_ACCUMULATE_PARAM_GRADS : 0;
  long double* dw_before = calloc((size_t)(M * K), sizeof(long double));
  long double* db_before = calloc((size_t)M, sizeof(long double));
  for (int64_t i = 0; i < M * K; ++i) dw_before[i] = accumulate ? dw.values[i] : 0;
  for (int64_t i = 0; i < M; ++i) db_before[i] = accumulate ? db.values[i] : 0;
  run(LLTM_OP_LINEAR_BACKWARD, &call);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      long double s = 0, a = 0;
      for (int64_t m = 0; m < M; ++m) {
        s += (long double)gy.values[n * M + m] * w.values[m * K + k];
        a += fabsl((long double)gy.values[n * M + m] * w.values[m * K + k]);
      }
      want[n * K + k] = s, scale[n * K + k] = a;
    }
  expect("d_x", &dx, want, scale, tol);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) {
      long double s = dw_before[m * K + k], a = fabsl(dw_before[m * K + k]);
      for (int64_t n = 0; n < N; ++n) {
        s += (long double)gy.values[n * M + m] * x.values[n * K + k];
        a += fabsl((long double)gy.values[n * M + m] * x.values[n * K + k]);
      }
      want[m * K + k] = s, scale[m * K + k] = a;
    }
  expect("d_weight", &dw, want, scale, tol);
  for (int64_t m = 0; m < M; ++m) {
    long double s = db_before[m], a = fabsl(db_before[m]);
    for (int64_t n = 0; n < N; ++n) s += gy.values[n * M + m], a += fabs(gy.values[n * M + m]);
    want[m] = s, scale[m] = a;
  }
  expect("d_bias", &db, want, scale, tol);
  free(want), free(scale), free(dw_before), free(db_before);
  Matrix* all[] = {&x, &w, &b, &y, &gy, &dx, &dw, &db};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) release(all[i]);
}

int main(void) {
  srand(20261125);
  static const int64_t kSizes[][3] = {{1, 1, 1}, {3, 5, 4}, {16, 32, 24}, {37, 53, 29}, {64, 7, 130}, {5, 300, 9}};
  int cases = 0;
  for (size_t s = 0; s < sizeof kSizes / sizeof kSizes[0]; ++s)
    for (int dtype = LLTM_FLOAT32; dtype <= LLTM_FLOAT64; ++dtype)
      for (int variant = 0; variant < 4; ++variant, ++cases)
        check(kSizes[s][0], kSizes[s][1], kSizes[s][2], dtype, variant & 1, variant >> 1, (int)((s + variant) % 3));
  printf("linear_test: %d cases, %ld failures\n", cases, failures);
  return failures == 0 ? 0 : 1;
}
