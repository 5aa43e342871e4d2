// The exported C functions: validate everything, then hand the call to the
// CPU kernels or to the device backend. Every entry point goes through
// `dispatch` (or, for the untyped ones, `on_device`): one guard, one dtype
// check, one device lookup and one CPU-or-backend branch.
#include <cstring>
#include <memory>
#include <string>

#include "backend.h"
#include "cpu/lltm_cpu.h"
#include "cpu/thread_pool.h"
#include "lltm.h"
#include "lltm_args.h"
#include "overlap.h"
#include "status.h"

using namespace lltm;

namespace {

// Checks the device of a call; returns the CUDA backend for a CUDA device, nullptr for the CPU.
const DeviceBackend* device_for(int32_t kind, int32_t index, const char* fn) {
  if (kind == LLTM_CPU) {
    if (index != 0)
      fail(LLTM_ERR_INVALID_DEVICE,
           std::string(fn) + ": device_index must be 0 for the CPU, got " + std::to_string(index));
    return nullptr;
  }
  if (kind != LLTM_CUDA)
    fail(LLTM_ERR_INVALID_DEVICE, std::string(fn) + ": device_kind " + std::to_string(kind) +
                                      " is not cpu (0) or cuda (1)");
  const char* why = nullptr;
  const DeviceBackend* backend = cuda_backend(&why);
  if (backend == nullptr) fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) + ": " + why);
  const int32_t count = backend->device_count();
  if (count == 0) fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) + ": no CUDA GPU is present");
  if (index < 0 || index >= count)
    fail(LLTM_ERR_INVALID_DEVICE, std::string(fn) + ": device_index " + std::to_string(index) +
                                      " is out of range; this machine has " + std::to_string(count) +
                                      " CUDA device" + (count == 1 ? "" : "s"));
  return backend;
}

void check(const DeviceBackend* backend, int32_t status) {
  if (status != LLTM_OK) fail(static_cast<lltm_status>(status), backend->last_error());
}

// Whether `message` starts with the name `fn` (followed by ':' or ' ', so
// that "lltm_backward_ex: ..." does not count as naming lltm_backward).
bool names(const char* message, const char* fn) {
  const size_t n = std::strlen(fn);
  return std::strncmp(message, fn, n) == 0 && (message[n] == ':' || message[n] == ' ');
}

// The frame of every entry point: guard() converts errors to a status, and
// a message from deeper down (a kernel, the device backend, the allocator)
// that does not name the entry point called gets its name in front.
template <typename Body>
int32_t entry(const char* fn, Body&& body) noexcept {
  const int32_t status = guard(body);
  if (status != LLTM_OK && !names(last_error(), fn)) name_last_error(fn);
  return status;
}

// An entry point without a dtype: the device's CPU or backend branch.
template <typename OnCpu, typename OnDevice>
void on_device(const char* fn, int32_t kind, int32_t index, OnCpu&& on_cpu, OnDevice&& on_backend) {
  const DeviceBackend* backend = device_for(kind, index, fn);
  if (backend == nullptr)
    on_cpu();
  else
    check(backend, on_backend(*backend));
}

// A typed entry point: dtype, then the arguments (`validate`, which may
// assume the dtype known), then the device, then the CPU kernel or the
// backend's entry.
template <typename Validate, typename OnCpu, typename OnDevice>
int32_t dispatch(const char* fn, int32_t dtype, int32_t kind, int32_t index, Validate&& validate, OnCpu&& on_cpu,
                 OnDevice&& on_backend) noexcept {
  return entry(fn, [&] {
    check_dtype(dtype, fn);
    validate();
    on_device(fn, kind, index, on_cpu, on_backend);
  });
}

