// Lanes: per device, how many scopes are open and the blocks freed meanwhile;
// per scope, an event a lane.
#include <memory>
#include <mutex>
#include <string>

#include "runtime/device.h"
#include "runtime/lanes.h"
#include "runtime/memory_pool.h"
#include "status.h"

namespace lltm::cuda {

namespace {

struct Open {
  std::mutex mutex;
  int scopes = 0;
  std::vector<void*> parked;
};

Open& open_on(int device) {
  static std::vector<std::unique_ptr<Open>> all = [] {
    std::vector<std::unique_ptr<Open>> v(device_count());
    for (auto& o : v) o = std::make_unique<Open>();
    return v;
  }();
  return *all.at(size_t(device));
}

// The device whose scope the calling thread has open (-1: none).
thread_local int scope_device = -1;

}  // namespace

Lanes::Lanes(int device, int count) : device_(device), count_(count) {
  if (count < 1 || count > kMaxLanes)
    fail(LLTM_ERR_INTERNAL, "lanes: " + std::to_string(count) + " lanes asked for; 1 to " +
                                std::to_string(kMaxLanes) + " run at once");
  set_thread_lane(device, 0);
  events_.assign(size_t(count), nullptr);
  try {
    for (cudaEvent_t& e : events_) LLTM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    // The fork: every lane after what the device's stream holds now.
    LLTM_CUDA_CHECK(cudaEventRecord(events_[0], state(device).stream));
    for (int k = 1; k < count; ++k) wait(k, 0);
  } catch (...) {
    for (cudaEvent_t e : events_)
      if (e != nullptr) cudaEventDestroy(e);
    throw;
  }
  // Open from here on, when nothing can fail before the destructor runs.
  scope_device = device;
  Open& o = open_on(device);
  std::lock_guard<std::mutex> lock(o.mutex);
  ++o.scopes;
}

Lanes::~Lanes() {
  guard([&] {
    set_thread_lane(device_, 0);
    scope_device = -1;
    // The join, recorded even when a part failed: what was queued is waited for like the rest.
    const cudaStream_t own = state(device_).stream;
    for (int k = 1; k < count_; ++k) {
      signal(k);
      LLTM_CUDA_CHECK(cudaStreamWaitEvent(own, events_[size_t(k)], 0));
    }
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    std::vector<void*> blocks;
    {
      Open& o = open_on(device_);
      std::lock_guard<std::mutex> lock(o.mutex);
      if (--o.scopes == 0) blocks.swap(o.parked);
    }
    for (void* block : blocks) free(block, device_);
  });
}

void Lanes::use(int lane) { set_thread_lane(device_, lane); }

cudaStream_t Lanes::stream_of(int lane) const { return lane_state(device_, lane).stream; }

void Lanes::signal(int lane) { LLTM_CUDA_CHECK(cudaEventRecord(events_.at(size_t(lane)), stream_of(lane))); }

void Lanes::wait(int lane, int on) {
  LLTM_CUDA_CHECK(cudaStreamWaitEvent(stream_of(lane), events_.at(size_t(on)), 0));
}

bool on_shared_lane(int device) { return scope_device == device; }

bool park_free(int device, void* data) {
  Open& o = open_on(device);
  std::lock_guard<std::mutex> lock(o.mutex);
  if (o.scopes == 0) return false;
  o.parked.push_back(data);
  return true;
}

}  // namespace lltm::cuda
