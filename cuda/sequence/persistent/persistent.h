// The recurrence of a whole sequence in one cooperative launch per pass: each
// block keeps its states' slice of the recurrent weights W_h in shared memory
// for all T steps, and a grid-wide barrier separates the steps.
#pragma once

#include "sequence/cell.cuh"

namespace lltm::cuda {

// How the recurrent product may round its operands: not at all (exact in
// T), to TF32 or to bfloat16, with float32 sums (math/gemm.h's
// tf32_products and half_products). Rounded products take the tensor cores
// where their kernels fit.
enum class RecurrentProducts { kExact, kTf32, kBfloat16 };

// Whether the persistent kernels can run S states and B rows in dtype T on
// the current device with `products`: cooperative launch, the weights' slice
// (in shared memory, or in the tensor-core kernels' registers) and the
// staged rows within a block, and every block resident at once.
template <typename T>
bool persistent_fits(int64_t S, int64_t B, RecurrentProducts products);

// After the input projection: p.gin holds x_t W_x^T for every step.
template <typename T>
void persistent_forward(const SequenceForwardTensors<T>& p, RecurrentProducts products, cudaStream_t stream);

// Fills p.dG for every step, d_h0 and d_c0. dG is gate-major where p asks
// for it and the tensor-core kernel runs (the other kernels read dG back
// row-major); returns whether it is.
template <typename T>
bool persistent_backward(SequenceBackwardTensors<T> p, RecurrentProducts products, cudaStream_t stream);

}  // namespace lltm::cuda
