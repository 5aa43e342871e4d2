/*
 * lltm.h: the C ABI of the LLTM cell's native kernels.
 *
 * ABI version 3: every op is declared once in lltm_ops.def (its tensor
 * slots with their shape rules, scalars and flags) and called through
 * lltm_run with one lltm_call block; each tensor carries its dtype, and
 * bfloat16 and float16 join float32 and float64. The typed entry points of
 * version 1 (lltm_forward, lltm_backward, ...) and version 2 (the sequence
 * engine, lltm_sequence_*) remain as wrappers of lltm_run for C callers,
 * answering as before: their dtype argument (float32 or float64) applies to
 * every tensor. Every function is `extern "C"` and
 * reports failure through a status code (lltm_status); the message of the
 * last failure on the calling thread is read with lltm_last_error(). Nothing is written to any output
 * before all arguments have been validated.
 *
 * Tensors are described by lltm_tensor: a data pointer and up to
 * LLTM_MAX_DIMS sizes and strides, counted in elements (not bytes). Strides
 * may be any non-negative value (a transposed, sliced or broadcast view, e.g.
 * a bias with stride 0 across the batch); sizes and strides are at most 2^48
 * and a tensor spans at most 2^48 elements. Outputs may be strided too, but a
 * stride of 0 over a size above 1 is refused for them, and an output whose
 * byte range meets that of an input or another output of the same call is
 * refused (LLTM_ERR_INVALID_ARGUMENT), except that lltm_copy and lltm_axpy
 * accept dst/y and src/x as the very same view.
 *
 * Each tensor of an lltm_run call carries its element type (lltm_tensor.dtype):
 * float32, bfloat16 and float16 may be mixed in one call, which then computes
 * in float32 (bfloat16 and float16 tensors are converted to float32
 * temporaries and the outputs rounded back to nearest even); float64 tensors
 * compute in float64 and mix with no other type; LLTM_OP_COPY converts
 * between any two. In a typed call every tensor has the call's `dtype`
 * argument. Every tensor lives on the call's device (`device_kind`,
 * `device_index`). The CPU
 * backend is always present; the CUDA backend is a separate library
 * (liblltm_cuda) that this library loads on first use, so lltm_backends()
 * says what this build and machine can run.
 *
 * Shapes (B batch, F input features, S state size, K = S + F):
 *   forward  inputs : input [B,F], weights [3S,K], bias [3S], old_h [B,S], old_cell [B,S]
 *            outputs: new_h [B,S], new_cell [B,S], input_gate [B,S],
 *                     output_gate [B,S], candidate_cell [B,S], X [B,K], gate_weights [B,3S]
 *   backward inputs : grad_h [B,S], grad_cell [B,S], new_cell, input_gate,
 *                     output_gate, candidate_cell [B,S], X [B,K], gate_weights [B,3S], weights [3S,K]
 *            outputs: d_old_h [B,S], d_input [B,F], d_weights [3S,K], d_bias [3S], d_old_cell [B,S]
 *            optional (LLTM_OP_BACKWARD through lltm_run): grad_output [B,S], a second gradient of new_h
 *            added to grad_h in the kernel (a one-step sequence's output is its h: one launch, no sum first)
 * gate_weights holds the gates before their activations, X = cat(old_h, input).
 */
#ifndef LLTM_H
#define LLTM_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  if defined(LLTM_BUILDING)
#    define LLTM_API __declspec(dllexport)
#  else
#    define LLTM_API __declspec(dllimport)
#  endif
#else
#  define LLTM_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define LLTM_ABI_VERSION 3
#define LLTM_MAX_DIMS 4
#define LLTM_MAX_SLOTS 16   /* tensors of one lltm_call */
#define LLTM_MAX_SCALARS 8  /* scalars of one lltm_call */

/* Flags of the ops that take them (lltm_ops.def names which). */
#define LLTM_ACCUMULATE_PARAM_GRADS 1u /* add the parameters' gradients (ACC slots) to the outputs' contents */
#define LLTM_SEQUENCE_TRAINING 1u      /* keep what the sequence backward needs in `reserve` */
#define LLTM_COPY_NON_BLOCKING 1u      /* LLTM_OP_COPY from pinned host memory to a GPU: return once queued */