// lltm_backward and lltm_backward_ex, each reporting under its own name.
int32_t backward(const char* fn, const lltm_tensor* grad_h, const lltm_tensor* grad_cell, const lltm_tensor* new_cell,
                 const lltm_tensor* input_gate, const lltm_tensor* output_gate, const lltm_tensor* candidate_cell,
                 const lltm_tensor* X, const lltm_tensor* gate_weights, const lltm_tensor* weights,
                 const lltm_tensor* d_old_h, const lltm_tensor* d_input, const lltm_tensor* d_weights,
                 const lltm_tensor* d_bias, const lltm_tensor* d_old_cell, uint32_t flags, int32_t dtype,
                 int32_t device_kind, int32_t device_index) {
  BackwardArgs args{grad_h,  grad_cell, new_cell,  input_gate, output_gate, candidate_cell, X,
                    gate_weights, weights, d_old_h, d_input, d_weights, d_bias, d_old_cell, {},
                    (flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0};
  return dispatch(
      fn, dtype, device_kind, device_index,
      [&] {
        if ((flags & ~LLTM_ACCUMULATE_PARAM_GRADS) != 0)
          fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": unknown bits in flags " + std::to_string(flags));
        args.n = validate(args, fn, dtype);
      },
      [&] { cpu::lltm_backward(args, dtype); },
      [&](const DeviceBackend& b) { return b.backward(&args, dtype, device_index); });
}

// Byte counts of lltm_read and lltm_write: at most 2^63, and the caller's
// ranges must not wrap the address space.
void check_transfer(const char* fn, const void* dst, const char* dst_name, const void* src, const char* src_name,
                    uint64_t bytes) {
  if (dst == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": '" + dst_name + "' is a null pointer");
  if (src == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": '" + src_name + "' is a null pointer");
  if (bytes > kMaxBytes)
    fail(LLTM_ERR_INVALID_SHAPE, std::string(fn) + ": bytes must be at most 2^63, got " + std::to_string(bytes));
  const uintptr_t last = UINTPTR_MAX - bytes;
  if (reinterpret_cast<uintptr_t>(dst) > last || reinterpret_cast<uintptr_t>(src) > last)
    fail(LLTM_ERR_INVALID_SHAPE, std::string(fn) + ": " + std::to_string(bytes) +
                                     " bytes from there pass the end of the address space");
}

}  // namespace

