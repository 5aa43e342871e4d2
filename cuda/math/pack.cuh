// Eight elements moved as one aligned unit: one 16-byte load or store of a
// half type, two of float32, four of float64. Element-wise copies and
// conversions of dense data move these where both ends are aligned to them,
// as one element a thread moves 2- and 4-byte words, about half the bandwidth
// the device has.
#pragma once

#include <cstdint>

namespace lltm::cuda {

constexpr int kPack = 8;

template <typename T>
struct alignas(sizeof(T) * kPack) Pack {
  T v[kPack];
};

template <typename T>
bool pack_aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % sizeof(Pack<T>) == 0;
}

}  // namespace lltm::cuda