typedef enum lltm_status {
  LLTM_OK = 0,
  LLTM_ERR_NULL_POINTER = 1,        /* a required pointer argument is NULL */
  LLTM_ERR_INVALID_SHAPE = 2,       /* a rank, size or stride is out of range */
  LLTM_ERR_SHAPE_MISMATCH = 3,      /* sizes disagree between arguments */
  LLTM_ERR_INVALID_DTYPE = 4,       /* unknown dtype */
  LLTM_ERR_INVALID_DEVICE = 5,      /* unknown device kind, or an index with no device */
  LLTM_ERR_BACKEND_UNAVAILABLE = 6, /* the build or the machine lacks that backend */
  LLTM_ERR_OUT_OF_MEMORY = 7,
  LLTM_ERR_CUDA = 8,                /* a CUDA or cuBLAS call failed; the message has CUDA's text */
  LLTM_ERR_INTERNAL = 9,
  LLTM_ERR_INVALID_ARGUMENT = 10    /* a flag or scalar argument out of range, or an output overlapping another argument */
} lltm_status;

/* The element types and the ops, from the table in lltm_ops.def. */
#define LLTM_OP(ID, code, entry, sizes, flags)
#define LLTM_SLOT(name, role, shape)
#define LLTM_SCALAR(name, kind, lo, hi)
#define LLTM_DTYPE(ID, code, name, bytes, cls) LLTM_##ID = code,
typedef enum lltm_dtype {
#include "lltm_ops.def"
  LLTM_DTYPE_END
} lltm_dtype;
#undef LLTM_DTYPE
#undef LLTM_OP
#define LLTM_DTYPE(ID, code, name, bytes, cls)
#define LLTM_OP(ID, code, entry, sizes, flags) LLTM_OP_##ID = code,
typedef enum lltm_op {
#include "lltm_ops.def"
  LLTM_OP_END
} lltm_op;
#undef LLTM_DTYPE
#undef LLTM_OP
#undef LLTM_SLOT
#undef LLTM_SCALAR

typedef enum lltm_device_kind { LLTM_CPU = 0, LLTM_CUDA = 1 } lltm_device_kind;

/* Bits of lltm_backends(). */
#define LLTM_BACKEND_CPU 1u
#define LLTM_BACKEND_CUDA 2u

typedef struct lltm_tensor {
  void* data;                     /* first element; may be NULL only if some size is 0 (never here) */
  int64_t ndim;                   /* 1..LLTM_MAX_DIMS */
  int64_t sizes[LLTM_MAX_DIMS];   /* sizes[0..ndim) > 0; entries from ndim on are ignored */
  int64_t strides[LLTM_MAX_DIMS]; /* in elements, >= 0 */
  int64_t dtype;                  /* lltm_dtype of the elements (ABI 3); the typed entry points of
                                     versions 1 and 2 ignore it and use their dtype argument */
} lltm_tensor;

/* One call of an op through lltm_run (ABI 3): its tensors in the order of
 * the op's slots in lltm_ops.def, its scalars in the order of its
 * LLTM_SCALARs, its flags. Every tensor lives on (device_kind,
 * device_index), except LLTM_OP_COPY's src, on (src_device_kind,
 * src_device_index). Bit k of `given` says that tensors[k] holds slot k: an
 * optional slot is absent when its bit is clear (its descriptor is then not
 * read), a required one is refused (LLTM_ERR_NULL_POINTER), and a bit past
 * the op's slots is LLTM_ERR_INVALID_ARGUMENT. */
typedef struct lltm_call {
  int32_t device_kind;
  int32_t device_index;
  int32_t src_device_kind;
  int32_t src_device_index;
  uint32_t flags;
  uint32_t given;
  double scalars[LLTM_MAX_SCALARS];
  lltm_tensor tensors[LLTM_MAX_SLOTS];
} lltm_call;

