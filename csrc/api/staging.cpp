#include "api/staging.h"

#include "api/device.h"
#include "cpu/lltm_cpu.h"
#include "lltm_args.h"
#include "ops/dtypes.h"
#include "status.h"

#include <string>

namespace lltm::api {

namespace {

// The bytes of a contiguous copy of t in `dtype`; a broadcast view's count may pass 64 bits.
uint64_t staged_bytes(const lltm_tensor& t, int32_t dtype, const char* fn, const char* name) {
  uint64_t n = uint64_t(element_size(dtype));
  for (int64_t d = 0; d < t.ndim; ++d)
    if (__builtin_mul_overflow(n, uint64_t(t.sizes[d]), &n) || n > kMaxBytes)
      fail(LLTM_ERR_OUT_OF_MEMORY, std::string(fn) + ": '" + name + "' has more elements than a staged copy in " +
                                       dtype_info(dtype)->name + " can hold");
  return n;
}

}  // namespace

Staging::Staging(ops::Checking& c, const DeviceBackend* backend, int32_t device)
    : c_(c), backend_(backend), device_(device) {
  try {
    stage();
  } catch (...) {
    release();
    throw;
  }
}

void Staging::stage() {
  ops::Checking& c = c_;
  const bool accumulate = (c.call.flags & LLTM_ACCUMULATE_PARAM_GRADS) != 0 && c.op.flags & LLTM_ACCUMULATE_PARAM_GRADS;
  for (uint32_t m = c.converted; m != 0; m &= m - 1) {
    const int k = __builtin_ctz(m);
    const lltm_tensor* t = c.call.tensors[k];
    const ops::SlotSchema& slot = c.op.slots[k];
    // Counted as the caller's view: a broadcast input stays small only if copied as is, so its
    // temporary has the view's full sizes (check_tensor bounds them).
    tensors_[k] = contiguous_like(*t, nullptr);
    tensors_[k].dtype = c.call.compute;
    tensors_[k].data = alloc(staged_bytes(*t, c.call.compute, c.fn, slot.name));
    staged_ |= 1u << k;
    const bool acc = (slot.bits & ops::decl::ACC) != 0;
    if (slot.reads() || (acc && accumulate)) convert(tensors_[k], *t);
    c.call.tensors[k] = &tensors_[k];
  }
}

Staging::~Staging() { release(); }

void Staging::release() noexcept {
  for (int k = 0; k < c_.op.n_slots; ++k) {
    if ((staged_ >> k & 1u) == 0) continue;
    if (backend_ == nullptr)
      cpu::free(tensors_[k].data);
    else
      backend_->free(tensors_[k].data, device_);
  }
  staged_ = 0;
}

void Staging::write_back() {
  for (int k = 0; k < c_.op.n_slots; ++k)
    if ((staged_ >> k & 1u) != 0 && c_.op.slots[k].writes()) convert(c_.given.tensors[k], tensors_[k]);
}

void* Staging::alloc(uint64_t bytes) {
  if (backend_ == nullptr) return cpu::alloc(bytes);
  void* p = nullptr;
  check(backend_, backend_->alloc(bytes, device_, &p));
  return p;
}

void Staging::convert(const lltm_tensor& dst, const lltm_tensor& src) {
  if (backend_ == nullptr)
    cpu::copy(dst, src, c_.fn);
  else
    check(backend_, backend_->copy(&dst, 1, device_, &src, 1, device_, 0));
}

}  // namespace lltm::api
