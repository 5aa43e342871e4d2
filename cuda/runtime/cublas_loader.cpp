#define LLTM_CUBLAS_LOADER
#include "runtime/cublas_loader.h"

#include <dirent.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "runtime/python_wheels.h"

namespace lltm::cuda {

namespace {

const std::string kSoname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
const std::string kLtSoname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);

struct Opened {
  CublasApi api;
  bool available = false;
  std::string source;
};

std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// Opens cuBLASLt from the folder of `cublas` (when it is there), then cuBLAS; fills the table. Empty on success, else why not.
std::string open_library(const std::string& cublas, Opened& out) {
  const std::string folder = folder_of(cublas);
  if (!folder.empty() && is_file(folder + kLtSoname)) dlopen((folder + kLtSoname).c_str(), RTLD_NOW | RTLD_LOCAL);
  void* handle = dlopen(cublas.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return err ? err : cublas + " could not be opened";
  }
  CublasApi api;
  std::string missing;
#define LLTM_CUBLAS_RESOLVE(symbol)                                                   \
  api.symbol = reinterpret_cast<decltype(api.symbol)>(dlsym(handle, #symbol));        \
  if (api.symbol == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #symbol;
  LLTM_CUBLAS_FUNCTIONS(LLTM_CUBLAS_RESOLVE)
#undef LLTM_CUBLAS_RESOLVE
  if (!missing.empty()) return cublas + " lacks " + missing;
  int major = 0;
  if (api.cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS || major != CUBLAS_VER_MAJOR)
    return cublas + " is cuBLAS " + std::to_string(major) + ", but the backend was built for cuBLAS " +
           std::to_string(CUBLAS_VER_MAJOR);
  out.api = api;
  out.available = true;
  out.source = cublas;
  return "";
}

Opened open_cublas() {
  Opened out;
  const char* named = std::getenv("LLTM_CUBLAS_LIBRARY");
  if (named != nullptr && *named != '\0') {
    std::string path = named;
    if (path == "none") {
      out.source = "not used (LLTM_CUBLAS_LIBRARY=none)";
      return out;
    }
    if (DIR* dir = opendir(path.c_str())) {  // a folder: the library of the backend's major version in it
      closedir(dir);
      path += (path.back() == '/' ? "" : "/") + kSoname;
    }
    const std::string why = open_library(path, out);
    if (!why.empty()) out.source = "LLTM_CUBLAS_LIBRARY: " + why;
    return out;
  }
  std::string tried = open_library(kSoname, out);
  if (out.available) {
    // The file the dynamic linker found, for blas_source().
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(out.api.cublasCreate_v2), &info) != 0 && info.dli_fname != nullptr) out.source = info.dli_fname;
    return out;
  }
  // The wheels' folders: nvidia/cu<major>/lib (the CUDA 13 wheels), or nvidia/cublas/lib.
  for (const std::string& folder : wheel_folders({"cu" + std::to_string(CUBLAS_VER_MAJOR), "cublas"})) {
    if (!is_file(folder + kSoname)) continue;
    const std::string why = open_library(folder + kSoname, out);
    if (out.available) return out;
    tried += "; " + why;
  }
  out.source = "no " + kSoname + " was found (" + tried + ")";
  return out;
}

const Opened& opened() {
  static std::once_flag once;
  static Opened value;
  std::call_once(once, [] { value = open_cublas(); });
  return value;
}

}  // namespace

const CublasApi& cublas_api() { return opened().api; }

bool blas_available() { return opened().available; }

const char* blas_source() { return opened().source.c_str(); }

}  // namespace lltm::cuda
