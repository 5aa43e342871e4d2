/*
 * abi_fuzz: every public C entry point of liblltm (the sequence calls
 * included), and every op of lltm_ops.def through lltm_run, fed valid calls with one argument spoiled (null pointers, ranks 0
 * and 5, sizes 0 / negative / near 2^62, negative strides and size x stride
 * products past 2^48, addresses at the end of the address space, mismatched
 * shapes, unknown dtypes, devices and flags, scalars and reserves out of
 * range, outputs overlapping other arguments), and
 * some left valid. Each case checks the status csrc/lltm.h documents, that
 * the message starts with the name of the entry point called, and that no
 * byte of any argument's memory changed (on success: no byte outside the
 * outputs' elements). Half the calls of the ops that have a typed entry point
 * go through lltm_run instead, where each tensor carries its own dtype (a
 * float32 call may mix in bfloat16 and float16 tensors, which the library
 * stages) and more can be spoiled: the given bits, one tensor's dtype, flags
 * an op does not take, a non-integer step; linear and its backward are
 * called through lltm_run only. Built with -DLLTM_C_TESTS=ON; CI runs it under
 * AddressSanitizer and UndefinedBehaviorSanitizer.
 *
 * usage: abi_fuzz [cases = 20000] [seed = 20261122]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lltm.h"

/* ---- deterministic randomness (splitmix64) ---- */

static uint64_t rng;

static uint64_t next_random(void) {
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) { return next_random() % n; }

#define PICK(array) ((array)[below(sizeof(array) / sizeof((array)[0]))])

/* ---- tensors with guard zones ---- */

enum { MAX_ARGS = 16, GUARD = 16 /* elements before and after each tensor's span */ };

static const double kOutputFill = 12345.0; /* outputs start as this sentinel */
static const double kInputFill = 0.5;      /* inputs hold this; they must never change */

typedef struct {
  const char* name;
  int output;              /* written by a successful call */
  int optional;            /* a NULL descriptor is allowed */
  int raw;                 /* a sequence reserve: passed as d.data, a plain pointer, not as a descriptor */
  int32_t dtype;           /* the element type of its block; lltm_run's descriptor carries it (d.dtype) */
  lltm_tensor d;           /* the descriptor (mutations change it) */
  const lltm_tensor* pass; /* what the call gets: &d, or NULL */
  unsigned char* block;    /* GUARD + span + GUARD elements */
  int64_t block_elems;
  lltm_tensor original;    /* the descriptor as built, for the success check */
} Arg;

/* The entry points with tensor arguments come first (up to F_LINEAR_BACKWARD, whose ops have no typed entry point). */
typedef enum {
  F_FORWARD, F_BACKWARD, F_BACKWARD_EX, F_COPY, F_FILL, F_AXPY, F_SGD, F_ADAM, F_SEQUENCE_FORWARD,
  F_SEQUENCE_BACKWARD, F_LINEAR, F_LINEAR_BACKWARD, F_SEQUENCE_RESERVE_BYTES, F_ALLOC, F_FREE, F_READ, F_WRITE, F_SYNCHRONIZE, F_ABI_CONSTANT,
  F_MEMORY_STAT, F_MEMORY_RESET_PEAK, F_ALLOC_PINNED, F_FREE_PINNED, F_COUNT
} Fn;

static const char* const kFnNames[F_COUNT] = {
    "lltm_forward",          "lltm_backward",          "lltm_backward_ex",
    "lltm_copy",             "lltm_fill",              "lltm_axpy",
    "lltm_sgd_step",         "lltm_adam_step",         "lltm_sequence_forward",
    "lltm_sequence_backward", "lltm_linear",            "lltm_linear_backward",
    "lltm_sequence_reserve_bytes", "lltm_alloc",
    "lltm_free",             "lltm_read",              "lltm_write",
    "lltm_synchronize",      "lltm_abi_constant",      "lltm_memory_stat",
    "lltm_memory_reset_peak", "lltm_alloc_pinned",    "lltm_free_pinned"};

typedef struct {
  Fn fn;
  int32_t dtype, kind, index, src_kind, src_index;
  int32_t fill_dtype; /* the dtype the blocks were filled in (mutations may spoil dtype) */
  int via_run;        /* called through lltm_run */
  int n;
  Arg a[MAX_ARGS];
  int momentum_buffer; /* index of sgd's buffer in a[], or -1 */
  int reserve;         /* index of a sequence call's reserve in a[], or -1 */
  uint64_t reserve_bytes;
  double lr, momentum, beta1, beta2, eps, value, alpha;
  int64_t step;
  double step_value;      /* lltm_run's step when not 0 (a non-integer) */
  uint32_t extra_given;   /* bits past the op's slots added to lltm_run's given */
  int removed_given;      /* a slot whose given bit lltm_run's call clears, or -1 */
  uint32_t flags;
} Call;

static int64_t element_size(int32_t dtype) {
  switch (dtype) {
    case LLTM_FLOAT64: return 8;
    case LLTM_FLOAT32: return 4;
    case LLTM_BFLOAT16:
    case LLTM_FLOAT16: return 2;
    default: return 1;
  }
}

/* The sentinels only have to read back as the same bytes: a half type keeps a float's top 16 bits. */
static void store(unsigned char* p, int32_t dtype, double v) {
  const float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  const uint16_t half = (uint16_t)(bits >> 16);
  switch (element_size(dtype)) {
    case 8: memcpy(p, &v, 8); break;
    case 4: memcpy(p, &f, 4); break;
    default: memcpy(p, &half, 2); break;
  }
}

static int holds(const unsigned char* p, int32_t dtype, double v) {
  unsigned char expected[8];
  store(expected, dtype, v);
  return memcmp(p, expected, (size_t)element_size(dtype)) == 0;
}

static int64_t last_offset(const lltm_tensor* t) {
  int64_t last = 0;
  for (int64_t d = 0; d < t->ndim; ++d) last += (t->sizes[d] - 1) * t->strides[d];
  return last;
}

/* Adds a tensor of `sizes` in a random layout: row-major, padded rows, a
 * larger inner stride, transposed (2-D), or (inputs) broadcast along a
 * dimension. Optimizer tensors are always row-major. */
static Arg* add_tensor(Call* c, const char* name, int output, int ndim, const int64_t* sizes, int contiguous) {
  Arg* a = &c->a[c->n++];
  memset(a, 0, sizeof *a);
  a->name = name;
  a->output = output;
  /* Through lltm_run a float32 call may mix in half types. */
  a->dtype = c->dtype;
  if (c->via_run && c->dtype == LLTM_FLOAT32 && below(3) == 0) a->dtype = below(2) ? LLTM_BFLOAT16 : LLTM_FLOAT16;
  a->d.ndim = ndim;
  a->d.dtype = a->dtype;
  for (int d = 0; d < ndim; ++d) a->d.sizes[d] = sizes[d];
  const int layout = contiguous ? 0 : (int)below(5);
  int64_t stride = layout == 2 ? 2 : 1;
  for (int d = ndim - 1; d >= 0; --d) {
    a->d.strides[d] = stride;
    stride = stride * sizes[d] + (layout == 1 ? (int64_t)below(3) : 0);
  }
  if (layout == 3 && ndim == 2) {
    a->d.strides[0] = 1;
    a->d.strides[1] = sizes[0];
  }
  if (layout == 4 && !output) a->d.strides[below((uint64_t)ndim)] = 0;
  const int64_t es = element_size(a->dtype);
  a->block_elems = last_offset(&a->d) + 1 + 2 * GUARD;
  a->block = malloc((size_t)(a->block_elems * es));
  if (a->block == NULL) {
    fprintf(stderr, "abi_fuzz: out of memory\n");
    exit(2);
  }
  for (int64_t i = 0; i < a->block_elems; ++i) store(a->block + i * es, a->dtype, output ? kOutputFill : kInputFill);
  a->d.data = a->block + GUARD * es;
  a->pass = &a->d;
  a->original = a->d;
  return a;
}

