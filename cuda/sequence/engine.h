// Whole sequences on CUDA in one call each way: the input projection of
// every step and the weight gradient over every step as single products, the
// recurrence in between in one kernel per pass: in thread-block clusters at
// small sizes (cluster/cluster.h), else one persistent cooperative kernel
// (or, where the recurrent weights do not fit on chip, per-step kernels
// replayed from a CUDA graph). Throws lltm::Error.
#pragma once

#include <cstdint>

#include "lltm_args.h"

namespace lltm::cuda {

// float32_precision: LLTM_MATMUL_PRECISION_*, how the float32 products may round.
void sequence_forward(const SequenceForwardArgs& args, int32_t dtype, int32_t float32_precision, int device);
void sequence_backward(const SequenceBackwardArgs& args, int32_t dtype, int32_t float32_precision, int device);

// How many recurrences of S states and B rows the current device runs at once where both passes run in
// thread-block clusters when they share the device (on a lane, runtime/lanes.h): its clusters' room over a
// launch's clusters, in the pass with less; 0 where either takes the whole device (the grid-wide or per-step
// kernels).
int64_t clustered_recurrence_copies(int32_t dtype, int32_t float32_precision, int64_t S, int64_t B);

}  // namespace lltm::cuda