extern "C" {

LLTM_API uint32_t lltm_abi_version(void) { return LLTM_ABI_VERSION; }

LLTM_API uint32_t lltm_backends(void) { return LLTM_BACKEND_CPU | (lltm_cuda_device_count() > 0 ? LLTM_BACKEND_CUDA : 0); }

LLTM_API const char* lltm_last_error(void) { return last_error(); }

LLTM_API int32_t lltm_cuda_device_count(void) {
  const DeviceBackend* backend = cuda_backend(nullptr);
  return backend == nullptr ? 0 : backend->device_count();
}

LLTM_API int32_t lltm_forward(const lltm_tensor* input, const lltm_tensor* weights, const lltm_tensor* bias,
                              const lltm_tensor* old_h, const lltm_tensor* old_cell, const lltm_tensor* new_h,
                              const lltm_tensor* new_cell, const lltm_tensor* input_gate,
                              const lltm_tensor* output_gate, const lltm_tensor* candidate_cell,
                              const lltm_tensor* X, const lltm_tensor* gate_weights, int32_t dtype,
                              int32_t device_kind, int32_t device_index) {
  ForwardArgs args{input,  weights,     bias,           old_h, old_cell, new_h, new_cell, input_gate,
                   output_gate, candidate_cell, X, gate_weights, {}};
  return dispatch(
      "lltm_forward", dtype, device_kind, device_index, [&] { args.n = validate(args, "lltm_forward", dtype); },
      [&] { cpu::lltm_forward(args, dtype); },
      [&](const DeviceBackend& b) { return b.forward(&args, dtype, device_index); });
}

LLTM_API int32_t lltm_backward_ex(const lltm_tensor* grad_h, const lltm_tensor* grad_cell,
                                  const lltm_tensor* new_cell, const lltm_tensor* input_gate,
                                  const lltm_tensor* output_gate, const lltm_tensor* candidate_cell,
                                  const lltm_tensor* X, const lltm_tensor* gate_weights, const lltm_tensor* weights,
                                  const lltm_tensor* d_old_h, const lltm_tensor* d_input,
                                  const lltm_tensor* d_weights, const lltm_tensor* d_bias,
                                  const lltm_tensor* d_old_cell, uint32_t flags, int32_t dtype, int32_t device_kind,
                                  int32_t device_index) {
  return backward("lltm_backward_ex", grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X,
                  gate_weights, weights, d_old_h, d_input, d_weights, d_bias, d_old_cell, flags, dtype, device_kind,
                  device_index);
}

LLTM_API int32_t lltm_backward(const lltm_tensor* grad_h, const lltm_tensor* grad_cell, const lltm_tensor* new_cell,
                               const lltm_tensor* input_gate, const lltm_tensor* output_gate,
                               const lltm_tensor* candidate_cell, const lltm_tensor* X,
                               const lltm_tensor* gate_weights, const lltm_tensor* weights,
                               const lltm_tensor* d_old_h, const lltm_tensor* d_input,
                               const lltm_tensor* d_weights, const lltm_tensor* d_bias,
                               const lltm_tensor* d_old_cell, int32_t dtype, int32_t device_kind,
                               int32_t device_index) {
  return backward("lltm_backward", grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X,
                  gate_weights, weights, d_old_h, d_input, d_weights, d_bias, d_old_cell, 0, dtype, device_kind,
                  device_index);
}

LLTM_API int32_t lltm_alloc(uint64_t bytes, int32_t device_kind, int32_t device_index, void** out) {
  if (out != nullptr) *out = nullptr;
  const char* fn = "lltm_alloc";
  return entry(fn, [&] {
    if (out == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_alloc: 'out' is a null pointer");
    check_bytes(bytes, fn);
    on_device(
        fn, device_kind, device_index, [&] { *out = cpu::alloc(bytes); },
        [&](const DeviceBackend& b) { return b.alloc(bytes, device_index, out); });
  });
}

LLTM_API int32_t lltm_free(void* data, int32_t device_kind, int32_t device_index) {
  if (data == nullptr) return LLTM_OK;
  return entry("lltm_free", [&] {
    on_device(
        "lltm_free", device_kind, device_index, [&] { cpu::free(data); },
        [&](const DeviceBackend& b) { return b.free(data, device_index); });
  });
}

LLTM_API int32_t lltm_forward_v(const lltm_tensor* t, const int32_t* codes) {
  if (t == nullptr || codes == nullptr)
    return entry("lltm_forward_v", [] { fail(LLTM_ERR_NULL_POINTER, "lltm_forward_v: 'tensors' or 'codes' is a null pointer"); });
  return lltm_forward(t, t + 1, t + 2, t + 3, t + 4, t + 5, t + 6, t + 7, t + 8, t + 9, t + 10, t + 11, codes[0], codes[1],
                      codes[2]);
}

LLTM_API int32_t lltm_backward_ex_v(const lltm_tensor* t, const int32_t* codes) {
  if (t == nullptr || codes == nullptr) {
    return entry("lltm_backward_ex_v",
                 [] { fail(LLTM_ERR_NULL_POINTER, "lltm_backward_ex_v: 'tensors' or 'codes' is a null pointer"); });
  }
  return lltm_backward_ex(t, t + 1, t + 2, t + 3, t + 4, t + 5, t + 6, t + 7, t + 8, t + 9, t + 10, t + 11, t + 12, t + 13,
                          static_cast<uint32_t>(codes[0]), codes[1], codes[2], codes[3]);
}

LLTM_API int32_t lltm_alloc_v(uint64_t bytes, const int32_t* device, void** out) {
  if (device == nullptr) {
    if (out != nullptr) *out = nullptr;
    return entry("lltm_alloc_v", [] { fail(LLTM_ERR_NULL_POINTER, "lltm_alloc_v: 'device' is a null pointer"); });
  }
  return lltm_alloc(bytes, device[0], device[1], out);
}

LLTM_API int32_t lltm_copy(const lltm_tensor* dst, int32_t dst_kind, int32_t dst_index, const lltm_tensor* src,
                           int32_t src_kind, int32_t src_index, int32_t dtype) {
  const char* fn = "lltm_copy";
  return entry(fn, [&] {
    check_dtype(dtype, fn);
    const int64_t dst_last = check_tensor(dst, fn, "dst", true);
    const int64_t src_last = check_tensor(src, fn, "src", false);
    check_same_sizes(fn, dst, "dst", src, "src");
    const DeviceBackend* dst_backend = device_for(dst_kind, dst_index, "lltm_copy (dst)");
    const DeviceBackend* src_backend = device_for(src_kind, src_index, "lltm_copy (src)");
    // Within one device's memory, a copy onto itself has nothing to do; any other overlap is refused.
    if (dst_kind == src_kind && dst_index == src_index) {
      if (same_view(*dst, *src)) return;
      const Named out[] = {{dst, "dst"}}, in[] = {{src, "src"}};
      check_no_overlap(fn, out, {span_of(*dst, dst_last, element_size(dtype))}, in,
                       {span_of(*src, src_last, element_size(dtype))});
    }
    const DeviceBackend* backend = dst_backend != nullptr ? dst_backend : src_backend;
    if (backend == nullptr) {
      cpu::copy(*dst, *src, dtype);
      return;
    }
    // The device backend moves contiguous host memory only: strided host
    // tensors are gathered or scattered here, through a contiguous buffer.
    const bool host_dst = dst_backend == nullptr, host_src = src_backend == nullptr;
    const lltm_tensor* host = host_dst ? dst : host_src ? src : nullptr;
    if (host == nullptr || is_contiguous(*host)) {
      check(backend, backend->copy(dst, !host_dst, dst_index, src, !host_src, src_index, dtype));
      return;
    }
    std::unique_ptr<void, void (*)(void*)> buffer(cpu::alloc(uint64_t(numel(*host) * element_size(dtype))),
                                                  cpu::free);
    const lltm_tensor staged = contiguous_like(*host, buffer.get());
    if (host_src) {
      cpu::copy(staged, *src, dtype);
      check(backend, backend->copy(dst, 1, dst_index, &staged, 0, src_index, dtype));
    } else {
      check(backend, backend->copy(&staged, 0, dst_index, src, 1, src_index, dtype));
      cpu::copy(*dst, staged, dtype);
    }
  });
}

LLTM_API int32_t lltm_fill(const lltm_tensor* dst, double value, int32_t dtype, int32_t device_kind,
                           int32_t device_index) {
  return dispatch(
      "lltm_fill", dtype, device_kind, device_index, [&] { check_tensor(dst, "lltm_fill", "dst", true); },
      [&] { cpu::fill(*dst, value, dtype); },
      [&](const DeviceBackend& b) { return b.fill(dst, value, dtype, device_index); });
}

LLTM_API int32_t lltm_axpy(const lltm_tensor* y, double alpha, const lltm_tensor* x, int32_t dtype,
                           int32_t device_kind, int32_t device_index) {
  const char* fn = "lltm_axpy";
  return dispatch(
      fn, dtype, device_kind, device_index,
      [&] {
        const int64_t y_last = check_tensor(y, fn, "y", true);
        const int64_t x_last = check_tensor(x, fn, "x", false);
        check_same_sizes(fn, y, "y", x, "x");
        // y += alpha * y reads each element before writing it: only a partial overlap is refused.
        if (same_view(*y, *x)) return;
        const Named out[] = {{y, "y"}}, in[] = {{x, "x"}};
        check_no_overlap(fn, out, {span_of(*y, y_last, element_size(dtype))}, in,
                         {span_of(*x, x_last, element_size(dtype))});
      },
      [&] { cpu::axpy(*y, alpha, *x, dtype); },
      [&](const DeviceBackend& b) { return b.axpy(y, alpha, x, dtype, device_index); });
}

LLTM_API int32_t lltm_sgd_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* momentum_buffer,
                               double lr, double momentum, int32_t dtype, int32_t device_kind, int32_t device_index) {
  const SgdArgs args{param, grad, momentum_buffer, lr, momentum};
  return dispatch(
      "lltm_sgd_step", dtype, device_kind, device_index, [&] { validate(args, "lltm_sgd_step", dtype); },
      [&] { cpu::sgd_step(args, dtype); },
      [&](const DeviceBackend& b) { return b.sgd_step(&args, dtype, device_index); });
}

LLTM_API int32_t lltm_adam_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* exp_avg,
                                const lltm_tensor* exp_avg_sq, double lr, double beta1, double beta2, double eps,
                                int64_t step, int32_t dtype, int32_t device_kind, int32_t device_index) {
  const AdamArgs args{param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, step};
  return dispatch(
      "lltm_adam_step", dtype, device_kind, device_index, [&] { validate(args, "lltm_adam_step", dtype); },
      [&] { cpu::adam_step(args, dtype); },
      [&](const DeviceBackend& b) { return b.adam_step(&args, dtype, device_index); });
}

