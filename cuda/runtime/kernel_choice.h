// Which kernels run a call: chosen by size, or forced for tests and
// measurements by LLTM_CUDA_KERNELS, a comma-separated list read once per
// process: fused | fused-int64 | cublas force the step path (fused and
// fused-int64 also give the sequence engine and linear the library's own
// product kernel instead of cuBLAS); cluster | persistent | graph force the sequence engine's
// recurrence (each only where it fits the device: cluster falls back to
// persistent, persistent to graph; persistent also keeps both passes with
// rounded products on its grid-wide kernels rather than the tensor-core
// clusters, which cluster-mma forces where they fit); one-stream keeps all of
// a device's work on its stream (no side work, runtime/side_work.h);
// directions-at-once runs a bidirectional stack's two directions on lanes of
// their own at every size (runtime/lanes.h).
#pragma once

#include <cstdint>

#include "runtime/cuda_check.h"

namespace lltm::cuda {

// Whether LLTM_CUDA_KERNELS names `kernels`.
bool forced(const char* kernels);

// Whether the products take the library's own kernel rather than cuBLAS:
// always in a build without cuBLAS, else where LLTM_CUDA_KERNELS forces it.
bool use_own_gemm();

enum class StepPath { kFused32, kFused64, kCublas };

// Small sizes take the fused kernels, with 32-bit indexing where every offset
// fits; kCublas only where the build has cuBLAS, or where LLTM_CUDA_KERNELS
// asks for it (which a build without cuBLAS then refuses).
StepPath choose_step_path(int64_t B, int64_t S, int64_t K, bool fits_int32);

enum class Recurrence { kCluster, kPersistent, kGraph };

struct SequenceKernels {
  Recurrence recurrence;
  bool own_gemm;  // the library's product kernel rather than cuBLAS
};

// The cluster kernels where every cluster is resident at once (small B and
// S: a step is then a short chain of on-chip work and the cluster barrier),
// else the persistent kernels wherever they fit (the weights on chip, every
// block resident), the graph of per-step kernels elsewhere.
template <typename ClusterFits, typename ClusterOneWave, typename PersistentFits>
SequenceKernels choose_sequence_kernels(ClusterFits&& cluster_fits, ClusterOneWave&& cluster_one_wave,
                                        PersistentFits&& persistent_fits) {
  const bool own_gemm = use_own_gemm();
  auto persistent_else_graph = [&] {
    return SequenceKernels{persistent_fits() ? Recurrence::kPersistent : Recurrence::kGraph, own_gemm};
  };
  if (forced("graph")) return {Recurrence::kGraph, own_gemm};
  if (forced("persistent") || forced("cluster-mma")) return persistent_else_graph();
  if (forced("cluster") ? cluster_fits() : cluster_one_wave()) return {Recurrence::kCluster, own_gemm};
  return persistent_else_graph();
}

}  // namespace lltm::cuda