/* A sequence's reserve: a block of the call's float type (a plain pointer for
 * the typed entry points, a uint8 descriptor for lltm_run). */
static void add_reserve(Call* c, int output, const int64_t* elements) {
  const int32_t dtype = c->dtype;
  const int via_run = c->via_run;
  c->via_run = 0; /* a reserve is never a half type */
  Arg* a = add_tensor(c, "reserve", output, 1, elements, 1);
  c->via_run = via_run;
  a->raw = 1;
  a->dtype = dtype;
  a->d.dtype = LLTM_UINT8;
}

static void free_call(Call* c) {
  for (int i = 0; i < c->n; ++i) free(c->a[i].block);
}

static int64_t small(void) { return 1 + (int64_t)below(4); }

/* ---- valid calls ---- */

static int run_only(Fn fn) { return fn == F_LINEAR || fn == F_LINEAR_BACKWARD; }

static void build(Call* c, Fn fn) {
  memset(c, 0, sizeof *c);
  c->fn = fn;
  c->via_run = run_only(fn) || below(2);
  c->removed_given = -1;
  c->dtype = c->fill_dtype = below(2) ? LLTM_FLOAT64 : LLTM_FLOAT32;
  c->kind = LLTM_CPU;
  c->momentum_buffer = c->reserve = -1;
  const int64_t B = small(), F = small(), S = small(), K = S + F, T = small();
  const int64_t bs[] = {B, S}, bf[] = {B, F}, bk[] = {B, K}, bg[] = {B, 3 * S}, w[] = {3 * S, K}, g[] = {3 * S};
  const int64_t tbf[] = {T, B, F}, tbs[] = {T, B, S}, reserve[] = {T * B * 5 * S};
  int64_t any[LLTM_MAX_DIMS];
  const int ndim = 1 + (int)below(LLTM_MAX_DIMS);
  for (int d = 0; d < ndim; ++d) any[d] = small();
  switch (fn) {
    case F_FORWARD:
      add_tensor(c, "input", 0, 2, bf, 0);
      add_tensor(c, "weights", 0, 2, w, 0);
      add_tensor(c, "bias", 0, 1, g, 0);
      add_tensor(c, "old_h", 0, 2, bs, 0);
      add_tensor(c, "old_cell", 0, 2, bs, 0);
      add_tensor(c, "new_h", 1, 2, bs, 0);
      add_tensor(c, "new_cell", 1, 2, bs, 0);
      add_tensor(c, "input_gate", 1, 2, bs, 0);
      add_tensor(c, "output_gate", 1, 2, bs, 0);
      add_tensor(c, "candidate_cell", 1, 2, bs, 0);
      add_tensor(c, "X", 1, 2, bk, 0);
      add_tensor(c, "gate_weights", 1, 2, bg, 0);
      break;
    case F_BACKWARD:
    case F_BACKWARD_EX:
      add_tensor(c, "grad_h", 0, 2, bs, 0);
      add_tensor(c, "grad_cell", 0, 2, bs, 0);
      add_tensor(c, "new_cell", 0, 2, bs, 0);
      add_tensor(c, "input_gate", 0, 2, bs, 0);
      add_tensor(c, "output_gate", 0, 2, bs, 0);
      add_tensor(c, "candidate_cell", 0, 2, bs, 0);
      add_tensor(c, "X", 0, 2, bk, 0);
      add_tensor(c, "gate_weights", 0, 2, bg, 0);
      add_tensor(c, "weights", 0, 2, w, 0);
      add_tensor(c, "d_old_h", 1, 2, bs, 0);
      add_tensor(c, "d_input", 1, 2, bf, 0);
      add_tensor(c, "d_weights", 1, 2, w, 0);
      add_tensor(c, "d_bias", 1, 1, g, 0);
      add_tensor(c, "d_old_cell", 1, 2, bs, 0);
      c->flags = fn == F_BACKWARD_EX ? (below(2) ? LLTM_ACCUMULATE_PARAM_GRADS : 0) : 0;
      break;
    case F_COPY:
      add_tensor(c, "dst", 1, ndim, any, 0);
      add_tensor(c, "src", 0, ndim, any, 0);
      break;
    case F_FILL:
      add_tensor(c, "dst", 1, ndim, any, 0);
      c->value = 3.25;
      break;
    case F_AXPY:
      add_tensor(c, "y", 1, ndim, any, 0);
      add_tensor(c, "x", 0, ndim, any, 0);
      c->alpha = -2.0;
      break;
    case F_SGD:
      add_tensor(c, "param", 1, ndim, any, 1);
      add_tensor(c, "grad", 0, ndim, any, 1);
      c->lr = 0.1;
      c->momentum = below(2) ? 0.9 : 0.0;
      /* With momentum 0 the buffer may be NULL, or any descriptor (it is not read). */
      if (c->momentum != 0.0 || below(2)) {
        c->momentum_buffer = c->n;
        add_tensor(c, "momentum_buffer", 1, ndim, any, 1);
      }
      break;
    case F_ADAM:
      add_tensor(c, "param", 1, ndim, any, 1);
      add_tensor(c, "grad", 0, ndim, any, 1);
      add_tensor(c, "exp_avg", 1, ndim, any, 1);
      add_tensor(c, "exp_avg_sq", 1, ndim, any, 1);
      c->lr = 1e-3;
      c->beta1 = 0.9;
      c->beta2 = 0.999;
      c->eps = 1e-8;
      c->step = 1 + (int64_t)below(10);
      break;
    case F_SEQUENCE_FORWARD:
      add_tensor(c, "inputs", 0, 3, tbf, 0);
      add_tensor(c, "weights", 0, 2, w, 0);
      add_tensor(c, "bias", 0, 1, g, 0);
      add_tensor(c, "h0", 0, 2, bs, 0);
      add_tensor(c, "c0", 0, 2, bs, 0);
      add_tensor(c, "outputs", 1, 3, tbs, 0);
      add_tensor(c, "last_h", 1, 2, bs, 0);
      add_tensor(c, "last_cell", 1, 2, bs, 0);
      /* Inference keeps nothing (the reserve is then ignored); training writes the reserve. */
      if (below(2)) {
        c->flags = LLTM_SEQUENCE_TRAINING;
        c->reserve = c->n;
        add_reserve(c, 1, reserve);
        c->reserve_bytes = (uint64_t)(reserve[0] * element_size(c->dtype)) + below(3) * 8;
      }
      break;
    case F_SEQUENCE_BACKWARD:
      add_tensor(c, "grad_outputs", 0, 3, tbs, 0)->optional = 1;
      add_tensor(c, "grad_last_h", 0, 2, bs, 0)->optional = 1;
      add_tensor(c, "grad_last_cell", 0, 2, bs, 0)->optional = 1;
      c->reserve = c->n;
      add_reserve(c, 0, reserve);
      c->reserve_bytes = (uint64_t)(reserve[0] * element_size(c->dtype));
      add_tensor(c, "inputs", 0, 3, tbf, 0);
      add_tensor(c, "weights", 0, 2, w, 0);
      add_tensor(c, "h0", 0, 2, bs, 0);
      {
        /* d_inputs may be NULL: not computed. */
        Arg* d_inputs = add_tensor(c, "d_inputs", 1, 3, tbf, 0);
        d_inputs->optional = 1;
        if (below(4) == 0) d_inputs->pass = NULL;
      }
      add_tensor(c, "d_weights", 1, 2, w, 0);
      add_tensor(c, "d_bias", 1, 1, g, 0);
      add_tensor(c, "d_h0", 1, 2, bs, 0);
      add_tensor(c, "d_c0", 1, 2, bs, 0);
      c->flags = below(2) ? LLTM_ACCUMULATE_PARAM_GRADS : 0;
      break;
    case F_LINEAR: {
      const int64_t N = small(), K = small(), M = small();
      const int64_t nk[] = {N, K}, mk[] = {M, K}, m[] = {M}, nm[] = {N, M};
      add_tensor(c, "x", 0, 2, nk, 0);
      add_tensor(c, "weight", 0, 2, mk, 0);
      Arg* bias = add_tensor(c, "bias", 0, 1, m, 0);
      bias->optional = 1;
      if (below(3) == 0) bias->pass = NULL;
      add_tensor(c, "y", 1, 2, nm, 0);
      break;
    }
    case F_LINEAR_BACKWARD: {
      const int64_t N = small(), K = small(), M = small();
      const int64_t nk[] = {N, K}, mk[] = {M, K}, m[] = {M}, nm[] = {N, M};
      add_tensor(c, "grad_y", 0, 2, nm, 0);
      add_tensor(c, "x", 0, 2, nk, 0);
      add_tensor(c, "weight", 0, 2, mk, 0);
      const char* names[] = {"d_x", "d_weight", "d_bias"};
      for (int i = 0; i < 3; ++i) {
        Arg* out = add_tensor(c, names[i], 1, i == 2 ? 1 : 2, i == 0 ? nk : i == 1 ? mk : m, 0);
        out->optional = 1;
        if (below(4) == 0) out->pass = NULL;
      }
      c->flags = below(2) ? LLTM_ACCUMULATE_PARAM_GRADS : 0;
      break;
    }
    default:
      break;
  }
}