/* Runs op `op` (an lltm_op) on `call`: every rule of the op's declaration in
 * lltm_ops.def (ranks and sizes, strides, dtypes, overlap, scalars, flags) is
 * checked before anything is written; messages start with the op's entry name
 * and name its slots. One or two arguments for every op, whatever its slots. */
LLTM_API int32_t lltm_run(int32_t op, const lltm_call* call);

/* The bytes the BYTES slot of op `op` needs for the sizes of the call's
 * other tensors (LLTM_OP_SEQUENCE_* and LLTM_OP_STACKED_*: the reserve, sized
 * in the call's compute type), in *bytes (0 on failure); only the slots that
 * the op's sizes are taken from are read, with its scalars (checked) and the
 * device. Messages start with "lltm_buffer_bytes"; an op without a BYTES slot
 * is LLTM_ERR_INVALID_ARGUMENT. */
LLTM_API int32_t lltm_buffer_bytes(int32_t op, const lltm_call* call, uint64_t* bytes);

/* LLTM_ABI_VERSION of the library actually loaded. */
LLTM_API uint32_t lltm_abi_version(void);

/* LLTM_BACKEND_* bits: CPU always; CUDA when liblltm_cuda loads and sees a GPU. */
LLTM_API uint32_t lltm_backends(void);

/* The last failure's message on this thread ("" if none). Valid until the next call on this thread. */
LLTM_API const char* lltm_last_error(void);

/* Number of CUDA devices (0 without the CUDA backend or without a GPU); never fails. */
LLTM_API int32_t lltm_cuda_device_count(void);

/* How the CUDA backend computes matrix products: "cublas", or "own" (its own
   kernels, where cuBLAS is neither linked nor found); "" without the CUDA
   backend. Never fails. */
LLTM_API const char* lltm_cuda_blas(void);

/* How float32 matrix products may be computed, as torch.set_float32_matmul_precision:
 * HIGHEST (the default) exact float32 products; HIGH allows TF32 tensor cores
 * (inputs rounded to 10-bit mantissas, float32 accumulation), MEDIUM also
 * bfloat16 ones (8-bit mantissas). The CUDA backend's cuBLAS products honour
 * it (the step, linear and the sequence engine's products); under MEDIUM the
 * sequence engine's per-step recurrent products on its graph path (where the
 * recurrent weights do not fit on chip) take bfloat16 operands, W_h and h or
 * the gate gradients, with float32 sums, on cuBLAS or its own kernel alike;
 * its persistent recurrence (S up to 512, on sm_80 and later) takes the
 * recurrent product on tensor cores, in TF32 under HIGH and in bfloat16 under
 * MEDIUM, with float32 sums. Otherwise the CPU
 * and the CUDA backend's own kernels compute exactly at every setting, as
 * PyTorch allows. Process-wide, read at each call. A call
 * whose float inputs are all bfloat16 (float16) computes its products at
 * MEDIUM (HIGH) at least, as the type's own kernels do, also where it is
 * staged through float32, and where what it writes or accumulates is
 * float32 (mixed precision's parameter gradients). */
#define LLTM_MATMUL_PRECISION_HIGHEST 0
#define LLTM_MATMUL_PRECISION_HIGH 1
#define LLTM_MATMUL_PRECISION_MEDIUM 2

/* Sets the precision of float32 matrix products (LLTM_MATMUL_PRECISION_*);
 * another value is LLTM_ERR_INVALID_ARGUMENT, naming
 * "lltm_set_float32_matmul_precision", and changes nothing. */
LLTM_API int32_t lltm_set_float32_matmul_precision(int32_t precision);

/* The precision of float32 matrix products in use (LLTM_MATMUL_PRECISION_*). Never fails. */
LLTM_API int32_t lltm_float32_matmul_precision(void);

