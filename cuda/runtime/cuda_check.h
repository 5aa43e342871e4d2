// Every CUDA runtime and cuBLAS call is checked and turned into an
// lltm::Error with LLTM_ERR_CUDA and CUDA's own message.
#pragma once

#include <cuda_runtime.h>

// Defined (to 1) by the build when the toolkit has cuBLAS.
#ifndef LLTM_HAVE_CUBLAS
#define LLTM_HAVE_CUBLAS 0
#endif
#if LLTM_HAVE_CUBLAS
#include <cublas_v2.h>
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

}  // namespace lltm::cuda

#define LLTM_CUDA_CHECK(expr) ::lltm::cuda::check((expr), #expr)
// After a kernel launch: reports a bad launch configuration at once.
#define LLTM_LAUNCH_CHECK(name) ::lltm::cuda::check(cudaGetLastError(), "launching " name)
