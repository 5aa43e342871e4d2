#include "api/run.h"

#include <memory>

#include "api/device.h"
#include "api/staging.h"
#include "api/validate.h"
#include "cpu/lltm_cpu.h"
#include "lltm_args.h"
#include "op_slots.h"
#include "ops/dtypes.h"
#include "overlap.h"

namespace lltm::api {

namespace {

// COPY moves between any two devices and converts between any two float
// types; on one device a copy onto the very same view has nothing to do.
void run_copy(const ops::Checking& c) {
  namespace s = slots::COPY;
  const lltm_call& g = c.given;
  const lltm_tensor& dst = g.tensors[s::dst];
  const lltm_tensor& src = g.tensors[s::src];
  const DeviceBackend* dst_backend = device_for(g.device_kind, g.device_index, c.fn, "dst");
  const DeviceBackend* src_backend = device_for(g.src_device_kind, g.src_device_index, c.fn, "src");
  if (g.device_kind == g.src_device_kind && g.device_index == g.src_device_index && dst.dtype == src.dtype &&
      same_view(dst, src))
    return;
  const DeviceBackend* backend = dst_backend != nullptr ? dst_backend : src_backend;
  if (backend == nullptr) {
    cpu::copy(dst, src, c.fn);
    return;
  }
  // The device backend moves contiguous host memory only: strided host
  // tensors are gathered or scattered here, through a contiguous buffer.
  const bool host_dst = dst_backend == nullptr, host_src = src_backend == nullptr;
  const lltm_tensor* host = host_dst ? &dst : host_src ? &src : nullptr;
  if (host == nullptr || is_contiguous(*host)) {
    check(backend, backend->copy(&dst, !host_dst, g.device_index, &src, !host_src, g.src_device_index, g.flags));
    return;
  }
  std::unique_ptr<void, void (*)(void*)> buffer(
      cpu::alloc(uint64_t(numel(*host) * element_size(int32_t(host->dtype)))), cpu::free);
  const lltm_tensor staged = contiguous_like(*host, buffer.get());
  if (host_src) {
    cpu::copy(staged, src, c.fn);
    check(backend, backend->copy(&dst, 1, g.device_index, &staged, 0, g.src_device_index, 0));
  } else {
    check(backend, backend->copy(&staged, 0, g.device_index, &src, 1, g.src_device_index, 0));
    cpu::copy(dst, staged, c.fn);
  }
}

// The half type (LLTM_BFLOAT16 or LLTM_FLOAT16) that every FLOAT tensor of
// the call has (where `inputs_only`, every one it reads: what it only writes
// or accumulates may be wider, as mixed precision's float32 parameter
// gradients beside bfloat16 weights are), or -1 where they differ, another
// type is among them, or there are none.
int32_t one_half_type(const ops::Checking& c, bool inputs_only = false) {
  int32_t half = -1;
  for (int k = 0; k < c.op.n_slots; ++k) {
    const lltm_tensor* t = c.call.tensors[k];
    if (t == nullptr || !is_float_dtype(t->dtype) || (inputs_only && !c.op.slots[k].reads())) continue;
    if ((t->dtype != LLTM_BFLOAT16 && t->dtype != LLTM_FLOAT16) || (half != -1 && t->dtype != half)) return -1;
    half = int32_t(t->dtype);
  }
  return half;
}

// A half-type call staged through float32 may round its products' operands to
// what its own type holds.
void round_products_to_half(ops::Checking& c, int32_t half) {
  if (half != -1) c.call.float32_matmul_precision = half_call_precision(half, c.call.float32_matmul_precision);
}

// A call whose FLOAT tensors all have one half type (`half`, from
// one_half_type) runs in that type, with nothing staged, where the device
// backend takes the op so.
bool runs_in_half(ops::Checking& c, const DeviceBackend* backend, int32_t half) {
  if (backend == nullptr || half == -1 || c.call.compute != LLTM_FLOAT32 || backend->takes_half(c.op.id) == 0)
    return false;
  c.call.compute = half;
  c.converted = 0;
  return true;
}

// A CPU call whose FLOAT tensors are all bfloat16 and contiguous (or float32 where the kernel takes
// that too: mixed precision's parameter gradients), of an op with a bfloat16 kernel this CPU can run,
// goes to that kernel as it is, with no float32 copies (its other tensors, a reserve's bytes or int32
// lengths, as the op takes them).
bool run_bf16(ops::Checking& c) {
  if (!cpu::has_bf16_kernel(c.op.id, c.fn)) return false;
  const uint32_t wide = cpu::bf16_float32_slots(c.op.id, c.fn);
  for (int k = 0; k < c.op.n_slots; ++k) {
    const lltm_tensor* t = c.call.tensors[k];
    if (t == nullptr || !is_float_dtype(t->dtype)) continue;
    const bool typed = t->dtype == LLTM_BFLOAT16 || (t->dtype == LLTM_FLOAT32 && (wide >> k & 1u) != 0);
    if (!typed || !is_contiguous(*t)) return false;
  }
  OpCall call = c.call;
  call.compute = LLTM_BFLOAT16;
  cpu::run_bf16(call, c.fn);
  return true;
}

void run_on(ops::Checking& c, const DeviceBackend* backend) {
  if (backend == nullptr)
    cpu::run(c.call, c.fn);
  else
    check(backend, backend->run(&c.call, c.given.device_index));
}

}  // namespace

void run_op(const char* fn, const ops::OpSchema& op, const lltm_call& given, bool typed) {
  OpCall call;
  ops::Checking c(fn, given, op, call);
  c.typed = typed;
  validate(c);
  if (op.id == LLTM_OP_COPY) {
    run_copy(c);
    return;
  }
  const DeviceBackend* backend = device_for(given.device_kind, given.device_index, fn);
  const int32_t half = c.converted == 0 ? -1 : one_half_type(c);
  if (c.converted == 0 || runs_in_half(c, backend, half)) {
    run_on(c, backend);
    return;
  }
  if (backend == nullptr && run_bf16(c)) return;
  round_products_to_half(c, one_half_type(c, true));
  Staging staging(c, backend, given.device_index);
  run_on(c, backend);
  staging.write_back();
}

}  // namespace lltm::api
