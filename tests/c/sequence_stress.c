/*
 * Stress test of liblltm's CPU sequence engine and cross-entropy through the
 * C ABI: several threads run whole sequences forward and backward
 * (lltm_sequence_forward, lltm_sequence_backward) and cross-entropy with its
 * backward (lltm_run) at once, with LLTM_NUM_THREADS above the core count
 * (set by the caller), and every result must be bit-identical to the same
 * call made alone beforehand. Both split their work between the pool's
 * threads (steps' rows and states, rows of logits), so a race or a part run
 * twice shows as a difference. A watchdog turns a hang into a failure.
 *
 * usage: sequence_stress [rounds per thread] [threads] [timeout seconds]
 */
#include "stress.h"

enum { kSequences = 4, kLosses = 3, kJobs = 2 * (kSequences + kLosses), kBuffers = 16 };
static const int64_t kSequenceSizes[kSequences][4] = {/* T, B, F, S */
                                                      {1, 1, 1, 1}, {3, 4, 5, 7}, {5, 16, 32, 64}, {4, 33, 3, 45}};
static const int64_t kLossSizes[kLosses][2] = {/* N, V */ {2048, 65}, {7, 3}, {300, 1000}};

/* One call's buffers: inputs first, then what it writes (compared byte for byte from `first_output`). */
typedef struct {
  int sequence; /* 1: a sequence forward and backward; 0: cross-entropy and its backward */
  int32_t dtype;
  int64_t sizes[4];
  int buffers, first_output;
  void* data[kBuffers];
  size_t bytes[kBuffers];
} Job;

static void* buffer(Job* j, int i, size_t bytes) {
  j->bytes[i] = bytes;
  j->data[i] = calloc(1, bytes);
  return j->data[i];
}

/* Sequence buffers: 0 inputs, 1 weights, 2 bias, 3 h0, 4 c0, 5 grad_outputs, 6 grad_last_cell, then written:
 * 7 outputs, 8 last_h, 9 last_cell, 10 reserve, 11 d_inputs, 12 d_weights, 13 d_bias, 14 d_h0, 15 d_c0.
 * Cross-entropy: 0 logits, 1 targets, then written: 2 losses, 3 d_logits. */
static void job_init(Job* j, int sequence, int k, int32_t dtype, unsigned seed) {
  memset(j, 0, sizeof *j);
  j->sequence = sequence;
  j->dtype = dtype;
  const size_t e = stress_element_bytes(dtype);
  if (sequence) {
    memcpy(j->sizes, kSequenceSizes[k], sizeof kSequenceSizes[k]);
    const int64_t T = j->sizes[0], B = j->sizes[1], F = j->sizes[2], S = j->sizes[3];
    const size_t n[10] = {T * B * F, 3 * S * (S + F), 3 * S, B * S, B * S, T * B * S, B * S, T * B * S, B * S, B * S};
    for (int i = 0; i < 10; ++i) {
      void* p = buffer(j, i, n[i] * e);
      if (i < 7) stress_fill(p, n[i], dtype, seed + 7919u * (unsigned)i, i == 1 ? 0.3 : 1.0);
    }
    uint64_t reserve = 0;
    if (lltm_sequence_reserve_bytes(T, B, F, S, dtype, LLTM_CPU, 0, &reserve) != LLTM_OK) {
      fprintf(stderr, "lltm_sequence_reserve_bytes: %s\n", lltm_last_error());
      exit(1);
    }
    buffer(j, 10, (size_t)reserve);
    const size_t grads[5] = {T * B * F, 3 * S * (S + F), 3 * S, B * S, B * S};
    for (int i = 0; i < 5; ++i) buffer(j, 11 + i, grads[i] * e);
    j->buffers = 16;
    j->first_output = 7;
  } else {
    memcpy(j->sizes, kLossSizes[k], sizeof kLossSizes[k]);
    const int64_t N = j->sizes[0], V = j->sizes[1];
    stress_fill(buffer(j, 0, (size_t)(N * V) * e), (size_t)(N * V), dtype, seed, 4.0);
    int32_t* targets = buffer(j, 1, (size_t)N * sizeof(int32_t));
    for (int64_t r = 0; r < N; ++r) targets[r] = (int32_t)((r * 7 + seed) % (unsigned)V);
    if (N > 2) targets[1] = -100; /* an ignored row */
    buffer(j, 2, (size_t)N * e);
    buffer(j, 3, (size_t)(N * V) * e);
    j->buffers = 4;
    j->first_output = 2;
  }
}

static void job_free(Job* j) {
  for (int i = 0; i < j->buffers; ++i) free(j->data[i]);
}

static int fail_call(const char* fn) { return fprintf(stderr, "%s: %s\n", fn, lltm_last_error()), 1; }

