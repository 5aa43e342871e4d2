// The recurrence of a whole sequence in one cooperative launch per pass: each
// block keeps its states' slice of the recurrent weights W_h in shared memory
// for all T steps, and a grid-wide barrier separates the steps.
#pragma once

#include "sequence/cell.cuh"

namespace lltm::cuda {

// Whether the persistent kernels can run S states and B rows in dtype T on
// the current device: cooperative launch, the weights' slice and the staged
// rows within a block's shared memory, and every block resident at once.
template <typename T>
bool persistent_fits(int64_t S, int64_t B);

// After the input projection: p.gin holds x_t W_x^T for every step. With
// tf32 (float32 products allowed to round to TF32), the recurrent product
// takes the tensor cores where their kernel fits.
template <typename T>
void persistent_forward(const SequenceForwardTensors<T>& p, bool tf32, cudaStream_t stream);

// Fills p.dG for every step, d_h0 and d_c0; tf32 as for the forward.
template <typename T>
void persistent_backward(const SequenceBackwardTensors<T>& p, bool tf32, cudaStream_t stream);

}  // namespace lltm::cuda