LLTM_API int32_t lltm_forward(
    const lltm_tensor* input, const lltm_tensor* weights, const lltm_tensor* bias,
    const lltm_tensor* old_h, const lltm_tensor* old_cell,
    const lltm_tensor* new_h, const lltm_tensor* new_cell, const lltm_tensor* input_gate,
    const lltm_tensor* output_gate, const lltm_tensor* candidate_cell, const lltm_tensor* X,
    const lltm_tensor* gate_weights,
    int32_t dtype, int32_t device_kind, int32_t device_index);

LLTM_API int32_t lltm_backward(
    const lltm_tensor* grad_h, const lltm_tensor* grad_cell, const lltm_tensor* new_cell,
    const lltm_tensor* input_gate, const lltm_tensor* output_gate,
    const lltm_tensor* candidate_cell, const lltm_tensor* X, const lltm_tensor* gate_weights,
    const lltm_tensor* weights,
    const lltm_tensor* d_old_h, const lltm_tensor* d_input, const lltm_tensor* d_weights,
    const lltm_tensor* d_bias, const lltm_tensor* d_old_cell,
    int32_t dtype, int32_t device_kind, int32_t device_index);

/* lltm_backward with flags; with LLTM_ACCUMULATE_PARAM_GRADS the weights' and
 * bias' gradients are added to what d_weights and d_bias hold (as autograd
 * accumulates into .grad, e.g. over the steps of a sequence), the other
 * outputs are written as by lltm_backward. */
LLTM_API int32_t lltm_backward_ex(
    const lltm_tensor* grad_h, const lltm_tensor* grad_cell, const lltm_tensor* new_cell,
    const lltm_tensor* input_gate, const lltm_tensor* output_gate,
    const lltm_tensor* candidate_cell, const lltm_tensor* X, const lltm_tensor* gate_weights,
    const lltm_tensor* weights,
    const lltm_tensor* d_old_h, const lltm_tensor* d_input, const lltm_tensor* d_weights,
    const lltm_tensor* d_bias, const lltm_tensor* d_old_cell,
    uint32_t flags, int32_t dtype, int32_t device_kind, int32_t device_index);

/* Memory. Host memory is 64-byte aligned; device memory comes from a caching
 * pool on the device's stream. lltm_alloc stores the new block's address in
 * *out (NULL on failure); bytes must be 1 to 2^63 (LLTM_ERR_INVALID_SHAPE
 * otherwise), and more than the device can give is LLTM_ERR_OUT_OF_MEMORY. */
LLTM_API int32_t lltm_alloc(uint64_t bytes, int32_t device_kind, int32_t device_index, void** out);
LLTM_API int32_t lltm_free(void* data, int32_t device_kind, int32_t device_index);

/* Page-locked ("pinned") host memory, from the CUDA backend's pool
 * (LLTM_ERR_BACKEND_UNAVAILABLE without one). It is host memory (device_kind
 * LLTM_CPU) for every op. An LLTM_OP_COPY from it to a GPU with
 * LLTM_COPY_NON_BLOCKING in its flags returns once the copy is queued on the
 * GPU's stream (the caller must not write the source until the copy has run:
 * lltm_synchronize, or work ordered after it); every other copy that involves
 * the host has finished when it returns. A block may be freed as soon as its
 * copy is queued: lltm_alloc_pinned hands it out again only once the copies
 * queued on it have run. bytes: 1 to 2^63. Not counted by lltm_memory_stat. */
LLTM_API int32_t lltm_alloc_pinned(uint64_t bytes, void** out);
LLTM_API int32_t lltm_free_pinned(void* data);

/* Strided copy between two tensors of equal sizes, on any pair of devices. */
LLTM_API int32_t lltm_copy(const lltm_tensor* dst, int32_t dst_kind, int32_t dst_index,
                           const lltm_tensor* src, int32_t src_kind, int32_t src_index,
                           int32_t dtype);

/* Sets every element of dst to value (rounded to dtype). */
LLTM_API int32_t lltm_fill(const lltm_tensor* dst, double value, int32_t dtype,
                           int32_t device_kind, int32_t device_index);

/* y += alpha * x, for tensors of equal sizes with any strides (gradient accumulation). */
LLTM_API int32_t lltm_axpy(const lltm_tensor* y, double alpha, const lltm_tensor* x, int32_t dtype,
                           int32_t device_kind, int32_t device_index);