static int run_sequence(Job* j) {
  const int64_t T = j->sizes[0], B = j->sizes[1], F = j->sizes[2], S = j->sizes[3];
  const int64_t tbf[3] = {T, B, F}, tbs[3] = {T, B, S}, w[2] = {3 * S, S + F}, g[1] = {3 * S}, bs[2] = {B, S};
  const int32_t d = j->dtype;
  void** p = j->data;
  const lltm_tensor inputs = stress_tensor(p[0], 3, tbf, d), weights = stress_tensor(p[1], 2, w, d),
                    bias = stress_tensor(p[2], 1, g, d), h0 = stress_tensor(p[3], 2, bs, d),
                    c0 = stress_tensor(p[4], 2, bs, d), grad_outputs = stress_tensor(p[5], 3, tbs, d),
                    grad_last_cell = stress_tensor(p[6], 2, bs, d), outputs = stress_tensor(p[7], 3, tbs, d),
                    last_h = stress_tensor(p[8], 2, bs, d), last_cell = stress_tensor(p[9], 2, bs, d),
                    d_inputs = stress_tensor(p[11], 3, tbf, d), d_weights = stress_tensor(p[12], 2, w, d),
                    d_bias = stress_tensor(p[13], 1, g, d), d_h0 = stress_tensor(p[14], 2, bs, d),
                    d_c0 = stress_tensor(p[15], 2, bs, d);
  if (lltm_sequence_forward(&inputs, &weights, &bias, &h0, &c0, &outputs, &last_h, &last_cell, p[10], j->bytes[10],
                            LLTM_SEQUENCE_TRAINING, d, LLTM_CPU, 0) != LLTM_OK)
    return fail_call("lltm_sequence_forward");
  if (lltm_sequence_backward(&grad_outputs, NULL, &grad_last_cell, p[10], j->bytes[10], &inputs, &weights, &h0,
                             &d_inputs, &d_weights, &d_bias, &d_h0, &d_c0, 0, d, LLTM_CPU, 0) != LLTM_OK)
    return fail_call("lltm_sequence_backward");
  return 0;
}

/* Cross-entropy with reduction "none" (every row's loss), then its backward from all-ones row gradients. */
static int run_loss(Job* j) {
  const int64_t N = j->sizes[0], V = j->sizes[1], nv[2] = {N, V}, n[1] = {N};
  lltm_call call;
  memset(&call, 0, sizeof call);
  call.device_kind = LLTM_CPU;
  call.tensors[0] = stress_tensor(j->data[0], 2, nv, j->dtype);
  call.tensors[1] = stress_tensor(j->data[1], 1, n, LLTM_INT32);
  call.tensors[2] = stress_tensor(j->data[2], 1, n, j->dtype);
  call.given = 0x7u;
  call.scalars[0] = 0;    /* reduction: none */
  call.scalars[1] = -100; /* ignore_index */
  if (lltm_run(LLTM_OP_CROSS_ENTROPY, &call) != LLTM_OK) return fail_call("lltm_cross_entropy");
  void* ones = malloc((size_t)N * stress_element_bytes(j->dtype));
  for (int64_t r = 0; r < N; ++r) {
    if (j->dtype == LLTM_FLOAT32) ((float*)ones)[r] = 1.0f;
    else ((double*)ones)[r] = 1.0;
  }
  call.tensors[2] = stress_tensor(ones, 1, n, j->dtype);            /* grad_losses */
  call.tensors[4] = stress_tensor(j->data[3], 2, nv, j->dtype);     /* d_logits */
  call.given = 0x17u;
  const int32_t rc = lltm_run(LLTM_OP_CROSS_ENTROPY_BACKWARD, &call);
  free(ones);
  return rc == LLTM_OK ? 0 : fail_call("lltm_cross_entropy_backward");
}

static int run_job(Job* j) { return j->sequence ? run_sequence(j) : run_loss(j); }

static int same_outputs(const Job* a, const Job* b) {
  for (int i = a->first_output; i < a->buffers; ++i)
    if (memcmp(a->data[i], b->data[i], a->bytes[i]) != 0) return 0;
  return 1;
}

/* Job k of the kJobs: a dtype, then a sequence size or a loss size. */
static void job_of(Job* j, int k) {
  const int32_t dtype = k % 2 ? LLTM_FLOAT64 : LLTM_FLOAT32;
  const int which = k / 2;
  job_init(j, which < kSequences, which < kSequences ? which : which - kSequences, dtype, 1000u + (unsigned)k);
}

static Job expected[kJobs];
static int rounds = 100;
static volatile int failures = 0;

static void* worker(void* arg) {
  const int id = (int)(intptr_t)arg;
  Job mine[kJobs];
  for (int k = 0; k < kJobs; ++k) job_of(&mine[k], k);
  for (int r = 0; r < rounds; ++r) {
    const int k = (r * 5 + id * 3) % kJobs;
    if (run_job(&mine[k]) != 0 || !same_outputs(&mine[k], &expected[k])) {
      if (__atomic_fetch_add(&failures, 1, __ATOMIC_SEQ_CST) < 5)
        fprintf(stderr, "thread %d round %d: %s %s %lldx%lldx%lldx%lld differs from the call made alone\n", id, r,
                mine[k].sequence ? "sequence" : "cross-entropy", mine[k].dtype == LLTM_FLOAT64 ? "float64" : "float32",
                (long long)mine[k].sizes[0], (long long)mine[k].sizes[1], (long long)mine[k].sizes[2],
                (long long)mine[k].sizes[3]);
    }
  }
  for (int k = 0; k < kJobs; ++k) job_free(&mine[k]);
  return NULL;
}

int main(int argc, char** argv) {
  int threads;
  stress_begin(argc, argv, 100, &rounds, &threads);
  for (int k = 0; k < kJobs; ++k) {
    job_of(&expected[k], k);
    if (run_job(&expected[k]) != 0) return 1;
  }
  const double seconds = stress_run(threads, worker);
  for (int k = 0; k < kJobs; ++k) job_free(&expected[k]);
  const char* env = getenv("LLTM_NUM_THREADS");
  printf("sequence_stress: %d threads x %d sequence or cross-entropy calls (LLTM_NUM_THREADS=%s) in %.2f s: %d differ\n",
         threads, rounds, env ? env : "unset", seconds, failures);
  return failures == 0 ? 0 : 1;
}