static const lltm_tensor* arg(const Call* c, int i) { return i < c->n ? c->a[i].pass : NULL; }

/* The op of each function, for lltm_run. */
static const int32_t kOps[F_SEQUENCE_RESERVE_BYTES] = {
    LLTM_OP_FORWARD, LLTM_OP_BACKWARD, LLTM_OP_BACKWARD, LLTM_OP_COPY, LLTM_OP_FILL, LLTM_OP_AXPY,
    LLTM_OP_SGD_STEP, LLTM_OP_ADAM_STEP, LLTM_OP_SEQUENCE_FORWARD, LLTM_OP_SEQUENCE_BACKWARD, LLTM_OP_LINEAR,
    LLTM_OP_LINEAR_BACKWARD};

/* The table of lltm_ops.def as a list: -(code + 1) where an op starts, 0 for each of its slots. */
static const int32_t kTable[] = {
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry, sizes, flags) -((code) + 1),
#define LLTM_SLOT(name, role, shape) 0,
#define LLTM_SCALAR(name, kind, lo, hi)
#include "lltm_ops.def"
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR
};

/* How many tensor slots op `code` has, counted from lltm_ops.def. */
static int slot_count(int32_t code) {
  int n = 0, in_op = 0;
  for (size_t i = 0; i < sizeof kTable / sizeof kTable[0]; ++i) {
    if (kTable[i] < 0) {
      if (in_op) break;
      in_op = kTable[i] == -(code + 1);
    } else if (in_op) {
      ++n;
    }
  }
  return n;
}

/* The name an lltm_run call's messages start with: its op's entry point. */
static const char* op_entry(Fn fn) { return kFnNames[fn == F_BACKWARD_EX ? F_BACKWARD : fn]; }

/* The call through lltm_run: tensors in slot order (a[] is built in that order). */
static int32_t invoke_run(const Call* c) {
  static lltm_call call; /* static: 1.4 kB, and its unused tensors stay zero */
  memset(&call, 0, sizeof call);
  call.device_kind = c->kind;
  call.device_index = c->index;
  call.src_device_kind = c->fn == F_COPY ? c->src_kind : c->kind;
  call.src_device_index = c->fn == F_COPY ? c->src_index : c->index;
  call.flags = c->flags;
  for (int i = 0; i < c->n; ++i) {
    const Arg* a = &c->a[i];
    if (i == c->reserve) {
      call.tensors[i] = (lltm_tensor){a->d.data, 1, {(int64_t)(c->reserve_bytes > INT64_MAX ? INT64_MAX : c->reserve_bytes)}, {1}, a->d.dtype};
      call.given |= 1u << i;
      continue;
    }
    if (a->pass == NULL) continue;
    call.tensors[i] = *a->pass;
    call.given |= 1u << i;
  }
  call.given |= c->extra_given;
  if (c->removed_given >= 0) call.given &= ~(1u << c->removed_given);
  switch (c->fn) {
    case F_FILL: call.scalars[0] = c->value; break;
    case F_AXPY: call.scalars[0] = c->alpha; break;
    case F_SGD: call.scalars[0] = c->lr, call.scalars[1] = c->momentum; break;
    case F_ADAM:
      call.scalars[0] = c->lr, call.scalars[1] = c->beta1, call.scalars[2] = c->beta2, call.scalars[3] = c->eps;
      call.scalars[4] = c->step_value != 0.0 ? c->step_value : (double)c->step;
      break;
    default: break;
  }
  return lltm_run(kOps[c->fn], &call);
}

static uint64_t run_cases, half_cases; /* calls through lltm_run, and those with a half-type tensor */

static int32_t invoke(Call* c) {
  const Call* k = c;
  if (c->via_run) {
    ++run_cases;
    for (int i = 0; i < c->n; ++i)
      if (element_size(c->a[i].dtype) == 2) {
        ++half_cases;
        break;
      }
    return invoke_run(c);
  }
#define A(i) arg(k, i)
  switch (c->fn) {
    case F_FORWARD:
      return lltm_forward(A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10), A(11), c->dtype, c->kind,
                          c->index);
    case F_BACKWARD:
      return lltm_backward(A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10), A(11), A(12), A(13),
                           c->dtype, c->kind, c->index);
    case F_BACKWARD_EX:
      return lltm_backward_ex(A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10), A(11), A(12), A(13),
                              c->flags, c->dtype, c->kind, c->index);
    case F_COPY:
      return lltm_copy(A(0), c->kind, c->index, A(1), c->src_kind, c->src_index, c->dtype);
    case F_FILL:
      return lltm_fill(A(0), c->value, c->dtype, c->kind, c->index);
    case F_AXPY:
      return lltm_axpy(A(0), c->alpha, A(1), c->dtype, c->kind, c->index);
    case F_SGD:
      return lltm_sgd_step(A(0), A(1), c->momentum_buffer < 0 ? NULL : A(c->momentum_buffer), c->lr, c->momentum,
                           c->dtype, c->kind, c->index);
    case F_ADAM:
      return lltm_adam_step(A(0), A(1), A(2), A(3), c->lr, c->beta1, c->beta2, c->eps, c->step, c->dtype, c->kind,
                            c->index);
    case F_SEQUENCE_FORWARD:
      return lltm_sequence_forward(A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7),
                                   c->reserve < 0 ? NULL : c->a[c->reserve].d.data, c->reserve_bytes, c->flags,
                                   c->dtype, c->kind, c->index);
    case F_SEQUENCE_BACKWARD:
      return lltm_sequence_backward(A(0), A(1), A(2), c->a[c->reserve].d.data, c->reserve_bytes, A(4), A(5), A(6),
                                    A(7), A(8), A(9), A(10), A(11), c->flags, c->dtype, c->kind, c->index);
    default:
      return -1;
  }
