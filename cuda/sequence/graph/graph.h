// The recurrence for sizes whose recurrent weights do not fit on chip: per
// step a product with W_h (cuBLAS, or the own kernel) and a pointwise
// kernel, T steps captured once into a CUDA graph and launched as one.
#pragma once

#include "runtime/device.h"
#include "sequence/cell.cuh"

namespace lltm::cuda {

// After the input projection: p.gin holds x_t W_x^T for every step, and
// receives h_{t-1} W_h^T in place. h0 [B, S] is any-strided.
template <typename T>
void graph_forward(const SequenceForwardTensors<T>& p, bool own_gemm, int device, cudaStream_t stream);

// Fills p.dG for every step, d_h0 and d_c0.
template <typename T>
void graph_backward(const SequenceBackwardTensors<T>& p, bool own_gemm, int device, cudaStream_t stream);

}  // namespace lltm::cuda
