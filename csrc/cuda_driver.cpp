#include "cuda_driver.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace lltm {

namespace {

std::string cuda_release(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

std::string cuda_driver_problem(int built_with) {
  // The driver library itself, as the CUDA runtime opens it; it stays loaded (the runtime uses it next).
  using GetVersion = int (*)(int*);
#if defined(_WIN32)
  HMODULE driver = LoadLibraryA("nvcuda.dll");
  if (driver == nullptr) return "no NVIDIA driver is installed (nvcuda.dll could not be loaded)";
  auto get_version = reinterpret_cast<GetVersion>(GetProcAddress(driver, "cuDriverGetVersion"));
#else
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* err = dlerror();
    return std::string("no NVIDIA driver is installed (") + (err ? err : "libcuda.so.1 could not be loaded") + ")";
  }
  auto get_version = reinterpret_cast<GetVersion>(dlsym(driver, "cuDriverGetVersion"));
#endif
  int version = 0;
  if (get_version == nullptr || get_version(&version) != 0) return "the NVIDIA driver does not say which CUDA version it supports";
  // The runtime of one major release runs on any driver of that release or later.
  const int needed = built_with / 1000 * 1000;
  if (version >= needed) return "";
  return "the NVIDIA driver supports CUDA " + cuda_release(version) + " (cuDriverGetVersion " + std::to_string(version) +
         "), but this CUDA backend was built with CUDA " + cuda_release(built_with) + " and needs a driver for CUDA " +
         cuda_release(needed) + " or newer; update the NVIDIA driver, or build the backend with a CUDA toolkit this driver " +
         "supports (`await load({ cuda: true })` does, before the first tensor, where the toolkit is installed)";
}

}  // namespace lltm
