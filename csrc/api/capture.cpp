// Step capture entry points: the CUDA backend records and replays; the CPU has no launches to save.
#include <string>

#include "api/device.h"
#include "lltm.h"

using namespace lltm;
using api::entry;
using api::on_device;

namespace {

void refuse_cpu(const char* fn) {
  fail(LLTM_ERR_BACKEND_UNAVAILABLE, std::string(fn) + ": capture is for CUDA devices; on the CPU run the step itself");
}

}  // namespace

extern "C" {

LLTM_API int32_t lltm_capture_begin(int32_t device_kind, int32_t device_index) {
  const char* fn = "lltm_capture_begin";
  return entry(fn, [&] {
    on_device(
        fn, device_kind, device_index, [&] { refuse_cpu(fn); },
        [&](const DeviceBackend& b) { return b.capture_begin(device_index); });
  });
}

LLTM_API int32_t lltm_capture_end(int32_t device_kind, int32_t device_index, void** graph) {
  if (graph != nullptr) *graph = nullptr;
  const char* fn = "lltm_capture_end";
  return entry(fn, [&] {
    on_device(
        fn, device_kind, device_index, [&] { refuse_cpu(fn); },
        [&](const DeviceBackend& b) { return b.capture_end(device_index, graph); });
  });
}

LLTM_API int32_t lltm_graph_replay(void* graph, int32_t device_kind, int32_t device_index) {
  const char* fn = "lltm_graph_replay";
  return entry(fn, [&] {
    if (graph == nullptr) fail(LLTM_ERR_NULL_POINTER, "lltm_graph_replay: 'graph' is a null pointer");
    on_device(
        fn, device_kind, device_index, [&] { refuse_cpu(fn); },
        [&](const DeviceBackend& b) { return b.graph_replay(graph, device_index); });
  });
}

LLTM_API int32_t lltm_graph_destroy(void* graph, int32_t device_kind, int32_t device_index) {
  if (graph == nullptr) return LLTM_OK;
  const char* fn = "lltm_graph_destroy";
  return entry(fn, [&] {
    on_device(
        fn, device_kind, device_index, [&] { refuse_cpu(fn); },
        [&](const DeviceBackend& b) { return b.graph_destroy(graph, device_index); });
  });
}

}  // extern "C"
