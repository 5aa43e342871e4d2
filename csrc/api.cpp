// The exported C functions: validate everything, then hand the call to the
// CPU kernels or to the device backend.
#include <cstring>
#include <memory>
#include <string>

#include "backend.h"
#include "cpu/lltm_cpu.h"
#include "lltm.h"
#include "lltm_args.h"
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
  return guard([&] {
    ForwardArgs args{input,  weights,     bias,           old_h, old_cell, new_h, new_cell, input_gate,
                     output_gate, candidate_cell, X, gate_weights, {}};
    check_dtype(dtype, "lltm_forward");
    args.n = validate(args);
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_forward");
    if (backend == nullptr)
      cpu::lltm_forward(args, dtype);
    else
      check(backend, backend->forward(&args, dtype, device_index));
  });
}

LLTM_API int32_t lltm_backward_ex(const lltm_tensor* grad_h, const lltm_tensor* grad_cell,
                                  const lltm_tensor* new_cell, const lltm_tensor* input_gate,
                                  const lltm_tensor* output_gate, const lltm_tensor* candidate_cell,
                                  const lltm_tensor* X, const lltm_tensor* gate_weights, const lltm_tensor* weights,
                                  const lltm_tensor* d_old_h, const lltm_tensor* d_input,
                                  const lltm_tensor* d_weights, const lltm_tensor* d_bias,
                                  const lltm_tensor* d_old_cell, uint32_t flags, int32_t dtype, int32_t device_kind,
                                  int32_t device_index) {
  return guard([&] {
    BackwardArgs args{grad_h,  grad_cell, new_cell,  input_gate, output_gate, candidate_cell, X,
                      gate_weights, weights, d_old_h, d_input, d_weights, d_bias, d_old_cell, {},
                      (flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0};
    if ((flags & ~LLTM_ACCUMULATE_PARAM_GRADS) != 0)
      fail(LLTM_ERR_INVALID_ARGUMENT, "lltm_backward_ex: unknown bits in flags " + std::to_string(flags));
    check_dtype(dtype, "lltm_backward");
    args.n = validate(args);
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_backward");
    if (backend == nullptr)
      cpu::lltm_backward(args, dtype);
    else
      check(backend, backend->backward(&args, dtype, device_index));
  });
}

LLTM_API int32_t lltm_backward(const lltm_tensor* grad_h, const lltm_tensor* grad_cell, const lltm_tensor* new_cell,
                               const lltm_tensor* input_gate, const lltm_tensor* output_gate,
                               const lltm_tensor* candidate_cell, const lltm_tensor* X,
                               const lltm_tensor* gate_weights, const lltm_tensor* weights,
                               const lltm_tensor* d_old_h, const lltm_tensor* d_input,
                               const lltm_tensor* d_weights, const lltm_tensor* d_bias,
                               const lltm_tensor* d_old_cell, int32_t dtype, int32_t device_kind,
                               int32_t device_index) {
  return lltm_backward_ex(grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X, gate_weights,
                          weights, d_old_h, d_input, d_weights, d_bias, d_old_cell, 0, dtype, device_kind,
                          device_index);
}

LLTM_API int32_t lltm_alloc(uint64_t bytes, int32_t device_kind, int32_t device_index, void** out) {
  if (out != nullptr) *out = nullptr;
  return guard([&] {
    if (out == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_alloc: 'out' is a null pointer");
    if (bytes == 0) fail(LLTM_ERR_INVALID_SHAPE, "lltm_alloc: bytes must be positive, got 0");
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_alloc");
    if (backend == nullptr) {
      *out = cpu::alloc(bytes);
    } else {
      void* p = backend->alloc(bytes, device_index);
      if (p == nullptr) fail(LLTM_ERR_OUT_OF_MEMORY, backend->last_error());
      *out = p;
    }
  });
}

LLTM_API int32_t lltm_free(void* data, int32_t device_kind, int32_t device_index) {
  return guard([&] {
    if (data == nullptr) return;
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_free");
    if (backend == nullptr)
      cpu::free(data);
    else
      check(backend, backend->free(data, device_index));
  });
}

LLTM_API int32_t lltm_copy(const lltm_tensor* dst, int32_t dst_kind, int32_t dst_index, const lltm_tensor* src,
                           int32_t src_kind, int32_t src_index, int32_t dtype) {
  return guard([&] {
    check_dtype(dtype, "lltm_copy");
    check_tensor(dst, "lltm_copy", "dst", true);
    check_tensor(src, "lltm_copy", "src", false);
    check_same_sizes(dst, "lltm_copy: 'dst'", src, "'src'");
    const DeviceBackend* dst_backend = device_for(dst_kind, dst_index, "lltm_copy (dst)");
    const DeviceBackend* src_backend = device_for(src_kind, src_index, "lltm_copy (src)");
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
  return guard([&] {
    check_dtype(dtype, "lltm_fill");
    check_tensor(dst, "lltm_fill", "dst", true);
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_fill");
    if (backend == nullptr)
      cpu::fill(*dst, value, dtype);
    else
      check(backend, backend->fill(dst, value, dtype, device_index));
  });
}

LLTM_API int32_t lltm_axpy(const lltm_tensor* y, double alpha, const lltm_tensor* x, int32_t dtype,
                           int32_t device_kind, int32_t device_index) {
  return guard([&] {
    check_dtype(dtype, "lltm_axpy");
    check_tensor(y, "lltm_axpy", "y", true);
    check_tensor(x, "lltm_axpy", "x", false);
    check_same_sizes(y, "lltm_axpy: 'y'", x, "'x'");
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_axpy");
    if (backend == nullptr)
      cpu::axpy(*y, alpha, *x, dtype);
    else
      check(backend, backend->axpy(y, alpha, x, dtype, device_index));
  });
}

LLTM_API int32_t lltm_sgd_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* momentum_buffer,
                               double lr, double momentum, int32_t dtype, int32_t device_kind, int32_t device_index) {
  return guard([&] {
    check_dtype(dtype, "lltm_sgd_step");
    const SgdArgs args{param, grad, momentum_buffer, lr, momentum};
    validate(args);
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_sgd_step");
    if (backend == nullptr)
      cpu::sgd_step(args, dtype);
    else
      check(backend, backend->sgd_step(&args, dtype, device_index));
  });
}

LLTM_API int32_t lltm_adam_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* exp_avg,
                                const lltm_tensor* exp_avg_sq, double lr, double beta1, double beta2, double eps,
                                int64_t step, int32_t dtype, int32_t device_kind, int32_t device_index) {
  return guard([&] {
    check_dtype(dtype, "lltm_adam_step");
    const AdamArgs args{param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, step};
    validate(args);
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_adam_step");
    if (backend == nullptr)
      cpu::adam_step(args, dtype);
    else
      check(backend, backend->adam_step(&args, dtype, device_index));
  });
}

LLTM_API int32_t lltm_read(void* host_dst, const void* src, uint64_t bytes, int32_t device_kind,
                           int32_t device_index) {
  return guard([&] {
    if (host_dst == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_read: 'host_dst' is a null pointer");
    if (src == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_read: 'src' is a null pointer");
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_read");
    if (backend == nullptr)
      std::memcpy(host_dst, src, bytes);
    else
      check(backend, backend->read(host_dst, src, bytes, device_index));
  });
}

LLTM_API int32_t lltm_write(void* dst, const void* host_src, uint64_t bytes, int32_t device_kind,
                            int32_t device_index) {
  return guard([&] {
    if (dst == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_write: 'dst' is a null pointer");
    if (host_src == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_write: 'host_src' is a null pointer");
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_write");
    if (backend == nullptr)
      std::memcpy(dst, host_src, bytes);
    else
      check(backend, backend->write(dst, host_src, bytes, device_index));
  });
}

LLTM_API int32_t lltm_synchronize(int32_t device_kind, int32_t device_index) {
  return guard([&] {
    const DeviceBackend* backend = device_for(device_kind, device_index, "lltm_synchronize");
    if (backend != nullptr) check(backend, backend->synchronize(device_index));
  });
}

LLTM_API const char* lltm_cpu_kernels(void) {
  const char* name = nullptr;
  guard([&] { name = cpu::kernels_name(); });
  return name;
}

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