// On the CPU both are plain byte moves; memmove, so that overlapping ranges are handled rather than undefined.
LLTM_API int32_t lltm_read(void* host_dst, const void* src, uint64_t bytes, int32_t device_kind,
                           int32_t device_index) {
  return entry("lltm_read", [&] {
    check_transfer("lltm_read", host_dst, "host_dst", src, "src", bytes);
    on_device(
        "lltm_read", device_kind, device_index, [&] { std::memmove(host_dst, src, bytes); },
        [&](const DeviceBackend& b) { return b.read(host_dst, src, bytes, device_index); });
  });
}

LLTM_API int32_t lltm_write(void* dst, const void* host_src, uint64_t bytes, int32_t device_kind,
                            int32_t device_index) {
  return entry("lltm_write", [&] {
    check_transfer("lltm_write", dst, "dst", host_src, "host_src", bytes);
    on_device(
        "lltm_write", device_kind, device_index, [&] { std::memmove(dst, host_src, bytes); },
        [&](const DeviceBackend& b) { return b.write(dst, host_src, bytes, device_index); });
  });
}

LLTM_API int32_t lltm_synchronize(int32_t device_kind, int32_t device_index) {
  return entry("lltm_synchronize", [&] {
    on_device(
        "lltm_synchronize", device_kind, device_index, [] {},
        [&](const DeviceBackend& b) { return b.synchronize(device_index); });
  });
}

