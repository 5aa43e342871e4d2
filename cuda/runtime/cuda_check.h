// Every CUDA runtime and cuBLAS call is checked and turned into an
// lltm::Error with LLTM_ERR_CUDA and CUDA's own message.
#pragma once

#include <cuda_runtime.h>

// Defined (to 1) by the build when the toolkit has cuBLAS; LLTM_CUBLAS_DYNAMIC
// too when it is opened at run time rather than linked (runtime/cublas_loader.h).
#ifndef LLTM_HAVE_CUBLAS
#define LLTM_HAVE_CUBLAS 0
#endif
#if LLTM_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#if LLTM_CUBLAS_DYNAMIC
#include "runtime/cublas_loader.h"
#else
namespace lltm::cuda {
// Whether cuBLAS takes the products it can: a build that links it always does.
inline bool blas_available() { return LLTM_HAVE_CUBLAS != 0; }
}  // namespace lltm::cuda
#endif

#include <string>

#include "status.h"

namespace lltm::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error so the next call starts clean
    fail(LLTM_ERR_CUDA, std::string(what) + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
  }
}

#if LLTM_HAVE_CUBLAS
inline void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(LLTM_ERR_CUDA, std::string(what) + " failed: " + cublasGetStatusName(s) + ": " + cublasGetStatusString(s));
}
#endif

// After the launch of kernel `kernel`: a bad configuration is reported at
// once, as "launching <kernel> failed: ..."; a launch that went through
// builds no message (this runs at every launch).
inline void check_launch(cudaError_t e, const char* kernel) {
  if (e != cudaSuccess) check(e, (std::string("launching ") + kernel).c_str());
}

}  // namespace lltm::cuda

#define LLTM_CUDA_CHECK(expr) ::lltm::cuda::check((expr), #expr)