#undef A
}

/* ---- mutations ---- */

typedef enum {
  M_NONE, M_NULL_DESCRIPTOR, M_NULL_DATA, M_NDIM, M_SIZE, M_STRIDE, M_SPAN_OVERFLOW, M_ADDRESS_WRAP,
  M_OUTPUT_STRIDE_0, M_MISMATCH, M_RANK, M_NONCONTIGUOUS, M_DTYPE, M_KIND, M_INDEX, M_NO_CUDA, M_FLAGS, M_SCALAR,
  M_OVERLAP, M_ALIASED_INPUTS, M_GIVEN, M_COUNT
} Mutation;

static const char* const kMutationNames[M_COUNT] = {
    "valid",         "null descriptor", "null data",  "bad ndim",         "bad size",       "bad stride",
    "span overflow", "address wrap",    "output stride 0", "mismatched shape", "other rank", "non-contiguous",
    "unknown dtype", "unknown device",  "bad index",  "no CUDA backend",  "unknown flags",  "scalar out of range",
    "overlap",       "aliased inputs", "given bits"};

static int has_cuda;

static int typed(Fn fn) { return fn <= F_SEQUENCE_BACKWARD; }
static int is_sequence(Fn fn) { return fn == F_SEQUENCE_FORWARD || fn == F_SEQUENCE_BACKWARD; }
static int is_optimizer(Fn fn) { return fn == F_SGD || fn == F_ADAM; }
static int is_lltm(Fn fn) { return fn == F_FORWARD || fn == F_BACKWARD || fn == F_BACKWARD_EX; }

/* The tensors the call checks (sgd's buffer only with momentum). */
static int checked(const Call* c, int i) {
  if (c->a[i].pass == NULL && !c->a[i].raw) return 0;
  return c->via_run || !(c->fn == F_SGD && i == c->momentum_buffer && c->momentum == 0.0);
}

static int random_checked_arg(const Call* c) {
  for (;;) {
    const int i = (int)below((uint64_t)c->n);
    if (checked(c, i)) return i;
  }
}

/* A checked argument with a descriptor (not a reserve), for the descriptor mutations. */
static int random_descriptor(const Call* c) {
  for (;;) {
    const int i = random_checked_arg(c);
    if (!c->a[i].raw) return i;
  }
}

/* What the mutation expects besides the status: names the message must contain. */
typedef struct {
  int32_t status;
  const char* names[2];
} Expectation;

