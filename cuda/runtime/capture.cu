// Step capture: one capture at a time per device, by one thread, recorded in
// relaxed mode (the kernels' first launches may query occupancy or set
// attributes, which a stricter mode refuses) on the device's own stream;
// memory handed out or freed meanwhile stays with the graph
// (memory_pool.h). Replays are plain graph launches on that stream.
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/capture.h"
#include "runtime/device.h"
#include "runtime/memory_pool.h"
#include "runtime/side_work.h"

namespace lltm::cuda {

namespace {

struct Graph {
  cudaGraphExec_t exec;
  GraphMemory* memory;
  int device;
};

// The thread capturing each device (a default id: none).
std::vector<std::atomic<std::thread::id>>& capturers() {
  static std::vector<std::atomic<std::thread::id>> all(device_count());
  return all;
}

// Held shared by a call of a thread other than the capturer (StreamHold) and
// exclusively while a capture begins or ends, per device.
std::vector<std::shared_mutex>& stream_locks() {
  static std::vector<std::shared_mutex> all(device_count());
  return all;
}

std::string name(int device) { return "cuda:" + std::to_string(device); }

Graph* graph_of(void* handle, int device, const char* fn) {
  Graph* g = static_cast<Graph*>(handle);
  if (g->device != device)
    fail(LLTM_ERR_INVALID_DEVICE, std::string(fn) + ": the graph was captured on " + name(g->device) + ", not " +
                                      name(device));
  return g;
}

}  // namespace

bool recording(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

StreamHold::StreamHold(int device, const char* fn, bool waits) {
  if (device < 0 || device >= device_count()) return;
  // Only this thread ends its own capture, so the capturer it reads here stays the capturer for the call.
  if (capturers()[device].load() == std::this_thread::get_id()) {
    if (waits)
      fail(LLTM_ERR_INVALID_ARGUMENT,
           std::string(fn) + ": " + name(device) +
               " is being captured, and a captured step cannot wait for the device or read it to the host (read "
               "results such as loss.item() after the step)");
    return;
  }
  lock_ = std::shared_lock<std::shared_mutex>(stream_locks()[device]);
  if (capturers()[device].load() != std::thread::id())
    fail(LLTM_ERR_INVALID_ARGUMENT, std::string(fn) + ": " + name(device) +
                                        " is being captured by another thread; its stream takes no other work until "
                                        "the capture ends");
}

void capture_begin(int device) {
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  // Other threads' calls in flight finish first; those after see the capture and are refused.
  std::unique_lock<std::shared_mutex> calls(stream_locks()[device]);
  std::thread::id none;
  if (!capturers()[device].compare_exchange_strong(none, std::this_thread::get_id()))
    fail(LLTM_ERR_INVALID_ARGUMENT, "lltm_capture_begin: a capture is already in progress on " + name(device));
  // Side work queued before the capture is no part of it.
  settle_side_work(device);
  begin_capture_memory(device);
  const cudaError_t e = cudaStreamBeginCapture(dev.stream, cudaStreamCaptureModeRelaxed);
  if (e != cudaSuccess) {
    release_graph_memory(end_capture_memory(device), device);
    capturers()[device].store(std::thread::id());
    check(e, "cudaStreamBeginCapture");
  }
}

void* capture_end(int device, bool keep) {
  if (device < 0 || device >= device_count() || capturers()[device].load() != std::this_thread::get_id())
    fail(LLTM_ERR_INVALID_ARGUMENT, "lltm_capture_end: this thread is not capturing " + name(device));
  DeviceGuard guard(device);
  DeviceState& dev = state(device);
  cudaGraph_t graph = nullptr;
  GraphMemory* memory = nullptr;
  cudaError_t ended = cudaSuccess;
  {
    std::unique_lock<std::shared_mutex> calls(stream_locks()[device]);
    // The captured side work joins the device's stream, as a capture must end.
    settle_side_work(device);
    ended = cudaStreamEndCapture(dev.stream, &graph);
    memory = end_capture_memory(device);
    capturers()[device].store(std::thread::id());
  }
  cudaGetLastError();
  if (ended != cudaSuccess || !keep) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    release_graph_memory(memory, device);
    if (keep) check(ended, "cudaStreamEndCapture");
    return nullptr;
  }
  cudaGraphExec_t exec = nullptr;
  // Replayed with the priorities its kernels were captured with (side work's below the stream's).
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUseNodePriority);
  cudaGraphDestroy(graph);
  if (made != cudaSuccess) {
    release_graph_memory(memory, device);
    check(made, "cudaGraphInstantiate");
  }
  return new Graph{exec, memory, device};
}

void graph_replay(void* handle, int device) {
  Graph* g = graph_of(handle, device, "lltm_graph_replay");
  const StreamHold hold(device, "lltm_graph_replay", false);
  settle_side_work(device);
  DeviceGuard guard(device);
  LLTM_CUDA_CHECK(cudaGraphLaunch(g->exec, state(device).stream));
}

void graph_destroy(void* handle, int device) {
  Graph* g = graph_of(handle, device, "lltm_graph_destroy");
  const StreamHold hold(device, "lltm_graph_destroy", true);
  settle_side_work(device);
  DeviceGuard guard(device);
  LLTM_CUDA_CHECK(cudaStreamSynchronize(state(device).stream));
  LLTM_CUDA_CHECK(cudaGraphExecDestroy(g->exec));
  release_graph_memory(g->memory, device);
  delete g;
}

}  // namespace lltm::cuda
