/*
 * Stress test of liblltm's CPU path through its C ABI: several threads call
 * lltm_forward and lltm_backward at once (with LLTM_NUM_THREADS above the
 * core count, set by the caller) and every result must be bit-identical to
 * the same call made alone beforehand. A watchdog turns a hang into a failure.
 *
 * usage: abi_stress [rounds per thread] [threads] [timeout seconds]
 */
#include "stress.h"

enum { kCases = 6 };
static const int64_t kSizes[kCases][3] = {/* B, F, S */
                                          {1, 1, 1},   {16, 32, 128}, {33, 1, 257},
                                          {7, 13, 45}, {64, 16, 96},  {3, 100, 31}};

/* One case's buffers: inputs, forward outputs, backward outputs. */
typedef struct {
  int64_t B, F, S;
  int32_t dtype;
  void* in[5];   /* input [B,F], weights [3S,K], bias [3S], old_h [B,S], old_cell [B,S] */
  void* fwd[7];  /* new_h, new_cell, input_gate, output_gate, candidate_cell [B,S], X [B,K], gates [B,3S] */
  void* grad[2]; /* grad_h, grad_cell [B,S] */
  void* bwd[5];  /* d_old_h [B,S], d_input [B,F], d_weights [3S,K], d_bias [3S], d_old_cell [B,S] */
} Case;

static size_t elem(int32_t dtype) { return stress_element_bytes(dtype); }

/* Shapes (rows, cols) of the buffers, in the order of Case's arrays. */
static void shapes(const Case* c, int64_t s[19][2]) {
  const int64_t B = c->B, F = c->F, S = c->S, K = S + F;
  const int64_t all[19][2] = {{B, F}, {3 * S, K}, {1, 3 * S}, {B, S}, {B, S},                    /* in */
                              {B, S}, {B, S},    {B, S},     {B, S}, {B, S}, {B, K}, {B, 3 * S}, /* fwd */
                              {B, S}, {B, S},                                                    /* grad */
                              {B, S}, {B, F},    {3 * S, K}, {1, 3 * S}, {B, S}};                /* bwd */
  memcpy(s, all, sizeof all);
}

static void** slot(Case* c, int i) {
  return i < 5 ? &c->in[i] : i < 12 ? &c->fwd[i - 5] : i < 14 ? &c->grad[i - 12] : &c->bwd[i - 14];
}

static void case_init(Case* c, const int64_t size[3], int32_t dtype, unsigned seed) {
  int64_t s[19][2];
  c->B = size[0];
  c->F = size[1];
  c->S = size[2];
  c->dtype = dtype;
  shapes(c, s);
  for (int i = 0; i < 19; ++i) {
    const size_t n = (size_t)(s[i][0] * s[i][1]);
    void* p = calloc(n, elem(dtype));
    if (i < 5 || (i >= 12 && i < 14)) stress_fill(p, n, dtype, seed + 7919u * (unsigned)i, 1.0);
    *slot(c, i) = p;
  }
}

static void case_free(Case* c) {
  for (int i = 0; i < 19; ++i) free(*slot(c, i));
}

static int run_case(Case* c) {
  int64_t s[19][2];
  lltm_tensor t[19];
  shapes(c, s);
  for (int i = 0; i < 19; ++i) {
    const int vector = s[i][0] == 1 && (i == 2 || i == 17);
    t[i] = stress_tensor(*slot(c, i), vector ? 1 : 2, vector ? &s[i][1] : s[i], c->dtype);
  }
  int32_t rc = lltm_forward(&t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7], &t[8], &t[9], &t[10], &t[11],
                            c->dtype, LLTM_CPU, 0);
  if (rc != LLTM_OK) return fprintf(stderr, "lltm_forward: %s\n", lltm_last_error()), 1;
  rc = lltm_backward(&t[12], &t[13], &t[6], &t[7], &t[8], &t[9], &t[10], &t[11], &t[1], &t[14], &t[15], &t[16],
                     &t[17], &t[18], c->dtype, LLTM_CPU, 0);
  if (rc != LLTM_OK) return fprintf(stderr, "lltm_backward: %s\n", lltm_last_error()), 1;
  return 0;
}

/* Outputs (fwd and bwd) of a and b byte for byte. */
static int same_outputs(Case* a, Case* b) {
  int64_t s[19][2];
  shapes(a, s);
  for (int i = 5; i < 19; ++i)
    if ((i < 12 || i >= 14) && memcmp(*slot(a, i), *slot(b, i), (size_t)(s[i][0] * s[i][1]) * elem(a->dtype)) != 0)
      return 0;
  return 1;
}

static Case expected[2][kCases];
static int rounds = 200;
static volatile int failures = 0;

static void* worker(void* arg) {
  const int id = (int)(intptr_t)arg;
  Case mine[2][kCases];
  for (int d = 0; d < 2; ++d)
    for (int k = 0; k < kCases; ++k) case_init(&mine[d][k], kSizes[k], d, 1000u + (unsigned)(d * kCases + k));
  for (int r = 0; r < rounds; ++r) {
    const int d = (r + id) & 1, k = (r * 7 + id * 3) % kCases;
    if (run_case(&mine[d][k]) != 0 || !same_outputs(&mine[d][k], &expected[d][k])) {
      if (__atomic_fetch_add(&failures, 1, __ATOMIC_SEQ_CST) < 5)
        fprintf(stderr, "thread %d round %d: %s B=%lld F=%lld S=%lld differs from the call made alone\n", id, r,
                d ? "float64" : "float32", (long long)kSizes[k][0], (long long)kSizes[k][1], (long long)kSizes[k][2]);
    }
  }
  for (int d = 0; d < 2; ++d)
    for (int k = 0; k < kCases; ++k) case_free(&mine[d][k]);
  return NULL;
}

int main(int argc, char** argv) {
  int threads;
  stress_begin(argc, argv, 200, &rounds, &threads);
  for (int d = 0; d < 2; ++d)
    for (int k = 0; k < kCases; ++k) {
      case_init(&expected[d][k], kSizes[k], d, 1000u + (unsigned)(d * kCases + k));
      if (run_case(&expected[d][k]) != 0) return 1;
    }
  const double seconds = stress_run(threads, worker);
  for (int d = 0; d < 2; ++d)
    for (int k = 0; k < kCases; ++k) case_free(&expected[d][k]);
  const char* env = getenv("LLTM_NUM_THREADS");
  printf("abi_stress: %d threads x %d forward+backward calls (LLTM_NUM_THREADS=%s) in %.2f s: %d differ\n", threads,
         rounds, env ? env : "unset", seconds, failures);
  return failures == 0 ? 0 : 1;
}
