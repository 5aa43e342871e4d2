// liblltm_cuda's one export: the DeviceBackend table that liblltm loads.
#include "backend.h"
#include "device.h"
#include "lltm_cuda.h"
#include "memory_cuda.h"
#include "optimizers_cuda.h"
#include "sequence.h"

namespace lltm::cuda {
namespace {

int32_t device_count_entry() { return device_count(); }

int32_t forward_entry(const ForwardArgs* args, int32_t dtype, int32_t device) {
  return guard([&] { lltm_forward(*args, dtype, device); });
}

int32_t backward_entry(const BackwardArgs* args, int32_t dtype, int32_t device) {
  return guard([&] { lltm_backward(*args, dtype, device); });
}

int32_t alloc_entry(uint64_t bytes, int32_t device, void** out) {
  return guard([&] { *out = alloc(bytes, device); });
}

int32_t free_entry(void* data, int32_t device) {
  return guard([&] { free(data, device); });
}

int32_t copy_entry(const lltm_tensor* dst, int32_t dst_on_device, int32_t dst_device, const lltm_tensor* src,
                   int32_t src_on_device, int32_t src_device, int32_t dtype) {
  return guard([&] { copy(*dst, dst_on_device != 0, dst_device, *src, src_on_device != 0, src_device, dtype); });
}

int32_t fill_entry(const lltm_tensor* dst, double value, int32_t dtype, int32_t device) {
  return guard([&] { fill(*dst, value, dtype, device); });
}

int32_t read_entry(void* host_dst, const void* src, uint64_t bytes, int32_t device) {
  return guard([&] { read(host_dst, src, bytes, device); });
}

int32_t write_entry(void* dst, const void* host_src, uint64_t bytes, int32_t device) {
  return guard([&] { write(dst, host_src, bytes, device); });
}

int32_t synchronize_entry(int32_t device) {
  return guard([&] { synchronize(device); });
}

int32_t axpy_entry(const lltm_tensor* y, double alpha, const lltm_tensor* x, int32_t dtype, int32_t device) {
  return guard([&] { axpy(*y, alpha, *x, dtype, device); });
}

int32_t sgd_entry(const SgdArgs* args, int32_t dtype, int32_t device) {
  return guard([&] { sgd_step(*args, dtype, device); });
}

int32_t adam_entry(const AdamArgs* args, int32_t dtype, int32_t device) {
  return guard([&] { adam_step(*args, dtype, device); });
}

int32_t sequence_forward_entry(const SequenceForwardArgs* args, int32_t dtype, int32_t device) {
  return guard([&] { sequence_forward(*args, dtype, device); });
}

int32_t sequence_backward_entry(const SequenceBackwardArgs* args, int32_t dtype, int32_t device) {
  return guard([&] { sequence_backward(*args, dtype, device); });
}

const DeviceBackend table = {LLTM_BACKEND_API_VERSION, device_count_entry, forward_entry, backward_entry, alloc_entry,
                             free_entry,       copy_entry,         fill_entry,    read_entry,     write_entry,
                             synchronize_entry, axpy_entry, sgd_entry, adam_entry, last_error, sequence_forward_entry,
                             sequence_backward_entry};

}  // namespace
}  // namespace lltm::cuda

extern "C" LLTM_API const lltm::DeviceBackend* lltm_backend_v1() { return &lltm::cuda::table; }