/* Applies `m` if it fits the call; returns 0 when it does not. */
static int mutate(Call* c, Mutation m, Expectation* e) {
  static const int64_t kBadNdim[] = {0, 5, -1, 64, INT64_MAX, INT64_MIN};
  static const int64_t kBadSize[] = {0, -1, -(INT64_C(1) << 62), INT64_C(1) << 62, (INT64_C(1) << 62) + 1,
                                     (INT64_C(1) << 48) + 1, INT64_MAX, INT64_MIN};
  static const int64_t kBadStride[] = {-1, -(INT64_C(1) << 62), (INT64_C(1) << 48) + 1, INT64_C(1) << 62, INT64_MAX,
                                       INT64_MIN};
  static const int32_t kBadDtype[] = {2, -1, 1000, INT32_MIN, INT32_MAX};
  static const int32_t kBadKind[] = {2, -1, 100, INT32_MIN};
  static const int32_t kBadIndex[] = {1, -1, INT32_MAX, INT32_MIN};
  const int64_t limit = INT64_C(1) << 48;
  e->status = LLTM_OK;
  e->names[0] = e->names[1] = NULL;
  const Fn fn = c->fn;
  switch (m) {
    case M_NONE:
      return 1;
    case M_NULL_DESCRIPTOR: {
      /* An optional gradient may be NULL (zeros). */
      const int i = random_descriptor(c);
      Arg* a = &c->a[i];
      a->pass = NULL;
      e->status = a->optional ? LLTM_OK : LLTM_ERR_NULL_POINTER;
      /* lltm_run reads SGD's buffer only with momentum, as the typed call does; it then checks it. */
      if (c->via_run && fn == F_SGD && i == c->momentum_buffer && c->momentum == 0.0) e->status = LLTM_OK;
      return 1;
    }
    case M_NULL_DATA: {
      c->a[random_checked_arg(c)].d.data = NULL;
      e->status = LLTM_ERR_NULL_POINTER;
      return 1;
    }
    case M_NDIM: {
      c->a[random_descriptor(c)].d.ndim = PICK(kBadNdim);
      e->status = LLTM_ERR_INVALID_SHAPE;
      return 1;
    }
    case M_SIZE: {
      Arg* a = &c->a[random_descriptor(c)];
      a->d.sizes[below((uint64_t)a->d.ndim)] = PICK(kBadSize);
      e->status = LLTM_ERR_INVALID_SHAPE;
      return 1;
    }
    case M_STRIDE: {
      Arg* a = &c->a[random_descriptor(c)];
      a->d.strides[below((uint64_t)a->d.ndim)] = PICK(kBadStride);
      e->status = LLTM_ERR_INVALID_SHAPE;
      return 1;
    }
    case M_SPAN_OVERFLOW: {
      /* size and stride each within 2^48, their product (size - 1) x stride at least 2^48 (up to 2^96). */
      Arg* a = &c->a[random_descriptor(c)];
      const int64_t d = (int64_t)below((uint64_t)a->d.ndim);
      const int64_t size = 2 + (int64_t)below((uint64_t)limit - 1);
      const int64_t least = (limit + size - 2) / (size - 1);
      a->d.sizes[d] = size;
      a->d.strides[d] = least + (int64_t)below((uint64_t)(limit - least + 1));
      e->status = LLTM_ERR_INVALID_SHAPE;
      return 1;
    }
    case M_ADDRESS_WRAP: {
      /* A reserve past the end is an argument error; a descriptor's, a shape error. */
      Arg* a = &c->a[random_checked_arg(c)];
      a->d.data = (void*)(UINTPTR_MAX - below(8));
      e->status = a->raw ? LLTM_ERR_INVALID_ARGUMENT : LLTM_ERR_INVALID_SHAPE;
      return 1;
    }
    case M_OUTPUT_STRIDE_0: {
      const int i = random_descriptor(c);
      Arg* a = &c->a[i];
      if (!a->output) return 0;
      for (int64_t d = 0; d < a->d.ndim; ++d)
        if (a->d.sizes[d] > 1) {
          a->d.strides[d] = 0;
          e->status = LLTM_ERR_INVALID_SHAPE;
          return 1;
        }
      return 0;
    }
    case M_MISMATCH: {
      if (fn == F_FILL) return 0;
      const int i = random_descriptor(c);
      if (is_optimizer(fn) && i == 0) return 0; /* param sets the sizes the others must match */
      Arg* a = &c->a[i];
      a->d.sizes[below((uint64_t)a->d.ndim)] += 1 + (int64_t)below(3);
      e->status = LLTM_ERR_SHAPE_MISMATCH;
      return 1;
    }
    case M_RANK: {
      if (fn == F_FILL) return 0;
      const int i = random_descriptor(c);
      if (is_optimizer(fn) && i == 0) return 0;
      Arg* a = &c->a[i];
      if (a->d.ndim < LLTM_MAX_DIMS && (a->d.ndim == 1 || below(2))) {
        a->d.sizes[a->d.ndim] = 2;
        a->d.strides[a->d.ndim] = 1;
        a->d.ndim += 1;
      } else {
        a->d.ndim -= 1;
        if (a->d.ndim == 0) return 0;
      }
      e->status = LLTM_ERR_SHAPE_MISMATCH;
      return 1;
    }
    case M_NONCONTIGUOUS: {
      if (!is_optimizer(fn)) return 0;
      Arg* a = &c->a[random_descriptor(c)];
      for (int64_t d = a->d.ndim - 1; d >= 0; --d)
        if (a->d.sizes[d] > 1) {
          a->d.strides[d] *= 2;
          e->status = LLTM_ERR_INVALID_SHAPE;
          return 1;
        }
      return 0;
    }
    case M_DTYPE: {
      if (!c->via_run) {
        if (!typed(fn)) return 0;
        c->dtype = PICK(kBadDtype);
        e->status = LLTM_ERR_INVALID_DTYPE;
        return 1;
      }
      /* One descriptor's dtype: unknown, a float type that cannot join the
       * others (float64 beside float32, or the reverse), or a float type for the
       * reserve and uint8 for a float tensor. A float type that could join is
       * never chosen: it would change the element size of a valid call. */
      static const int64_t kUnknown[] = {LLTM_DTYPE_END, -1, 1000, INT64_MAX, INT64_MIN};
      const int i = random_checked_arg(c);
      Arg* a = &c->a[i];
      int floats = 0;
      for (int k = 0; k < c->n; ++k) floats += checked(c, k) && !c->a[k].raw;
      switch (below(3)) {
        case 0: a->d.dtype = PICK(kUnknown); break;
        case 1:
          if (a->raw || floats < 2 || fn == F_COPY) return 0; /* copy converts between any float types */
          a->d.dtype = c->dtype == LLTM_FLOAT64 ? (below(2) ? LLTM_FLOAT32 : LLTM_BFLOAT16) : LLTM_FLOAT64;
          break;
        default: a->d.dtype = a->raw ? LLTM_FLOAT32 : LLTM_UINT8; break;
      }
      e->status = LLTM_ERR_INVALID_DTYPE;
      if (!(c->a[i].d.dtype == LLTM_FLOAT64 || c->a[i].d.dtype == LLTM_FLOAT32 || c->a[i].d.dtype == LLTM_BFLOAT16))
        e->names[0] = a->name; /* a mix may be reported at the other tensor */
      return 1;
    }
    case M_KIND:
      if (fn == F_COPY && below(2))
        c->src_kind = PICK(kBadKind);
      else
        c->kind = PICK(kBadKind);
      e->status = LLTM_ERR_INVALID_DEVICE;
      return 1;
    case M_INDEX:
      if (fn == F_COPY && below(2))
        c->src_index = PICK(kBadIndex);
      else
        c->index = PICK(kBadIndex);
      e->status = LLTM_ERR_INVALID_DEVICE;
      return 1;
    case M_NO_CUDA:
      /* Host memory passed as device memory is only safe to try where nothing would run it. */
      if (has_cuda) return 0;
      if (fn == F_COPY && below(2))
        c->src_kind = LLTM_CUDA;
      else
        c->kind = LLTM_CUDA;
      e->status = LLTM_ERR_BACKEND_UNAVAILABLE;
      return 1;
    case M_FLAGS:
      /* Through lltm_run every op's flags can be spoiled; ops without flags take none. */
      if (!c->via_run && fn != F_BACKWARD_EX && !is_sequence(fn)) return 0;
      /* Bit 0 is each call's one flag (LLTM_ACCUMULATE_PARAM_GRADS, LLTM_SEQUENCE_TRAINING); it stays as built. */
      {
        const uint32_t built = c->flags & 1u;
        c->flags = (uint32_t)(next_random() | 2u) & ~1u;
        if (fn == F_SEQUENCE_FORWARD) c->flags |= built;
        else if (fn == F_BACKWARD_EX || fn == F_SEQUENCE_BACKWARD || fn == F_LINEAR_BACKWARD) c->flags |= built | (below(2) ? 1u : 0u);
      }
      e->status = LLTM_ERR_INVALID_ARGUMENT;
      return 1;
    case M_SCALAR: {
      static const double kBadRate[] = {-1.0, NAN, INFINITY, -INFINITY, 1e31};
      static const double kBadFraction[] = {1.0, -0.1, NAN, 2.0, INFINITY};
      static const double kBadEps[] = {-1.0, NAN, INFINITY};
      static const int64_t kBadStep[] = {0, -1, INT64_MIN};
      if (is_sequence(fn)) {
        /* A reserve smaller than the sizes need. */
        if (c->reserve < 0) return 0;
        const uint64_t need = (uint64_t)(c->a[c->reserve].d.sizes[0] * element_size(c->dtype));
        c->reserve_bytes = below(need);
      } else if (fn == F_SGD) {
        if (below(2))
          c->lr = PICK(kBadRate);
        else
          c->momentum = PICK(kBadFraction);
      } else if (fn == F_ADAM) {
        switch (below(5)) {
          case 0: c->lr = PICK(kBadRate); break;
          case 1: c->beta1 = PICK(kBadFraction); break;
          case 2: c->beta2 = PICK(kBadFraction); break;
          case 3: c->eps = PICK(kBadEps); break;
          default:
            if (c->via_run && below(2))
              c->step_value = 1.5 + (double)below(5);
            else
              c->step = PICK(kBadStep);
            break;
        }
      } else {
        return 0;
      }
      e->status = LLTM_ERR_INVALID_ARGUMENT;
      return 1;
    }
    case M_OVERLAP: {
      /* An output moved into another checked argument's span. */
      const int o = random_checked_arg(c);
      const int t = random_checked_arg(c);
      if (!c->a[o].output || o == t) return 0;
      const int64_t span = last_offset(&c->a[t].d) + 1;
      /* copy and axpy accept the very same view; start past it. */
      const int64_t first = (fn == F_COPY || fn == F_AXPY) ? 1 : 0;
      if (span <= first) return 0;
      const int64_t k = first + (int64_t)below((uint64_t)(span - first));
      c->a[o].d.data = (unsigned char*)c->a[t].d.data + k * element_size(c->a[t].dtype);
      e->status = LLTM_ERR_INVALID_ARGUMENT;
      e->names[0] = c->a[o].name;
      /* Only the moved output is sure to be named: its new span may reach a third argument first. */
      return 1;
    }
    case M_ALIASED_INPUTS: {
      /* Two inputs of one shape in the same memory: allowed. */
      if (!is_lltm(fn)) return 0;
      const int first = fn == F_FORWARD ? 3 : (int)below(6), second = fn == F_FORWARD ? 4 : (int)below(6);
      if (first == second) return 0;
      c->a[second].d = c->a[first].d;
      c->a[second].original = c->a[second].d;
      return 1;
    }
    case M_GIVEN: {
      /* lltm_run only: a bit past the op's slots, or a present slot's bit cleared. */
      if (!c->via_run) return 0;
      if (below(2)) {
        const int slots = slot_count(kOps[fn]);
        c->extra_given = 1u << (slots + (int)below((uint64_t)(32 - slots)));
        e->status = LLTM_ERR_INVALID_ARGUMENT;
        return 1;
      }
      const int i = (int)below((uint64_t)c->n);
      if (c->a[i].pass == NULL && !c->a[i].raw) return 0;
      c->removed_given = i;
      const int needed = !c->a[i].optional && !(fn == F_SGD && i == c->momentum_buffer && c->momentum == 0.0);
      e->status = needed ? LLTM_ERR_NULL_POINTER : LLTM_OK;
      if (needed) e->names[0] = c->a[i].name;
      return 1;
    }
    default:
      return 0;
  }
}

