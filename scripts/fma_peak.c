/*
 * The core's fused multiply-add rate, 256-bit (AVX2+FMA) and, where the
 * compiler targets it, 512-bit (AVX-512): twelve independent accumulators,
 * so that the loop runs at the FMA units' throughput, not their latency.
 * It bounds what any float32 kernel can reach: the 16x32x128 forward's GEMM
 * is 983,040 multiply-adds, 122,880 FMAs of 8 lanes or 61,440 of 16
 * (BENCHMARKS.md, "What bounds the AVX2 kernels at 16x32x128").
 *
 * usage: gcc -O2 -march=native scripts/fma_peak.c -o /tmp/fma_peak && /tmp/fma_peak
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

enum { kAccumulators = 12 };
static const long kSteps = 100000000;

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void report(const char* what, double elapsed, float checksum) {
  printf("%s: %.2f G FMA instructions/s (checksum %g)\n", what, (double)kSteps * kAccumulators / elapsed / 1e9, checksum);
}

int main(void) {
  __m256 a[kAccumulators];
  const __m256 b = _mm256_set1_ps(1.0000001f), c = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < kAccumulators; ++i) a[i] = _mm256_set1_ps((float)i);
  double start = seconds();
  for (long k = 0; k < kSteps; ++k) {
#pragma GCC unroll 12
    for (int i = 0; i < kAccumulators; ++i) a[i] = _mm256_fmadd_ps(a[i], b, c);
  }
  double elapsed = seconds() - start;
  float sum = 0;
  for (int i = 0; i < kAccumulators; ++i) sum += a[i][0];
  report("256-bit", elapsed, sum);
#if defined(__AVX512F__)
  __m512 x[kAccumulators];
  const __m512 y = _mm512_set1_ps(1.0000001f), z = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < kAccumulators; ++i) x[i] = _mm512_set1_ps((float)i);
  start = seconds();
  for (long k = 0; k < kSteps; ++k) {
#pragma GCC unroll 12
    for (int i = 0; i < kAccumulators; ++i) x[i] = _mm512_fmadd_ps(x[i], y, z);
  }
  elapsed = seconds() - start;
  sum = 0;
  for (int i = 0; i < kAccumulators; ++i) sum += x[i][0];
  report("512-bit", elapsed, sum);
#endif
  return 0;
}