LLTM_API int32_t lltm_sequence_reserve_bytes(int64_t steps, int64_t batch, int64_t input_features,
                                             int64_t state_size, int32_t dtype, int32_t device_kind,
                                             int32_t device_index, uint64_t* bytes) {
  if (bytes != nullptr) *bytes = 0;
  const char* fn = "lltm_sequence_reserve_bytes";
  return entry(fn, [&] {
    if (bytes == nullptr) fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": 'bytes' is a null pointer");
    check_dtype(dtype, fn);
    const std::pair<int64_t, const char*> sizes[] = {
        {steps, "steps"}, {batch, "batch"}, {input_features, "input_features"}, {state_size, "state_size"}};
    for (auto& [value, name] : sizes)
      if (value < 1)
        fail(LLTM_ERR_INVALID_ARGUMENT,
             std::string(fn) + ": '" + name + "' must be at least 1, got " + std::to_string(value));
    device_for(device_kind, device_index, fn);
    *bytes = sequence_reserve_bytes({steps, batch, input_features, state_size}, dtype, fn);
  });
}

LLTM_API int32_t lltm_sequence_forward(const lltm_tensor* inputs, const lltm_tensor* weights, const lltm_tensor* bias,
                                       const lltm_tensor* h0, const lltm_tensor* c0, const lltm_tensor* outputs,
                                       const lltm_tensor* last_h, const lltm_tensor* last_cell, void* reserve,
                                       uint64_t reserve_bytes, uint32_t flags, int32_t dtype, int32_t device_kind,
                                       int32_t device_index) {
  const char* fn = "lltm_sequence_forward";
  const bool training = (flags & LLTM_SEQUENCE_TRAINING) != 0;
  SequenceForwardArgs args{inputs, weights, bias, h0, c0, outputs, last_h, last_cell, training ? reserve : nullptr, {}};
  return dispatch(
      fn, dtype, device_kind, device_index,
      [&] {
        if ((flags & ~LLTM_SEQUENCE_TRAINING) != 0)
          fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": unknown bits in flags " + std::to_string(flags));
        args.n = validate(args, reserve_bytes, training, dtype);
      },
      [&] { cpu::lltm_sequence_forward(args, dtype); },
      [&](const DeviceBackend& b) {
        if (b.sequence_forward == nullptr)
          fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) + ": this CUDA backend has no sequence engine");
        return b.sequence_forward(&args, dtype, device_index);
      });
}