/* ---- checks ---- */

static long failures;
static uint64_t case_seed;

static void report(const Call* c, Mutation m, const char* what) {
  fprintf(stderr, "abi_fuzz: case seed %llu: %s, %s (dtype %d): %s\n", (unsigned long long)case_seed,
          kFnNames[c->fn], kMutationNames[m], c->dtype, what);
  if (++failures >= 20) exit(1);
}

static int names_entry_point(const char* message, const char* fn) {
  const size_t n = strlen(fn);
  return strncmp(message, fn, n) == 0 && (message[n] == ':' || message[n] == ' ');
}

static void check_status(const Call* c, Mutation m, const Expectation* e, int32_t status) {
  const char* message = lltm_last_error();
  char what[512];
  if (status != e->status) {
    snprintf(what, sizeof what, "status %d, expected %d; message: %s", status, e->status, message);
    report(c, m, what);
    return;
  }
  if (status == LLTM_OK) return;
  if (!names_entry_point(message, c->via_run && c->fn < F_SEQUENCE_RESERVE_BYTES ? op_entry(c->fn) : kFnNames[c->fn])) {
    snprintf(what, sizeof what, "the message does not start with the entry point's name: %s", message);
    report(c, m, what);
  }
  for (int i = 0; i < 2; ++i) {
    if (e->names[i] == NULL) continue;
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", e->names[i]);
    if (strstr(message, quoted) == NULL) {
      snprintf(what, sizeof what, "the message does not name %s: %s", quoted, message);
      report(c, m, what);
    }
  }
}

/* Marks the elements of a view, as offsets from the block's start. */
static void mark_view(const lltm_tensor* t, unsigned char* mask) {
  int64_t sizes[LLTM_MAX_DIMS] = {1, 1, 1, 1}, strides[LLTM_MAX_DIMS] = {0, 0, 0, 0};
  const int64_t pad = LLTM_MAX_DIMS - t->ndim;
  for (int64_t d = 0; d < t->ndim; ++d) {
    sizes[pad + d] = t->sizes[d];
    strides[pad + d] = t->strides[d];
  }
  for (int64_t a = 0; a < sizes[0]; ++a)
    for (int64_t b = 0; b < sizes[1]; ++b)
      for (int64_t i = 0; i < sizes[2]; ++i)
        for (int64_t j = 0; j < sizes[3]; ++j)
          mask[GUARD + a * strides[0] + b * strides[1] + i * strides[2] + j * strides[3]] = 1;
}

/* After a failure nothing changed; after a success only the outputs' own elements did. */
static void check_memory(const Call* c, Mutation m, int32_t status) {
  for (int i = 0; i < c->n; ++i) {
    const Arg* a = &c->a[i];
    const int32_t dtype = a->dtype;
    const int64_t es = element_size(dtype);
    unsigned char* mask = calloc((size_t)a->block_elems, 1);
    if (status == LLTM_OK && a->output && checked(c, i) && i != c->removed_given) mark_view(&a->original, mask);
    for (int64_t k = 0; k < a->block_elems; ++k) {
      if (mask[k] || holds(a->block + k * es, dtype, a->output ? kOutputFill : kInputFill)) continue;
      char what[256];
      snprintf(what, sizeof what, "'%s' changed at element %lld of its block (status %d)", a->name,
               (long long)(k - GUARD), status);
      report(c, m, what);
      break;
    }
    free(mask);
  }
}

/* ---- the untyped entry points ---- */

static void fuzz_alloc(uint64_t* cases) {
  static const uint64_t kTooMany[] = {UINT64_MAX, UINT64_MAX - 62, UINT64_MAX - 63, (UINT64_C(1) << 63) + 1,
                                      (UINT64_C(1) << 63) + 4096};
  static const uint64_t kMore[] = {UINT64_C(1) << 63, UINT64_C(1) << 62, UINT64_C(1) << 60};
  const Call c = {.fn = F_ALLOC};
  void* out = (void*)(uintptr_t)0x1234;
  uint64_t bytes = 1 + below(4096);
  int32_t kind = LLTM_CPU, index = 0, expected = LLTM_OK, null_out = 0;
  Mutation m = M_NONE;
  switch (below(7)) {
    case 0: bytes = 0; expected = LLTM_ERR_INVALID_SHAPE; m = M_SIZE; break;
    case 1: bytes = PICK(kTooMany); expected = LLTM_ERR_INVALID_SHAPE; m = M_SIZE; break;
    case 2: bytes = PICK(kMore); expected = LLTM_ERR_OUT_OF_MEMORY; m = M_SIZE; break;
    case 3: null_out = 1; expected = LLTM_ERR_NULL_POINTER; m = M_NULL_DATA; break;
    case 4: kind = below(2) ? 2 : -1; expected = LLTM_ERR_INVALID_DEVICE; m = M_KIND; break;
    case 5: index = 1; expected = LLTM_ERR_INVALID_DEVICE; m = M_INDEX; break;
    default: break;
  }
  const int32_t status = lltm_alloc(bytes, kind, index, null_out ? NULL : &out);
  const Expectation e = {expected, {NULL, NULL}};
  check_status(&c, m, &e, status);
  if (status == LLTM_OK) {
    if (out == NULL || (uintptr_t)out % 64 != 0) report(&c, m, "a successful allocation is NULL or not 64-byte aligned");
    if (out != NULL) {
      memset(out, 0xAB, (size_t)bytes); /* the sanitizer checks the block is that large */
      const int32_t freed = lltm_free(out, LLTM_CPU, 0);
      if (freed != LLTM_OK) report(&c, m, "lltm_free of a fresh block failed");
    }
  } else if (!null_out && out != NULL) {
    report(&c, m, "*out is not NULL after a failure");
  }
  ++*cases;
}

static void fuzz_free(uint64_t* cases) {
  const Call c = {.fn = F_FREE};
  int dummy;
  void* data = below(4) ? &dummy : NULL;
  int32_t kind = LLTM_CPU, index = 0;
  Mutation m = below(2) ? M_KIND : M_INDEX;
  if (m == M_KIND)
    kind = below(2) ? 7 : -3;
  else
    index = 2;
  /* NULL is always accepted (like free), whatever the device. */
  const Expectation e = {data == NULL ? LLTM_OK : LLTM_ERR_INVALID_DEVICE, {NULL, NULL}};
  check_status(&c, data == NULL ? M_NONE : m, &e, lltm_free(data, kind, index));
  ++*cases;
}

/* Pinned host memory: its checks come before the backend's, and without a
 * CUDA backend every other call is refused by name; with one, a fresh block
 * is host memory that lltm_free_pinned takes back. */
