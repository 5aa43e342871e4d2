// Loads liblltm_cuda from the directory this library was loaded from, so that
// liblltm itself needs no CUDA runtime and works on machines without one.
#include <mutex>
#include <string>

#include "backend.h"
#include "cuda_driver.h"
#include "lltm.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace lltm {

namespace {

#if defined(_WIN32)
constexpr const char* kCudaLibrary = "lltm_cuda.dll";
#elif defined(__APPLE__)
constexpr const char* kCudaLibrary = "liblltm_cuda.dylib";
#else
constexpr const char* kCudaLibrary = "liblltm_cuda.so";
#endif

std::string own_directory() {
#if defined(_WIN32)
  HMODULE self = nullptr;
  GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                     reinterpret_cast<LPCSTR>(&own_directory), &self);
  char path[MAX_PATH];
  GetModuleFileNameA(self, path, MAX_PATH);
  std::string p(path);
  return p.substr(0, p.find_last_of("\\/") + 1);
#else
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string p(info.dli_fname);
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? "" : p.substr(0, slash + 1);
#endif
}

struct Loaded {
  const DeviceBackend* backend = nullptr;
  std::string why;
};

Loaded load() {
  Loaded result;
  const std::string path = own_directory() + kCudaLibrary;
#if defined(_WIN32)
  HMODULE handle = LoadLibraryA(path.c_str());
  if (handle == nullptr) {
    result.why = "this liblltm has no CUDA backend beside it (" + path + " could not be loaded)";
    return result;
  }
  auto entry = reinterpret_cast<lltm_backend_entry>(GetProcAddress(handle, "lltm_backend_v1"));
#else
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    result.why = "this liblltm has no CUDA backend beside it (" + std::string(err ? err : path) + ")";
    return result;
  }
  auto entry = reinterpret_cast<lltm_backend_entry>(dlsym(handle, "lltm_backend_v1"));
#endif
  if (entry == nullptr) {
    result.why = path + " does not export lltm_backend_v1";
    return result;
  }
#ifdef LLTM_CUDA_BUILD_VERSION
  result.why = cuda_driver_problem(LLTM_CUDA_BUILD_VERSION);
  if (!result.why.empty()) return result;
#endif
  const DeviceBackend* backend = entry();
  if (backend == nullptr) {
    result.why = path + ": lltm_backend_v1 returned no backend table";
    return result;
  }
  if (backend->api_version != LLTM_BACKEND_API_VERSION) {
    result.why = path + " has backend API version " + std::to_string(backend->api_version) +
                 ", but this liblltm needs version " + std::to_string(LLTM_BACKEND_API_VERSION) +
                 "; rebuild both with `npm run build`";
    return result;
  }
  result.backend = backend;
  return result;
}

}  // namespace

const DeviceBackend* cuda_backend(const char** why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (why != nullptr) *why = loaded.why.c_str();
  return loaded.backend;
}

}  // namespace lltm

LLTM_API const char* lltm_cuda_blas(void) {
  const lltm::DeviceBackend* backend = lltm::cuda_backend(nullptr);
  return backend == nullptr ? "" : backend->blas();
}
