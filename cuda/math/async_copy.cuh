// Copies from global to shared memory that run while the threads go on
// (cp.async, sm_80 on): what the library's staged product kernels fill their
// pipelines with.
#pragma once

#include <cstdint>

namespace lltm::cuda {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from `from` into shared memory at `to`, or 16 zero bytes where !valid (from is then not read).
__device__ __forceinline__ void copy_chunk(void* to, const void* from, bool valid) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(to)), "l"(from),
               "r"(valid ? 16 : 0));
#endif
}

// The copies issued since the last commit, as one group.
__device__ __forceinline__ void commit_copies() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Until at most kPending of the committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

}  // namespace lltm::cuda