static void fuzz_alloc_pinned(uint64_t* cases) {
  static const uint64_t kTooMany[] = {UINT64_MAX, (UINT64_C(1) << 63) + 1};
  const Call c = {.fn = F_ALLOC_PINNED};
  void* out = (void*)(uintptr_t)0x1234;
  uint64_t bytes = 1 + below(1 << 16);
  int32_t expected = has_cuda ? LLTM_OK : LLTM_ERR_BACKEND_UNAVAILABLE;
  int null_out = 0;
  Mutation m = has_cuda ? M_NONE : M_NO_CUDA;
  switch (below(5)) {
    case 0: bytes = 0; expected = LLTM_ERR_INVALID_SHAPE; m = M_SIZE; break;
    case 1: bytes = PICK(kTooMany); expected = LLTM_ERR_INVALID_SHAPE; m = M_SIZE; break;
    case 2: null_out = 1; expected = LLTM_ERR_NULL_POINTER; m = M_NULL_DATA; break;
    default: break;
  }
  const int32_t status = lltm_alloc_pinned(bytes, null_out ? NULL : &out);
  const Expectation e = {expected, {NULL, null_out ? "out" : NULL}};
  check_status(&c, m, &e, status);
  if (status == LLTM_OK) {
    if (out == NULL) report(&c, m, "a successful pinned allocation is NULL");
    if (out != NULL) {
      memset(out, 0xAB, (size_t)bytes);
      if (lltm_free_pinned(out) != LLTM_OK) report(&c, m, "lltm_free_pinned of a fresh block failed");
    }
  } else if (!null_out && out != NULL) {
    report(&c, m, "*out is not NULL after a failure");
  }
  ++*cases;
}

/* NULL is always taken back (like free); without a CUDA backend any other pointer is refused by name. */
static void fuzz_free_pinned(uint64_t* cases) {
  const Call c = {.fn = F_FREE_PINNED};
  int dummy;
  void* data = below(2) && !has_cuda ? (void*)&dummy : NULL;
  const Expectation e = {data == NULL ? LLTM_OK : LLTM_ERR_BACKEND_UNAVAILABLE, {NULL, NULL}};
  check_status(&c, data == NULL ? M_NONE : M_NO_CUDA, &e, lltm_free_pinned(data));
  ++*cases;
}

static void fuzz_transfer(uint64_t* cases, Fn fn) {
  const Call c = {.fn = fn};
  unsigned char from[64], to[64];
  for (int i = 0; i < 64; ++i) {
    from[i] = (unsigned char)i;
    to[i] = 0xEE;
  }
  void* dst = to;
  const void* src = from;
  uint64_t bytes = below(65);
  int32_t kind = LLTM_CPU, index = 0, expected = LLTM_OK;
  Mutation m = M_NONE;
  switch (below(7)) {
    case 0: dst = NULL; expected = LLTM_ERR_NULL_POINTER; m = M_NULL_DATA; break;
    case 1: src = NULL; expected = LLTM_ERR_NULL_POINTER; m = M_NULL_DATA; break;
    case 2: bytes = (UINT64_C(1) << 63) + below(1000) + 1; expected = LLTM_ERR_INVALID_SHAPE; m = M_SIZE; break;
    case 3: src = (const void*)(UINTPTR_MAX - below(32)); bytes = 64; expected = LLTM_ERR_INVALID_SHAPE; m = M_ADDRESS_WRAP; break;
    case 4: kind = 5; expected = LLTM_ERR_INVALID_DEVICE; m = M_KIND; break;
    case 5:
      if (has_cuda) break;
      kind = LLTM_CUDA; expected = LLTM_ERR_BACKEND_UNAVAILABLE; m = M_NO_CUDA; break;
    default: break;
  }
  const int32_t status = fn == F_READ ? lltm_read(dst, src, bytes, kind, index) : lltm_write(dst, src, bytes, kind, index);
  const Expectation e = {expected, {NULL, NULL}};
  check_status(&c, m, &e, status);
  const uint64_t copied = status == LLTM_OK ? bytes : 0;
  for (uint64_t i = 0; i < 64; ++i)
    if (to[i] != (i < copied ? from[i] : 0xEE)) {
      report(&c, m, "the destination holds other bytes than the call was to write");
      break;
    }
  ++*cases;
}

static void fuzz_synchronize(uint64_t* cases) {
  const Call c = {.fn = F_SYNCHRONIZE};
  int32_t kind = LLTM_CPU, index = 0, expected = LLTM_OK;
  Mutation m = M_NONE;
  switch (below(4)) {
    case 0: kind = -1; expected = LLTM_ERR_INVALID_DEVICE; m = M_KIND; break;
    case 1: index = 3; expected = LLTM_ERR_INVALID_DEVICE; m = M_INDEX; break;
    case 2:
      if (has_cuda) break;
      kind = LLTM_CUDA; expected = LLTM_ERR_BACKEND_UNAVAILABLE; m = M_NO_CUDA; break;
    default: break;
  }
  const Expectation e = {expected, {NULL, NULL}};
  check_status(&c, m, &e, lltm_synchronize(kind, index));
  ++*cases;
}

static void fuzz_memory_stat(uint64_t* cases) {
  static const int32_t kBadStat[] = {-1, LLTM_MEMORY_RESERVED + 1, INT32_MAX, INT32_MIN};
  const Call c = {.fn = F_MEMORY_STAT};
  int32_t stat = (int32_t)below(LLTM_MEMORY_RESERVED + 1), kind = LLTM_CPU, index = 0, expected = LLTM_OK;
  int null_out = 0;
  Mutation m = M_NONE;
  switch (below(6)) {
    case 0: null_out = 1; expected = LLTM_ERR_NULL_POINTER; m = M_NULL_DATA; break;
    case 1: stat = PICK(kBadStat); expected = LLTM_ERR_INVALID_ARGUMENT; m = M_SCALAR; break;
    case 2: kind = -1; expected = LLTM_ERR_INVALID_DEVICE; m = M_KIND; break;
    case 3: index = 3; expected = LLTM_ERR_INVALID_DEVICE; m = M_INDEX; break;
    case 4:
      if (has_cuda) break;
      kind = LLTM_CUDA; expected = LLTM_ERR_BACKEND_UNAVAILABLE; m = M_NO_CUDA; break;
    default: break;
  }
  uint64_t value = 77;
  const Expectation e = {expected, {NULL, NULL}};
  check_status(&c, m, &e, lltm_memory_stat(stat, kind, index, null_out ? NULL : &value));
  if (!null_out && expected != LLTM_OK && value != 0) report(&c, m, "*out is not 0 after a failure");
  ++*cases;
}

static void fuzz_memory_reset_peak(uint64_t* cases) {
  const Call c = {.fn = F_MEMORY_RESET_PEAK};
  int32_t kind = LLTM_CPU, index = 0, expected = LLTM_OK;
  Mutation m = M_NONE;
  switch (below(4)) {
    case 0: kind = 7; expected = LLTM_ERR_INVALID_DEVICE; m = M_KIND; break;
    case 1: index = 2; expected = LLTM_ERR_INVALID_DEVICE; m = M_INDEX; break;
    case 2:
      if (has_cuda) break;
      kind = LLTM_CUDA; expected = LLTM_ERR_BACKEND_UNAVAILABLE; m = M_NO_CUDA; break;
    default: break;
  }
  const Expectation e = {expected, {NULL, NULL}};
  check_status(&c, m, &e, lltm_memory_reset_peak(kind, index));
  ++*cases;
}

