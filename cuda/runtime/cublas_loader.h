// cuBLAS opened at run time instead of linked (LLTM_CUBLAS_DYNAMIC, the
// prebuilt package's build): the library then loads where no cuBLAS exists,
// and uses one where it is found. cuda_check.h includes this after
// cublas_v2.h; the cublas* calls of the backend below go through the table
// of the opened library's functions (each name redirected by a macro), so
// the call sites read the same in both builds. They run only where
// blas_available() said yes: the kernel choice sends every product to the
// library's own kernels otherwise.
//
// Where it looks, in order: LLTM_CUBLAS_LIBRARY (a libcublas.so file, its
// folder, or `none` for no cuBLAS), the dynamic linker's own search for
// libcublas.so.<major> (LD_LIBRARY_PATH, ld.so.cache, the system folders),
// then the folders of NVIDIA's Python wheels (nvidia-cublas:
// site-packages/nvidia/cu<major>/lib, or nvidia/cublas/lib) under the active
// virtual or conda environment, ~/.local and the system's Python. cuBLASLt,
// which cuBLAS needs, is opened from the same folder first.
#pragma once

#include <cublas_v2.h>

namespace lltm::cuda {

// Each function of the library the backend calls, by the symbol the library
// exports (the macros at the end of this file send the code's names there),
// and cublasGetProperty, which tells the version opened.
#define LLTM_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate_v2)             \
  X(cublasDestroy_v2)            \
  X(cublasSetStream_v2)          \
  X(cublasSetWorkspace_v2)       \
  X(cublasSgemm_v2)              \
  X(cublasDgemm_v2)              \
  X(cublasGemmEx)                \
  X(cublasGetStatusName)         \
  X(cublasGetStatusString)       \
  X(cublasGetProperty)

// cublasGemmEx is overloaded in C++ (cublas_api.h adds a wrapper that takes
// the compute type as a cudaDataType): the table holds the library's own,
// which function_type picks out of the overload set.
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                        const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                        const void*, void*, cudaDataType, int, cublasComputeType_t,
                                        cublasGemmAlgo_t);
template <typename F>
F function_type(F);
CublasGemmEx function_type(CublasGemmEx);

struct CublasApi {
#define LLTM_CUBLAS_MEMBER(symbol) decltype(function_type(&::symbol)) symbol = nullptr;
  LLTM_CUBLAS_FUNCTIONS(LLTM_CUBLAS_MEMBER)
#undef LLTM_CUBLAS_MEMBER
};

// The opened library's functions (all null where none was opened).
const CublasApi& cublas_api();

// Whether cuBLAS was found and opened (tried once, on the first call).
bool blas_available();

// The file opened, or why none was.
const char* blas_source();

}  // namespace lltm::cuda

// The code's names, sent to the table (not in the loader itself, which fills it by the symbols' names).
#ifndef LLTM_CUBLAS_LOADER
#undef cublasCreate
#undef cublasDestroy
#undef cublasSetStream
#undef cublasSetWorkspace
#undef cublasSgemm
#undef cublasDgemm
#undef cublasGemmEx
#define cublasCreate (::lltm::cuda::cublas_api().cublasCreate_v2)
#define cublasDestroy (::lltm::cuda::cublas_api().cublasDestroy_v2)
#define cublasSetStream (::lltm::cuda::cublas_api().cublasSetStream_v2)
#define cublasSetWorkspace (::lltm::cuda::cublas_api().cublasSetWorkspace_v2)
#define cublasSgemm (::lltm::cuda::cublas_api().cublasSgemm_v2)
#define cublasDgemm (::lltm::cuda::cublas_api().cublasDgemm_v2)
#define cublasGemmEx (::lltm::cuda::cublas_api().cublasGemmEx)
#define cublasGetStatusName (::lltm::cuda::cublas_api().cublasGetStatusName)
#define cublasGetStatusString (::lltm::cuda::cublas_api().cublasGetStatusString)
#endif
