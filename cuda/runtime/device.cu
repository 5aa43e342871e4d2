// Per-device state, the current-device guard and pooled scratch buffers.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/device.h"
#include "runtime/memory_pool.h"

namespace lltm::cuda {

DeviceGuard::DeviceGuard(int device) : device_(device) {
  LLTM_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device_) LLTM_CUDA_CHECK(cudaSetDevice(device_));
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && previous_ != device_) cudaSetDevice(previous_);
}

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver or no device: report none
      n = 0;
    }
    return n;
  }();
  return count;
}

// Read at every call without a lock, as device_state is: made once, under the mutex, published by a release
// store, kept for the process.
const DeviceFacts& device_facts(int device) {
  static std::mutex mutex;
  static std::vector<std::atomic<const DeviceFacts*>> facts(static_cast<size_t>(device_count()));
  std::atomic<const DeviceFacts*>& slot = facts.at(size_t(device));
  if (const DeviceFacts* known = slot.load(std::memory_order_acquire)) return *known;
  std::lock_guard<std::mutex> lock(mutex);
  if (const DeviceFacts* known = slot.load(std::memory_order_relaxed)) return *known;
  int major = 0, sms = 0, cooperative = 0, cluster = 0, per_block = 0, per_sm = 0, reserved = 0;
  LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, device));
  LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  auto fresh = std::make_unique<const DeviceFacts>(DeviceFacts{
      major, sms, cooperative != 0, cluster != 0, size_t(per_block), size_t(per_sm), size_t(reserved)});
  slot.store(fresh.get(), std::memory_order_release);
  return *fresh.release();
}

const DeviceFacts* current_device_facts() noexcept {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= device_count()) return nullptr;
  try {
    return &device_facts(device);
  } catch (...) {
    return nullptr;
  }
}

namespace {

// The calling thread's lane: on device lane_device, lane (0 elsewhere).
thread_local int lane_device = -1;
thread_local int lane = 0;

DeviceState& device_state(int device);

// The device's and the lanes' streams take the highest priority, which the side stream's lowest yields to.
enum class Priority { kHighest, kLowest };

cudaStream_t new_stream(Priority priority) {
  int least = 0, greatest = 0;
  LLTM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t stream = nullptr;
  const int value = priority == Priority::kHighest ? greatest : least;
  LLTM_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, value));
  return stream;
}

#if LLTM_HAVE_CUBLAS
// A cuBLAS handle whose work goes to `stream` (a handle's workspace serves one stream at a time).
cublasHandle_t blas_on(cudaStream_t stream) {
  cublasHandle_t handle = nullptr;
  LLTM_CUDA_CHECK(cublasCreate(&handle));
  LLTM_CUDA_CHECK(cublasSetStream(handle, stream));
  return handle;
}
#endif

// A lane's state, made on first use and kept for the process: its stream
// takes the device stream's priority, which side work yields to.
DeviceState& other_lane_state(int device, int k) {
  static std::mutex mutex;
  static std::vector<std::vector<std::unique_ptr<DeviceState>>> lanes(static_cast<size_t>(device_count()));
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::unique_ptr<DeviceState>>& of = lanes.at(size_t(device));
  if (of.size() <= size_t(k)) of.resize(size_t(k) + 1);
  if (of[size_t(k)] != nullptr) return *of[size_t(k)];
  const DeviceState& own = device_state(device);
  auto fresh = std::make_unique<DeviceState>();
  fresh->stream = new_stream(Priority::kHighest);
  fresh->side = own.side;
#if LLTM_HAVE_CUBLAS
  if (own.blas != nullptr) {
    fresh->blas = blas_on(fresh->stream);
    fresh->side_blas = own.side_blas;
  }
#endif
  of[size_t(k)] = std::move(fresh);
  return *of[size_t(k)];
}

}  // namespace

DeviceState& lane_state(int device, int lane) {
  return lane == 0 ? device_state(device) : other_lane_state(device, lane);
}

void set_thread_lane(int device, int k) {
  lane_device = k == 0 ? -1 : device;
  lane = k;
}

int thread_lane(int device) { return device == lane_device ? lane : 0; }

DeviceState& state(int device) {
  if (device == lane_device) return lane_state(device, lane);
  return device_state(device);
}

namespace {

// Read at every call without a lock: a device's state is made once, under
// the mutex, and published by a release store; it lives as long as the process.
DeviceState& device_state(int device) {
  static std::mutex mutex;
  static std::vector<std::atomic<DeviceState*>> states(static_cast<size_t>(device_count()));
  std::atomic<DeviceState*>& slot = states.at(size_t(device));
  if (DeviceState* ready = slot.load(std::memory_order_acquire)) return *ready;
  std::lock_guard<std::mutex> lock(mutex);
  if (DeviceState* ready = slot.load(std::memory_order_relaxed)) return *ready;
  auto fresh = std::make_unique<DeviceState>();
  // Side work yields to the device's stream: where both have blocks waiting (the layer below's recurrence and
  // the products left beside it, both waiting for the same kernel), the stream's go first, so that the
  // clusters find whole GPCs free rather than the products' blocks scattered over every one.
  fresh->stream = new_stream(Priority::kHighest);
  fresh->side = new_stream(Priority::kLowest);
#if LLTM_HAVE_CUBLAS
  if (blas_available()) {
    fresh->blas = blas_on(fresh->stream);
    fresh->side_blas = blas_on(fresh->side);
  }
#endif
  // Freed blocks stay in the pool instead of going back to the driver, so
  // that an allocation after the first is served from the pool.
  cudaMemPool_t pool;
  LLTM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep = UINT64_MAX;
  LLTM_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  slot.store(fresh.get(), std::memory_order_release);
  return *fresh.release();
}

}  // namespace

Scratch::Scratch(size_t bytes) {
  if (bytes == 0) return;
  LLTM_CUDA_CHECK(cudaGetDevice(&device_));
  data_ = alloc(bytes, device_);
}

Scratch::~Scratch() {
  if (data_ != nullptr) guard([&] { free(data_, device_); });
}

}  // namespace lltm::cuda