static void fuzz_abi_constant(uint64_t* cases) {
  const Call c = {.fn = F_ABI_CONSTANT};
  int64_t value = -7;
  const char* name = "LLTM_MAX_DIMS";
  int null_value = 0;
  int32_t expected = LLTM_OK;
  Mutation m = M_NONE;
  switch (below(4)) {
    case 0: name = NULL; expected = LLTM_ERR_NULL_POINTER; m = M_NULL_DATA; break;
    case 1: null_value = 1; expected = LLTM_ERR_NULL_POINTER; m = M_NULL_DESCRIPTOR; break;
    case 2: name = below(2) ? "LLTM_NO_SUCH_THING" : ""; expected = LLTM_ERR_INVALID_ARGUMENT; m = M_SCALAR; break;
    default: break;
  }
  const Expectation e = {expected, {NULL, NULL}};
  check_status(&c, m, &e, lltm_abi_constant(name, null_value ? NULL : &value));
  if (expected == LLTM_OK && value != LLTM_MAX_DIMS) report(&c, m, "LLTM_MAX_DIMS read back wrong");
  if (expected != LLTM_OK && value != -7) report(&c, m, "the value was written on a failure");
  ++*cases;
}

static void fuzz_sequence_reserve_bytes(uint64_t* cases) {
  static const int64_t kBadCount[] = {0, -1, INT64_MIN};
  static const int32_t kBadDtype[] = {2, -1, INT32_MAX};
  const Call c = {.fn = F_SEQUENCE_RESERVE_BYTES};
  int64_t sizes[4] = {small(), small(), small(), small()}; /* T, B, F, S */
  int32_t dtype = below(2) ? LLTM_FLOAT64 : LLTM_FLOAT32, kind = LLTM_CPU, index = 0, expected = LLTM_OK;
  int null_bytes = 0;
  Mutation m = M_NONE;
  switch (below(7)) {
    case 0: null_bytes = 1; expected = LLTM_ERR_NULL_POINTER; m = M_NULL_DATA; break;
    case 1: sizes[below(4)] = PICK(kBadCount); expected = LLTM_ERR_INVALID_ARGUMENT; m = M_SIZE; break;
    case 2: /* T*B*5*S past 63 bits */
      sizes[0] = sizes[1] = INT64_C(1) << (21 + below(20));
      sizes[3] = INT64_C(1) << (21 + below(20));
      expected = LLTM_ERR_INVALID_ARGUMENT;
      m = M_SPAN_OVERFLOW;
      break;
    case 3: dtype = PICK(kBadDtype); expected = LLTM_ERR_INVALID_DTYPE; m = M_DTYPE; break;
    case 4: kind = 9; expected = LLTM_ERR_INVALID_DEVICE; m = M_KIND; break;
    case 5:
      if (has_cuda) break;
      kind = LLTM_CUDA; expected = LLTM_ERR_BACKEND_UNAVAILABLE; m = M_NO_CUDA; break;
    default: break;
  }
  uint64_t bytes = 77;
  const Expectation e = {expected, {NULL, NULL}};
  check_status(&c, m, &e,
               lltm_sequence_reserve_bytes(sizes[0], sizes[1], sizes[2], sizes[3], dtype, kind, index,
                                           null_bytes ? NULL : &bytes));
  const uint64_t want = expected == LLTM_OK ? (uint64_t)(sizes[0] * sizes[1] * 5 * sizes[3] * element_size(dtype)) : 0;
  if (!null_bytes && bytes != want) report(&c, m, "*bytes is not T*B*5*S elements (or 0 after a failure)");
  ++*cases;
}

/* float32 activations of NaN (exp's bit tricks once shifted a signed value
 * out of range on NaN, which UndefinedBehaviorSanitizer traps): NaN out. */
static void nan_forward(void) {
  enum { B = 2, F = 3, S = 5 };
  static float input[B * F], weights[3 * S * (S + F)], bias[3 * S], h[B * S], cell[B * S];
  static float out[5][B * S], X[B * (S + F)], gates[B * 3 * S];
  for (int i = 0; i < B * F; ++i) input[i] = NAN;
  const lltm_tensor ti = {input, 2, {B, F}, {F, 1}}, tw = {weights, 2, {3 * S, S + F}, {S + F, 1}},
                    tb = {bias, 1, {3 * S}, {1}}, th = {h, 2, {B, S}, {S, 1}}, tc = {cell, 2, {B, S}, {S, 1}},
                    tx = {X, 2, {B, S + F}, {S + F, 1}}, tg = {gates, 2, {B, 3 * S}, {3 * S, 1}};
  lltm_tensor to[5];
  for (int i = 0; i < 5; ++i) to[i] = (lltm_tensor){out[i], 2, {B, S}, {S, 1}};
  const int32_t status = lltm_forward(&ti, &tw, &tb, &th, &tc, &to[0], &to[1], &to[2], &to[3], &to[4], &tx, &tg,
                                      LLTM_FLOAT32, LLTM_CPU, 0);
  if (status != LLTM_OK || !isnan(out[0][0])) {
    fprintf(stderr, "abi_fuzz: forward of NaN input: status %d (%s), new_h[0] = %g\n", status, lltm_last_error(),
            out[0][0]);
    ++failures;
  }
}

/* ---- main ---- */

int main(int argc, char** argv) {
  const uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
  const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 20261122;
  if (lltm_abi_version() != LLTM_ABI_VERSION) {
    fprintf(stderr, "abi_fuzz: the library has ABI version %u, this test %d\n", lltm_abi_version(), LLTM_ABI_VERSION);
    return 1;
  }
  has_cuda = (lltm_backends() & LLTM_BACKEND_CUDA) != 0 || lltm_cuda_device_count() > 0;
  nan_forward();
  uint64_t per_mutation[M_COUNT] = {0}, per_fn[F_COUNT] = {0};
  uint64_t cases = 0;
  for (uint64_t n = 0; cases < total; ++n) {
    case_seed = seed * 1000003u + n;
    rng = case_seed;
    const Fn fn = (Fn)below(F_COUNT);
    const uint64_t before = cases;
    switch (fn) {
      case F_ALLOC: fuzz_alloc(&cases); break;
      case F_FREE: fuzz_free(&cases); break;
      case F_ALLOC_PINNED: fuzz_alloc_pinned(&cases); break;
      case F_FREE_PINNED: fuzz_free_pinned(&cases); break;
      case F_READ:
      case F_WRITE: fuzz_transfer(&cases, fn); break;
      case F_SYNCHRONIZE: fuzz_synchronize(&cases); break;
      case F_ABI_CONSTANT: fuzz_abi_constant(&cases); break;
      case F_MEMORY_STAT: fuzz_memory_stat(&cases); break;
      case F_MEMORY_RESET_PEAK: fuzz_memory_reset_peak(&cases); break;
      case F_SEQUENCE_RESERVE_BYTES: fuzz_sequence_reserve_bytes(&cases); break;
      default: {
        Call c;
        build(&c, fn);
        Expectation e;
        /* One valid case in eight; the rest spoil one argument. */
        const Mutation m = below(8) == 0 ? M_NONE : (Mutation)(1 + below(M_COUNT - 1));
        if (!mutate(&c, m, &e)) {
          free_call(&c);
          continue;
        }
        const int32_t status = invoke(&c);
        check_status(&c, m, &e, status);
        check_memory(&c, m, status);
        free_call(&c);
        ++per_mutation[m];
        ++cases;
      }
    }
    per_fn[fn] += cases - before;
  }
  printf("abi_fuzz: %llu cases (seed %llu; %llu through lltm_run, %llu of them with half types), %ld failures\n",
         (unsigned long long)cases, (unsigned long long)seed, (unsigned long long)run_cases,
         (unsigned long long)half_cases, failures);
  for (int f = 0; f < F_COUNT; ++f) printf("  %-28s %llu\n", kFnNames[f], (unsigned long long)per_fn[f]);
  for (int m = 0; m < M_COUNT; ++m) printf("  %-20s %llu\n", kMutationNames[m], (unsigned long long)per_mutation[m]);
  return failures == 0 ? 0 : 1;
}