/* One step of torch.optim.SGD (dampening 0, no Nesterov, no weight decay) on
 * contiguous tensors of equal sizes: buf = momentum * buf + grad, param -= lr * buf
 * (start buf at zero). With momentum == 0, momentum_buffer may be NULL: param -= lr * grad. */
LLTM_API int32_t lltm_sgd_step(const lltm_tensor* param, const lltm_tensor* grad,
                               const lltm_tensor* momentum_buffer, double lr, double momentum,
                               int32_t dtype, int32_t device_kind, int32_t device_index);

/* One step of torch.optim.Adam (no weight decay, no AMSGrad) on contiguous
 * tensors of equal sizes; `step` counts from 1 and exp_avg, exp_avg_sq start at zero:
 *   exp_avg = beta1 * exp_avg + (1 - beta1) * grad
 *   exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad^2
 *   param -= lr / (1 - beta1^step) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^step) + eps) */
LLTM_API int32_t lltm_adam_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* exp_avg,
                                const lltm_tensor* exp_avg_sq, double lr, double beta1, double beta2, double eps,
                                int64_t step, int32_t dtype, int32_t device_kind, int32_t device_index);

/* Contiguous byte copies between a caller's host buffer and memory of a device,
 * ordered after the device's queued work; bytes at most 2^63. */
LLTM_API int32_t lltm_read(void* host_dst, const void* src, uint64_t bytes,
                           int32_t device_kind, int32_t device_index);
LLTM_API int32_t lltm_write(void* dst, const void* host_src, uint64_t bytes,
                            int32_t device_kind, int32_t device_index);

/* Waits for the device's queued work (a no-op on the CPU). */
LLTM_API int32_t lltm_synchronize(int32_t device_kind, int32_t device_index);

/* Memory counters of a device, as torch.cuda's memory_allocated,
 * max_memory_allocated and memory_reserved. Bytes are those of the blocks as
 * the allocator hands them out (a request rounded up: to 64 bytes on the
 * CPU, to the CUDA pool's block size on a GPU), lltm's own scratch memory
 * included. */
typedef enum lltm_memory_stat_kind {
  LLTM_MEMORY_ALLOCATED = 0,      /* in blocks lltm_alloc handed out and lltm_free has not taken back */
  LLTM_MEMORY_PEAK_ALLOCATED = 1, /* the most LLTM_MEMORY_ALLOCATED has been since the process started or
                                     the device's last lltm_memory_reset_peak */
  LLTM_MEMORY_RESERVED = 2        /* held from the system or the device: allocated, and freed blocks kept
                                     for reuse (on the CPU, those of 64 KiB and more, up to 256 MiB) */
} lltm_memory_stat_kind;

/* Stores one counter (an lltm_memory_stat_kind) of the device in *out; the
 * CPU's counts every CPU allocation of the process. */
LLTM_API int32_t lltm_memory_stat(int32_t stat, int32_t device_kind, int32_t device_index, uint64_t* out);

/* Sets the device's LLTM_MEMORY_PEAK_ALLOCATED to its LLTM_MEMORY_ALLOCATED now. */
LLTM_API int32_t lltm_memory_reset_peak(int32_t device_kind, int32_t device_index);

/* ---- Step capture (CUDA) ----
 *
 * lltm_capture_begin records, instead of running, the work that this thread
 * then queues on the device's stream (lltm_run, lltm_copy between device
 * tensors, lltm_fill, ...) until lltm_capture_end, which makes it a graph:
 * lltm_graph_replay runs the recorded work again, on the same memory, with
 * whatever that memory then holds. Device memory allocated while capturing,
 * and memory freed while capturing, stays with the graph (at the same address,
 * never handed to other work) until lltm_graph_destroy; memory still held by
 * the caller then is the caller's again. Nothing that waits for the device or
 * reads it to the host may run while capturing (lltm_read, lltm_write,
 * lltm_synchronize, a copy to or from the host): it is refused with
 * LLTM_ERR_INVALID_ARGUMENT and the capture goes on. The device checks of
 * values only the device holds (ids against their range, sampling weights)
 * are not made in a captured call: the kernels skip what is out of range.
 * Other threads' calls on the device, lltm_alloc among them, are refused
 * while it is captured; lltm_capture_begin waits for those already running,
 * and lltm_capture_end for those being refused, so that no call's work is
 * run in part and recorded in part.
 * On the CPU these return LLTM_ERR_BACKEND_UNAVAILABLE: there is no launch cost
 * to save there. */
