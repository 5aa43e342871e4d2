// Launch sizes of the backend's grid-stride kernels, in one place so that
// every file uses the same block size and the same caps.
#pragma once

#include <cstdint>

namespace lltm::cuda {

// Threads per block of the elementwise (grid-stride) kernels.
constexpr int kBlockThreads = 256;

// A grid-stride loop gains nothing from more blocks than the GPU keeps
// resident: 4096 blocks of 256 threads exceed the 270k resident threads of an
// H100 (132 SMs x 2048), so larger grids only add scheduling.
constexpr int64_t kMaxGridBlocks = 4096;

// The hardware's limit on gridDim.y (and z).
constexpr int64_t kMaxGridRows = 65535;

// Blocks of kBlockThreads for a grid-stride loop over n items (at least one).
inline unsigned grid_blocks(int64_t n) {
  const int64_t b = (n + kBlockThreads - 1) / kBlockThreads;
  return unsigned(b < 1 ? 1 : b < kMaxGridBlocks ? b : kMaxGridBlocks);
}

// A grid's y extent for `rows` rows walked with a stride of gridDim.y.
inline unsigned grid_rows(int64_t rows) { return unsigned(rows < 1 ? 1 : rows < kMaxGridRows ? rows : kMaxGridRows); }

}  // namespace lltm::cuda