LLTM_API int32_t lltm_sequence_backward(const lltm_tensor* grad_outputs, const lltm_tensor* grad_last_h,
                                        const lltm_tensor* grad_last_cell, const void* reserve,
                                        uint64_t reserve_bytes, const lltm_tensor* inputs,
                                        const lltm_tensor* weights, const lltm_tensor* h0,
                                        const lltm_tensor* d_inputs, const lltm_tensor* d_weights,
                                        const lltm_tensor* d_bias, const lltm_tensor* d_h0,
                                        const lltm_tensor* d_c0, uint32_t flags, int32_t dtype,
                                        int32_t device_kind, int32_t device_index) {
  const char* fn = "lltm_sequence_backward";
  SequenceBackwardArgs args{grad_outputs, grad_last_h, grad_last_cell, reserve, inputs, weights, h0, d_inputs,
                            d_weights,    d_bias,      d_h0,           d_c0,    {},     (flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0};
  return dispatch(
      fn, dtype, device_kind, device_index,
      [&] {
        if ((flags & ~LLTM_ACCUMULATE_PARAM_GRADS) != 0)
          fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": unknown bits in flags " + std::to_string(flags));
        args.n = validate(args, reserve_bytes, dtype);
      },
      [&] { cpu::lltm_sequence_backward(args, dtype); },
      [&](const DeviceBackend& b) {
        if (b.sequence_backward == nullptr)
          fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) + ": this CUDA backend has no sequence engine");
        return b.sequence_backward(&args, dtype, device_index);
      });
}

LLTM_API int32_t lltm_sequence_reserve_bytes_v(const int64_t* sizes, const int32_t* codes, uint64_t* bytes) {
  if (sizes == nullptr || codes == nullptr) {
    if (bytes != nullptr) *bytes = 0;
    return entry("lltm_sequence_reserve_bytes_v",
                 [] { fail(LLTM_ERR_NULL_POINTER, "lltm_sequence_reserve_bytes_v: 'sizes' or 'codes' is a null pointer"); });
  }
  return lltm_sequence_reserve_bytes(sizes[0], sizes[1], sizes[2], sizes[3], codes[0], codes[1], codes[2], bytes);
}

LLTM_API int32_t lltm_sequence_forward_v(const lltm_tensor* t, const uint64_t* reserve, const int32_t* codes) {
  if (t == nullptr || reserve == nullptr || codes == nullptr) {
    return entry("lltm_sequence_forward_v", [] {
      fail(LLTM_ERR_NULL_POINTER, "lltm_sequence_forward_v: 'tensors', 'reserve' or 'codes' is a null pointer");
    });
  }
  return lltm_sequence_forward(t, t + 1, t + 2, t + 3, t + 4, t + 5, t + 6, t + 7,
                               reinterpret_cast<void*>(static_cast<uintptr_t>(reserve[0])), reserve[1],
                               static_cast<uint32_t>(codes[0]), codes[1], codes[2], codes[3]);
}

LLTM_API int32_t lltm_sequence_backward_v(const lltm_tensor* t, const uint64_t* reserve, const int32_t* codes) {
  const char* fn = "lltm_sequence_backward_v";
  if (t == nullptr || reserve == nullptr || codes == nullptr) {
    return entry(fn, [&] {
      fail(LLTM_ERR_NULL_POINTER, std::string(fn) + ": 'tensors', 'reserve' or 'codes' is a null pointer");
    });
  }
  const uint32_t given = static_cast<uint32_t>(codes[4]);
  if ((given & ~7u) != 0) {
    return entry(fn, [&] {
      fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": unknown bits in the gradients given (codes[4]) " +
                                          std::to_string(given) + "; bits 0 to 2 name grad_outputs, grad_last_h, grad_last_cell");
    });
  }
  auto grad = [&](int k) { return (given >> k & 1u) != 0 ? t + k : nullptr; };
  return lltm_sequence_backward(grad(0), grad(1), grad(2), reinterpret_cast<const void*>(static_cast<uintptr_t>(reserve[0])),
                                reserve[1], t + 3, t + 4, t + 5, t + 6, t + 7, t + 8, t + 9, t + 10,
                                static_cast<uint32_t>(codes[0]), codes[1], codes[2], codes[3]);
}