LLTM_API int32_t lltm_capture_begin(int32_t device_kind, int32_t device_index);
/* Ends the capture; *graph receives the graph, or with graph NULL the
 * capture is discarded (after a failure in the work being captured). */
LLTM_API int32_t lltm_capture_end(int32_t device_kind, int32_t device_index, void** graph);
/* Queues the graph's work on the device's stream (no wait). */
LLTM_API int32_t lltm_graph_replay(void* graph, int32_t device_kind, int32_t device_index);
/* Waits for the graph's queued replays, frees it and gives its memory back. */
LLTM_API int32_t lltm_graph_destroy(void* graph, int32_t device_kind, int32_t device_index);

/* The CPU kernels this process runs: "avx512", "avx2" or "baseline" (x86-64
 * with SSE2), chosen when the library loads as the widest this processor and
 * operating system support, or "native" in a build for one machine
 * (LLTM_NATIVE_ARCH). The environment variable LLTM_CPU_KERNELS, read at load
 * time, forces a variant; when this machine cannot run it (or the name is
 * unknown) this returns NULL and every CPU kernel fails with
 * LLTM_ERR_BACKEND_UNAVAILABLE, lltm_last_error() saying why. The string is
 * static. */
LLTM_API const char* lltm_cpu_kernels(void);

/* The number of threads the CPU backend splits a call across (the pool's
 * size, fixed when the library first runs a CPU call), and where that number
 * came from: "environment" (LLTM_NUM_THREADS, a positive integer), "affinity"
 * (the CPUs in this process's sched_getaffinity mask), "cgroup" (the cgroup's
 * CPU quota, v2 cpu.max or v1 cpu.cfs_quota_us / cpu.cfs_period_us, rounded
 * up, when below the affinity count) or "hardware" (the machine's CPU count,
 * when neither is known). Small calls use fewer threads than this, down to
 * the caller's alone. The string is static. */
LLTM_API int32_t lltm_cpu_threads(void);
LLTM_API const char* lltm_cpu_threads_source(void);

/* The value of one constant of this header (e.g. "LLTM_MAX_DIMS", "LLTM_ERR_CUDA")
 * or of the descriptor layout ("sizeof(lltm_tensor)", "offsetof(lltm_tensor, sizes)"),
 * as this library was built, in *value: a binding checks at open that the values it
 * was written against are the library's. LLTM_ERR_INVALID_ARGUMENT for an unknown name. */
LLTM_API int32_t lltm_abi_constant(const char* name, int64_t* value);

/* ---- Whole sequences (ABI version 2) ----
 *
 * T steps of the cell in one call: inputs [T,B,F] (any strides), weights
 * [3S,S+F], bias [3S], h0 and c0 [B,S] -> outputs [T,B,S] (every step's h),
 * last_h and last_cell [B,S] (the state after step T). The backward pass
 * propagates gradients through all T steps at once.
 *
 * The reserve is the state a training forward keeps for the backward, as
 * cuDNN's reserve space: lltm_sequence_reserve_bytes says how many bytes
 * (T*B*5*S elements of dtype), the caller allocates them on the call's device
 * (lltm_alloc) and passes the same buffer, unchanged, to
 * lltm_sequence_backward. Its layout is private to the backend that wrote it.
 * Without LLTM_SEQUENCE_TRAINING the forward keeps nothing (inference):
 * reserve may then be NULL and reserve_bytes 0.
 *
 * Per-sample lengths (int32 [B], each from 1 to T) are taken by the ops'
 * optional `lengths` slot through lltm_run (LLTM_OP_SEQUENCE_FORWARD and
 * _BACKWARD in lltm_ops.def); these typed wrappers run every sample T steps.
 *
 * On the CPU both passes compute with subnormal numbers flushed to zero (as
 * inputs and as results: x86's FTZ and DAZ, arm64's FZ), as
 * torch.set_flush_denormal(True) does: the slopes of saturated gates fall
 * below float32's smallest normal in training, and x86 cores take a
 * microcode assist for each operation on them. The calling thread's
 * floating-point mode is restored before the call returns.
 */

