// What the loaded library is and can run: versions, backends, the CPU kernels and threads, the last error.
#include "backend.h"
#include "cpu/lltm_cpu.h"
#include "cpu/thread_pool.h"
#include "lltm.h"
#include "status.h"

using namespace lltm;

extern "C" {

LLTM_API uint32_t lltm_abi_version(void) { return LLTM_ABI_VERSION; }

LLTM_API uint32_t lltm_backends(void) { return LLTM_BACKEND_CPU | (lltm_cuda_device_count() > 0 ? LLTM_BACKEND_CUDA : 0); }

LLTM_API const char* lltm_last_error(void) { return last_error(); }

LLTM_API int32_t lltm_cuda_device_count(void) {
  const DeviceBackend* backend = cuda_backend(nullptr);
  return backend == nullptr ? 0 : backend->device_count();
}

LLTM_API const char* lltm_cpu_kernels(void) {
  const char* name = nullptr;
  guard([&] { name = cpu::kernels_name(); });
  return name;
}

LLTM_API int32_t lltm_cpu_threads(void) { return cpu::thread_count(); }

LLTM_API const char* lltm_cpu_threads_source(void) { return cpu::thread_count_source(); }

}  // extern "C"
