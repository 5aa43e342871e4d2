// NCCL opened at run time: LLTM_NCCL_LIBRARY (a file or its folder), else the
// dynamic linker's libnccl.so.2, else the nvidia-nccl wheel's folder. NVLink
// multicast (NVLS) is turned off before NCCL reads its environment: a
// program using multicast objects can put a shared host's GPUs out of
// service, and data parallelism gains little from it.
#include <dirent.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "distributed/nccl_api.h"
#include "runtime/python_wheels.h"
#include "status.h"

namespace lltm::cuda::nccl {

namespace {

constexpr const char* kSoname = "libnccl.so.2";

std::string version_text(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

// Opens `path` and fills `out`. Empty on success, else why not.
std::string open_library(const std::string& path, Api& out) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return err ? err : path + " could not be opened";
  }
  Api api;
  std::string missing;
#define LLTM_NCCL_RESOLVE(name, type)                                       \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));                 \
  if (api.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
  LLTM_NCCL_FUNCTIONS(LLTM_NCCL_RESOLVE)
#undef LLTM_NCCL_RESOLVE
  if (!missing.empty()) return path + " lacks " + missing;
  api.ncclGetLastError = reinterpret_cast<const char* (*)(Comm*)>(dlsym(handle, "ncclGetLastError"));
  if (api.ncclGetVersion(&api.version) != ncclSuccess) return path + ": ncclGetVersion failed";
  if (api.version < LLTM_NCCL_MIN_VERSION)
    return path + " is NCCL " + version_text(api.version) + ", but lltm needs NCCL " + version_text(LLTM_NCCL_MIN_VERSION) +
           " or newer (bfloat16 and the average)";
  out = api;
  return "";
}

struct Opened {
  Api api;
  std::string why;  // empty when opened
};

Opened open_nccl() {
  // Before NCCL is loaded, which reads its settings from the environment.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  Opened out;
  const char* named = std::getenv("LLTM_NCCL_LIBRARY");
  if (named != nullptr && *named != '\0') {
    std::string path = named;
    if (DIR* dir = opendir(path.c_str())) {
      closedir(dir);
      path += (path.back() == '/' ? "" : "/") + std::string(kSoname);
    }
    const std::string why = open_library(path, out.api);
    if (!why.empty()) out.why = "LLTM_NCCL_LIBRARY: " + why;
    return out;
  }
  std::string tried = open_library(kSoname, out.api);
  if (tried.empty()) return out;
  for (const std::string& folder : wheel_folders({"nccl"})) {
    if (!is_file(folder + kSoname)) continue;
    const std::string why = open_library(folder + kSoname, out.api);
    if (why.empty()) return out;
    tried += "; " + why;
  }
  out.why = "no usable " + std::string(kSoname) + " was found (" + tried +
            "); install NCCL (the system's libnccl2, or pip's nvidia-nccl-cu13) or name it with LLTM_NCCL_LIBRARY";
  return out;
}

}  // namespace

const Api& api() {
  static std::once_flag once;
  static Opened opened;
  std::call_once(once, [] { opened = open_nccl(); });
  if (!opened.why.empty()) fail(LLTM_ERR_BACKEND_UNAVAILABLE, opened.why);
  return opened.api;
}

void check(Result result, const char* what, Comm* comm) {
  if (result == ncclSuccess) return;
  const Api& a = api();
  std::string message = std::string(what) + " failed: " + a.ncclGetErrorString(result);
  if (a.ncclGetLastError != nullptr) {
    const char* detail = a.ncclGetLastError(comm);
    if (detail != nullptr && *detail != '\0') message += " (" + std::string(detail) + ")";
  }
  fail(LLTM_ERR_CUDA, message);
}

}  // namespace lltm::cuda::nccl