/* Stores in *bytes the size of the reserve of a training forward with these
 * sizes (each at least 1); refused with LLTM_ERR_INVALID_ARGUMENT when it does
 * not fit in 64 bits or in the address space. */
LLTM_API int32_t lltm_sequence_reserve_bytes(int64_t steps, int64_t batch, int64_t input_features,
                                             int64_t state_size, int32_t dtype, int32_t device_kind,
                                             int32_t device_index, uint64_t* bytes);

/* Runs T steps from (h0, c0). With LLTM_SEQUENCE_TRAINING in flags, reserve
 * must hold at least lltm_sequence_reserve_bytes bytes of the call's device. */
LLTM_API int32_t lltm_sequence_forward(
    const lltm_tensor* inputs, const lltm_tensor* weights, const lltm_tensor* bias,
    const lltm_tensor* h0, const lltm_tensor* c0,
    const lltm_tensor* outputs, const lltm_tensor* last_h, const lltm_tensor* last_cell,
    void* reserve, uint64_t reserve_bytes, uint32_t flags,
    int32_t dtype, int32_t device_kind, int32_t device_index);

/* Backpropagation through time of a training forward: from the gradients of
 * every step's h (grad_outputs [T,B,S]) and of the last state (grad_last_h,
 * grad_last_cell [B,S]), each optional (NULL means zeros), the reserve that
 * forward wrote, and its inputs, weights and h0 -> d_inputs [T,B,F] (NULL: not computed),
 * d_weights [3S,S+F], d_bias [3S], d_h0 and d_c0 [B,S]. d_weights and d_bias
 * are overwritten, or added to with LLTM_ACCUMULATE_PARAM_GRADS in flags.
 * On CUDA the products that make d_weights and d_bias may still run on a
 * second stream of the device after the call returns, beside later calls;
 * every later call or copy whose tensors meet them or the inputs and reserve
 * they read, and every read, synchronize, capture and NCCL call, waits for
 * them first (work queued on the device by other means does not). */
LLTM_API int32_t lltm_sequence_backward(
    const lltm_tensor* grad_outputs, const lltm_tensor* grad_last_h, const lltm_tensor* grad_last_cell,
    const void* reserve, uint64_t reserve_bytes,
    const lltm_tensor* inputs, const lltm_tensor* weights, const lltm_tensor* h0,
    const lltm_tensor* d_inputs, const lltm_tensor* d_weights, const lltm_tensor* d_bias,
    const lltm_tensor* d_h0, const lltm_tensor* d_c0,
    uint32_t flags, int32_t dtype, int32_t device_kind, int32_t device_index);

/* ---- Collectives across processes and GPUs: NCCL (data parallelism) ----
 *
 * NVIDIA's NCCL is opened at run time on the first of these calls, so that
 * neither building nor loading this library needs it: the file
 * LLTM_NCCL_LIBRARY names (a libnccl.so.2 or its folder), else the dynamic
 * linker's libnccl.so.2 (LD_LIBRARY_PATH, the system's), else the folder of
 * the nvidia-nccl Python wheel (site-packages/nvidia/nccl/lib under the
 * active virtual or conda environment, ~/.local and the system's Python).
 * A missing NCCL, or one older than LLTM_NCCL_MIN_VERSION (2.10, the first
 * with bfloat16 and the average), is LLTM_ERR_BACKEND_UNAVAILABLE with what
 * was tried. Before NCCL is opened, NCCL_NVLS_ENABLE is set to 0 in this
 * process's environment: NVLink multicast stays off.
 *
 * A communicator joins `world_size` processes, one GPU each, under the
 * unique id that one of them made (lltm_nccl_unique_id) and passed to the
 * others (through the TCP store of the TypeScript layer); lltm_nccl_comm_init
 * blocks until every rank has called it. Collectives are queued on the
 * stream of the communicator's device, the one every op of that device runs
 * on, so they are ordered after the kernels that produced their inputs and
 * before those that read their outputs; every rank must call the same
 * collectives in the same order.
 */
