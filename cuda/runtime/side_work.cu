// Side work: per device, what is pending on the side stream (pieces queued
// one after the other there), the bytes it touches, and the blocks freed
// meanwhile. A recursive mutex, held by a region for its whole life, keeps
// other threads from settling work whose end is not recorded yet, while the
// region's own thread may allocate and free.
#include <algorithm>
#include <memory>

#include "lltm_args.h"
#include "runtime/device.h"
#include "runtime/lanes.h"
#include "runtime/memory_pool.h"
#include "runtime/side_work.h"

namespace lltm::cuda {

namespace {

struct Pending {
  std::recursive_mutex mutex;
  bool pending = false;
  cudaEvent_t fork = nullptr, done = nullptr;
  double flops = 0;
  std::vector<Span> touched;
  std::vector<void*> deferred;  // blocks freed while pending
};

Pending& pending_of(int device) {
  static std::vector<std::unique_ptr<Pending>> all = [] {
    std::vector<std::unique_ptr<Pending>> v(device_count());
    for (auto& p : v) p = std::make_unique<Pending>();
    return v;
  }();
  return *all.at(device);
}

thread_local cudaStream_t region_stream = nullptr;
thread_local int region_device = -1;

// The bytes of a block of the memory pool.
Span block_span(void* data, uint64_t bytes) {
  return {reinterpret_cast<uintptr_t>(data), reinterpret_cast<uintptr_t>(data) + uintptr_t(bytes)};
}

// The device's stream waits for the pending work; the blocks freed meanwhile go back to the pool. Holds p.mutex.
void settle(Pending& p, int device) {
  if (!p.pending) return;
  DeviceGuard guard(device);
  LLTM_CUDA_CHECK(cudaStreamWaitEvent(state(device).stream, p.done, 0));
  p.pending = false;
  p.flops = 0;
  p.touched.clear();
  std::vector<void*> blocks;
  blocks.swap(p.deferred);
  // Settled on one lane (runtime/lanes.h), a block is not yet safe on the others: it waits for their join.
  for (void* block : blocks)
    if (!park_free(device, block)) free_now(block, device);
}

}  // namespace

Span tensor_span(const lltm_tensor& t) {
  int64_t last = 0;
  for (int64_t d = 0; d < t.ndim; ++d) last += (t.sizes[d] - 1) * t.strides[d];
  return span_of(t, last, element_size(int32_t(t.dtype)));
}

SideWork::SideWork(int device, std::vector<Span> touched, double flops) : device_(device) {
  Pending& p = pending_of(device);
  lock_ = std::unique_lock<std::recursive_mutex>(p.mutex);
  const DeviceState& dev = state(device);
  if (p.fork == nullptr) {
    LLTM_CUDA_CHECK(cudaEventCreateWithFlags(&p.fork, cudaEventDisableTiming));
    LLTM_CUDA_CHECK(cudaEventCreateWithFlags(&p.done, cudaEventDisableTiming));
  }
  LLTM_CUDA_CHECK(cudaEventRecord(p.fork, dev.stream));
  LLTM_CUDA_CHECK(cudaStreamWaitEvent(dev.side, p.fork, 0));
  // Pending from the fork on: a block freed from now may be in use on either stream.
  p.pending = true;
  p.flops += flops;
  p.touched.insert(p.touched.end(), touched.begin(), touched.end());
  stream_ = dev.side;
  region_stream = stream_;
  region_device = device;
}

SideWork::~SideWork() {
  region_stream = nullptr;
  region_device = -1;
  // Recorded even when the region's work failed part way: what was queued is settled like the rest.
  guard([&] { LLTM_CUDA_CHECK(cudaEventRecord(pending_of(device_).done, stream_)); });
}

void settle_side_work(int device, const lltm_tensor* const* tensors, size_t count) {
  if (device < 0 || device >= device_count()) return;
  Pending& p = pending_of(device);
  std::lock_guard<std::recursive_mutex> lock(p.mutex);
  if (!p.pending) return;
  for (size_t i = 0; i < count; ++i) {
    if (tensors[i] == nullptr) continue;
    const Span span = tensor_span(*tensors[i]);
    if (std::any_of(p.touched.begin(), p.touched.end(), [&](const Span& s) { return meet(s, span); }))
      return settle(p, device);
  }
}

void settle_side_work(int device) {
  if (device < 0 || device >= device_count()) return;
  Pending& p = pending_of(device);
  std::lock_guard<std::recursive_mutex> lock(p.mutex);
  settle(p, device);
}

double side_work_flops(int device) {
  Pending& p = pending_of(device);
  std::lock_guard<std::recursive_mutex> lock(p.mutex);
  return p.flops;
}

bool defer_free(int device, void* data, uint64_t bytes) {
  Pending& p = pending_of(device);
  std::lock_guard<std::recursive_mutex> lock(p.mutex);
  if (!p.pending) return false;
  const Span block = block_span(data, bytes);
  if (std::none_of(p.touched.begin(), p.touched.end(), [&](const Span& s) { return meet(s, block); })) return false;
  p.deferred.push_back(data);
  return true;
}

cudaStream_t side_allocation_stream() { return region_stream; }

void note_side_block(void* data, uint64_t bytes) {
  // Only the region's thread gets here (region_stream is its own), and it holds the mutex.
  Pending& p = pending_of(region_device);
  p.touched.push_back(block_span(data, bytes));
}

}  // namespace lltm::cuda
