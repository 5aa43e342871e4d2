// The recurrence of a whole sequence in one launch per pass, in thread-block
// clusters (sm_90): the blocks of a cluster split the states, each keeping its
// states' slice of the recurrent weights W_h in shared memory for all T
// steps, and hand each step's h (forward) or gate gradients (backward) to
// every block of the cluster through distributed shared memory (st.async,
// counted on the receiving block's mbarrier) instead of through global
// memory and a grid-wide barrier. Clusters split the batch rows: rows never
// meet in the recurrence.
#pragma once

#include "sequence/cell.cuh"
#include "sequence/persistent/persistent.h"

namespace lltm::cuda {

// Whether the cluster kernels can run S states and B rows in dtype T on the
// current device: cluster launch, a W_h slice and its staged rows within a
// block's shared memory, at most 16 blocks a cluster.
template <typename T>
bool cluster_fits(int64_t S, int64_t B);

// Whether they fit with every cluster resident at once (one wave), in both
// passes: where the per-step work is small enough that the cluster kernels
// are the faster recurrence (runtime/kernel_choice.h).
template <typename T>
bool cluster_one_wave(int64_t S, int64_t B);

// How many recurrences of S states and B rows the device holds at once in the cluster kernels, in the pass
// that holds fewer (each launches its clusters; the device holds `resident` of them).
template <typename T>
int64_t cluster_copies(int64_t S, int64_t B);

// Likewise for the tensor-core cluster kernels with `products` (not kExact); 0 where either pass does not fit.
int64_t cluster_mma_copies(int64_t S, int64_t B, RecurrentProducts products);

// After the input projection: p.gin holds x_t W_x^T for every step.
template <typename T>
void cluster_forward(const SequenceForwardTensors<T>& p, cudaStream_t stream);

// The forward on the tensor cores with rounded products, in clusters of up
// to 16 blocks that each own 16 batch rows and all S states (S up to the
// products' kMaxState), every cluster resident at once; false, having
// launched nothing, where it cannot run (exact products, or a size or device
// it does not fit). After the input projection, as persistent_forward, whose
// tensors it takes.
bool cluster_mma_forward(const SequenceForwardTensors<float>& p, RecurrentProducts products, cudaStream_t stream);

// The backward on the tensor cores with rounded products, in the clusters
// of cluster_mma_forward (where it fits: the same sizes): fills p.dG for
// every step (gate-major where p.dG_by_gate asks), d_h0 and d_c0; false,
// having launched nothing, where it cannot run.
bool cluster_mma_backward(const SequenceBackwardTensors<float>& p, RecurrentProducts products, cudaStream_t stream);

// Fills p.dG for every step, d_h0 and d_c0.
template <typename T>
void cluster_backward(const SequenceBackwardTensors<T>& p, cudaStream_t stream);

}  // namespace lltm::cuda