LLTM_API const char* lltm_cpu_kernels(void) {
  const char* name = nullptr;
  guard([&] { name = cpu::kernels_name(); });
  return name;
}

LLTM_API int32_t lltm_cpu_threads(void) { return cpu::thread_count(); }

LLTM_API const char* lltm_cpu_threads_source(void) { return cpu::thread_count_source(); }

}  // extern "C"

// ---- the constants a binding verifies at open (lltm_abi_constant) ----

// The layout every binding writes descriptors with: a 64-bit data pointer, then int64 fields.
static_assert(sizeof(void*) == 8, "lltm_tensor descriptors carry 64-bit addresses");
static_assert(offsetof(lltm_tensor, data) == 0 && offsetof(lltm_tensor, ndim) == 8 &&
                  offsetof(lltm_tensor, sizes) == 16 && offsetof(lltm_tensor, strides) == 16 + 8 * LLTM_MAX_DIMS,
              "lltm_tensor fields at the offsets of csrc/lltm.h");
static_assert(sizeof(lltm_tensor) == 16 + 16 * LLTM_MAX_DIMS, "lltm_tensor without padding");

namespace {

struct AbiConstant {
  const char* name;
  int64_t value;
};

#define LLTM_CONSTANT(name) {#name, int64_t(name)}
constexpr AbiConstant kAbiConstants[] = {
    LLTM_CONSTANT(LLTM_ABI_VERSION),
    LLTM_CONSTANT(LLTM_MAX_DIMS),
    LLTM_CONSTANT(LLTM_OK),
    LLTM_CONSTANT(LLTM_ERR_NULL_POINTER),
    LLTM_CONSTANT(LLTM_ERR_INVALID_SHAPE),
    LLTM_CONSTANT(LLTM_ERR_SHAPE_MISMATCH),
    LLTM_CONSTANT(LLTM_ERR_INVALID_DTYPE),
    LLTM_CONSTANT(LLTM_ERR_INVALID_DEVICE),
    LLTM_CONSTANT(LLTM_ERR_BACKEND_UNAVAILABLE),
    LLTM_CONSTANT(LLTM_ERR_OUT_OF_MEMORY),
    LLTM_CONSTANT(LLTM_ERR_CUDA),
    LLTM_CONSTANT(LLTM_ERR_INTERNAL),
    LLTM_CONSTANT(LLTM_ERR_INVALID_ARGUMENT),
    LLTM_CONSTANT(LLTM_FLOAT32),
    LLTM_CONSTANT(LLTM_FLOAT64),
    LLTM_CONSTANT(LLTM_CPU),
    LLTM_CONSTANT(LLTM_CUDA),
    LLTM_CONSTANT(LLTM_BACKEND_CPU),
    LLTM_CONSTANT(LLTM_BACKEND_CUDA),
    LLTM_CONSTANT(LLTM_ACCUMULATE_PARAM_GRADS),
    LLTM_CONSTANT(LLTM_SEQUENCE_TRAINING),
    {"sizeof(lltm_tensor)", int64_t(sizeof(lltm_tensor))},
    {"offsetof(lltm_tensor, data)", int64_t(offsetof(lltm_tensor, data))},
    {"offsetof(lltm_tensor, ndim)", int64_t(offsetof(lltm_tensor, ndim))},
    {"offsetof(lltm_tensor, sizes)", int64_t(offsetof(lltm_tensor, sizes))},
    {"offsetof(lltm_tensor, strides)", int64_t(offsetof(lltm_tensor, strides))},
};
#undef LLTM_CONSTANT

}  // namespace

extern "C" LLTM_API int32_t lltm_abi_constant(const char* name, int64_t* value) {
  return guard([&] {
    if (name == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_abi_constant: 'name' is a null pointer");
    if (value == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_abi_constant: 'value' is a null pointer");
    for (const AbiConstant& c : kAbiConstants) {
      if (std::strcmp(c.name, name) == 0) {
        *value = c.value;
        return;
      }
    }
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string("lltm_abi_constant: no constant named '") + name + "'");
  });
}
