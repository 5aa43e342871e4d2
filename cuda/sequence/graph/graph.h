// The recurrence for sizes whose recurrent weights do not fit on chip: per
// step a product with W_h (cuBLAS, or the own kernel) and a pointwise
// kernel, T steps captured into a CUDA graph once per shape and replayed.
//
// A graph bakes in every pointer its nodes use, so the graph reads and
// writes only buffers of its own, kept with it: W_h (copied in at the start
// of each call, contiguous), the gate sums or gradients, the h or dh the
// products read, and a block of device memory holding the call's tensors,
// which the pointwise kernels read their caller's pointers from. What a
// graph depends on, and so its cache key: the pass, T, B, S, the type,
// whether the own product kernel runs, whether the forward keeps a reserve,
// and the float32 matmul precision (under "medium" the steps' float32
// products read bfloat16 copies of W_h and of h or the step's gate
// gradients, kept with the graph). `engine` is the call's: its stream runs
// the graph, and the graph's products are computed as its would be. The device's graphs are few (a bounded
// cache, least recently used out first), and a pass holds the device's
// graph lock from its first product to its last, as the buffers are shared
// by every call of that key.
#pragma once

#include <functional>

#include "math/gemm.h"
#include "runtime/device.h"
#include "sequence/cell.cuh"

namespace lltm::cuda {

// At most this many graphs (with their buffers) are kept per device.
constexpr int kMaxCachedGraphs = 8;

// A bfloat16 call's own weights [3S, S + F], which its half products read as they are (p.weights is then unused).
using HalfWeights = Accessor<const __nv_bfloat16, 2>;

// p.gin, p.cell and p.h_buffer are the graph's own and ignored here.
// `project(gin)` writes every step's x_t W_x^T into gin [T * B, 3S] first,
// under the lock; then the recurrence adds h_{t-1} W_h^T in place. h0 [B, S]
// is any-strided. half_weights: W_h's source in place of p.weights, for half products only.
template <typename T>
void graph_forward(const SequenceForwardTensors<T>& p, const GemmEngine& engine, int device,
                   const std::function<void(T* gin)>& project, const HalfWeights* half_weights = nullptr);

// The products over all steps after the backward recurrence: dG [T * B, 3S] row-major, and for half products
// the same in bfloat16 (else nullptr), which the steps' products read.
template <typename T>
using GraphFinish = std::function<void(const T* dG, const __nv_bfloat16* dG_half)>;

// Fills every step's gate gradients, d_h0 and d_c0 (p.dG, p.dh and p.dc are
// the graph's own and ignored), then calls `finish` under the lock.
template <typename T>
void graph_backward(const SequenceBackwardTensors<T>& p, const GemmEngine& engine, int device,
                    const GraphFinish<T>& finish, const HalfWeights* half_weights = nullptr);

}  // namespace lltm::cuda
