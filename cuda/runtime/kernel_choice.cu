// LLTM_CUDA_KERNELS, read once, and the choices that follow from it and from a call's sizes.
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/kernel_choice.h"

namespace lltm::cuda {

// Asked at every step and sequence call: a search of the list read once, building no string.
bool forced(const char* kernels) {
  static const std::string list = [] {
    const char* value = std::getenv("LLTM_CUDA_KERNELS");
    return "," + std::string(value != nullptr ? value : "") + ",";
  }();
  const size_t n = std::strlen(kernels);
  for (size_t at = list.find(kernels, 1, n); at != std::string::npos; at = list.find(kernels, at + 1, n))
    if (list[at - 1] == ',' && list[at + n] == ',') return true;
  return false;
}

bool use_own_gemm() { return !blas_available() || forced("fused") || forced("fused-int64"); }

StepPath choose_step_path(int64_t B, int64_t S, int64_t K, bool fits_int32) {
  if (forced("fused-int64")) return StepPath::kFused64;
  if (forced("cublas")) return StepPath::kCublas;  // refused by the caller in a build without cuBLAS
  const bool small = !blas_available() || forced("fused") || double(B) * 3 * S * K <= double(1 << 23);
  if (!small) return StepPath::kCublas;
  return fits_int32 ? StepPath::kFused32 : StepPath::kFused64;
}

}  // namespace lltm::cuda