#define LLTM_NCCL_UNIQUE_ID_BYTES 128
#define LLTM_NCCL_MIN_VERSION 21000 /* NCCL's version code: major * 10000 + minor * 100 + patch */

typedef enum lltm_collective {
  LLTM_ALL_REDUCE = 0,     /* tensors[0] input, tensors[1] output (the same count; may be the same view) */
  LLTM_BROADCAST = 1,      /* tensors[0] input (read on the root), tensors[1] output; scalars[0] the root */
  LLTM_ALL_GATHER = 2,     /* tensors[1] output holds world_size times tensors[0]'s count, in rank order */
  LLTM_REDUCE_SCATTER = 3  /* tensors[0] input holds world_size times tensors[1]'s count */
} lltm_collective;

/* Flag of lltm_nccl_run: queue the collective on the communicator's own stream, after the work queued on
 * the device's stream so far, so that it runs while the device goes on with later work (a backward pass);
 * the device's stream waits for it only at lltm_nccl_join. Its tensors must not be written, read or freed
 * by the device's work until then. A collective without the flag waits for those with it (NCCL runs a
 * communicator's collectives in the order they were issued). */
#define LLTM_COLLECTIVE_OVERLAP 1u

typedef enum lltm_reduce_op {
  LLTM_REDUCE_SUM = 0,
  LLTM_REDUCE_MEAN = 1 /* float dtypes only */
} lltm_reduce_op;

/* The NCCL version code (e.g. 22805 for 2.28.5) in *version, opening NCCL if needed. */
LLTM_API int32_t lltm_nccl_version(int32_t* version);

/* A new unique id (LLTM_NCCL_UNIQUE_ID_BYTES bytes) into id, on the rank that starts a communicator. */
LLTM_API int32_t lltm_nccl_unique_id(uint8_t* id);

/* Joins the communicator of `id` as `rank` of `world_size` on CUDA device `device_index`;
 * the handle in *comm (NULL on failure). Blocks until every rank has joined. */
LLTM_API int32_t lltm_nccl_comm_init(void** comm, const uint8_t* id, int32_t world_size, int32_t rank,
                                     int32_t device_index);

/* Ends a communicator after its queued work (abort != 0: at once, abandoning it, as after
 * another rank failed); the handle is invalid afterwards. */
LLTM_API int32_t lltm_nccl_comm_destroy(void* comm, int32_t abort);

/* LLTM_ERR_CUDA with NCCL's message when the communicator's asynchronous work failed
 * (a peer lost, a network error), else LLTM_OK. */
LLTM_API int32_t lltm_nccl_comm_error(void* comm);

/* Makes the device's stream wait for every collective queued on `comm` with LLTM_COLLECTIVE_OVERLAP. */
LLTM_API int32_t lltm_nccl_join(void* comm);

/* Queues one collective (an lltm_collective) on `comm`'s device: tensors as the enum says,
 * contiguous, of one dtype (any lltm_dtype), on that CUDA device (call->device_kind and
 * device_index), bit k of call->given for tensors[k]; scalars[0] the lltm_reduce_op of
 * LLTM_ALL_REDUCE and LLTM_REDUCE_SCATTER, or the root rank of LLTM_BROADCAST; call->flags 0 (the device's
 * stream) or LLTM_COLLECTIVE_OVERLAP. */
LLTM_API int32_t lltm_nccl_run(void* comm, int32_t collective, const lltm_call* call);

#ifdef __cplusplus
}
#endif

#endif /* LLTM_H */
