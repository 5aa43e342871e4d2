// The cluster recurrence's entry points: each pass's plan for a size, and its launch.
#include <algorithm>

#include "runtime/launch.h"
#include "sequence/cluster/backward_kernel.cuh"
#include "sequence/cluster/backward_mma_kernel.cuh"
#include "sequence/cluster/cluster.h"
#include "sequence/cluster/forward_kernel.cuh"
#include "sequence/cluster/forward_mma_kernel.cuh"
#include "sequence/cluster/plan.h"

namespace lltm::cuda {

namespace {

template <typename T>
cluster::ClusterPlan forward_plan(int64_t S, int64_t B) {
  return cluster::plan<T>(reinterpret_cast<const void*>(cluster::forward_cluster<T>), 3,
                          cluster::padded_width<T>(S), S, B);
}

template <typename T>
cluster::ClusterPlan backward_plan(int64_t S, int64_t B) {
  return cluster::plan<T>(reinterpret_cast<const void*>(cluster::backward_cluster<T>), 1,
                          cluster::padded_width<T>(3 * S), S, B);
}

}  // namespace

template <typename T>
bool cluster_fits(int64_t S, int64_t B) {
  return forward_plan<T>(S, B).blocks > 0 && backward_plan<T>(S, B).blocks > 0;
}

template <typename T>
bool cluster_one_wave(int64_t S, int64_t B) {
  return cluster_fits<T>(S, B) && forward_plan<T>(S, B).one_wave && backward_plan<T>(S, B).one_wave;
}

// Launches of a plan's clusters that the clusters it holds at once hold, in the pass with fewer (a forward's plan
// and its backward's).
template <typename Plan>
int64_t copies(const Plan& forward, const Plan& backward) {
  auto of = [](const Plan& p) { return p.clusters == 0 ? int64_t(0) : int64_t(p.resident / p.clusters); };
  return std::min(of(forward), of(backward));
}

template <typename T>
int64_t cluster_copies(int64_t S, int64_t B) {
  const cluster::ClusterPlan forward = forward_plan<T>(S, B), backward = backward_plan<T>(S, B);
  return copies(forward, backward);
}

template <typename T>
void cluster_forward(const SequenceForwardTensors<T>& p, cudaStream_t stream) {
  const cluster::ClusterPlan plan = forward_plan<T>(p.S, p.B);
  launch_cluster("forward_cluster", cluster::forward_cluster<T>, dim3(plan.blocks, plan.clusters),
                 dim3(cluster::kClusterThreads), plan.blocks, plan.shared, stream, p, plan.shape);
}

template <typename T>
void cluster_backward(const SequenceBackwardTensors<T>& p, cudaStream_t stream) {
  const cluster::ClusterPlan plan = backward_plan<T>(p.S, p.B);
  launch_cluster("backward_cluster", cluster::backward_cluster<T>, dim3(plan.blocks, plan.clusters),
                 dim3(cluster::kClusterThreads), plan.blocks, plan.shared, stream, p, plan.shape);
}

namespace {

// A pass's tensor-core cluster kernel's plan at S states and B rows.
template <typename Products, typename Kernel>
cluster::MmaPlan mma_plan_of(Kernel* kernel, int64_t S, int64_t B, int64_t shared) {
  return cluster::mma_plan(reinterpret_cast<const void*>(kernel), S, B, cluster::kMmaStates, cluster::kMmaRows,
                           cluster::kMmaThreads, shared, Products::kMaxState);
}

// Launches a pass's tensor-core cluster kernel for `products` where its plan fits; false where it does not.
template <typename Tensors, typename KernelOf, typename SharedBytes>
bool launch_mma_pass(const char* name, const Tensors& p, RecurrentProducts products, cudaStream_t stream,
                     KernelOf&& kernel_of, SharedBytes&& shared_bytes) {
  return persistent::with_products(products, [&](auto products) {
    using Products = decltype(products);
    auto* kernel = kernel_of(products);
    const cluster::MmaPlan plan = mma_plan_of<Products>(kernel, p.S, p.B, shared_bytes(products, p.S));
    if (plan.blocks == 0) return false;
    launch_cluster(name, kernel, dim3(plan.blocks, plan.clusters), dim3(cluster::kMmaThreads), plan.blocks,
                   plan.shared, stream, p);
    return true;
  });
}

}  // namespace

bool cluster_mma_forward(const SequenceForwardTensors<float>& p, RecurrentProducts products, cudaStream_t stream) {
  return launch_mma_pass(
      "forward_cluster_mma", p, products, stream,
      [](auto products) { return cluster::forward_cluster_mma<decltype(products)>; },
      [](auto products, int64_t S) { return cluster::forward_mma_shared_bytes<decltype(products)>(S); });
}

bool cluster_mma_backward(const SequenceBackwardTensors<float>& p, RecurrentProducts products, cudaStream_t stream) {
  return launch_mma_pass(
      "backward_cluster_mma", p, products, stream,
      [](auto products) { return cluster::backward_cluster_mma<decltype(products)>; },
      [](auto products, int64_t S) { return cluster::backward_mma_shared_bytes<decltype(products)>(S); });
}

int64_t cluster_mma_copies(int64_t S, int64_t B, RecurrentProducts products) {
  return persistent::with_products(products, [&](auto products) -> int64_t {
    using Products = decltype(products);
    const cluster::MmaPlan forward = mma_plan_of<Products>(cluster::forward_cluster_mma<Products>, S, B,
                                                           cluster::forward_mma_shared_bytes<Products>(S));
    const cluster::MmaPlan backward = mma_plan_of<Products>(cluster::backward_cluster_mma<Products>, S, B,
                                                            cluster::backward_mma_shared_bytes<Products>(S));
    if (forward.blocks == 0 || backward.blocks == 0) return 0;
    return copies(forward, backward);
  });
}

template int64_t cluster_copies<float>(int64_t, int64_t);
template int64_t cluster_copies<double>(int64_t, int64_t);
template bool cluster_fits<float>(int64_t, int64_t);
template bool cluster_fits<double>(int64_t, int64_t);
template bool cluster_one_wave<float>(int64_t, int64_t);
template bool cluster_one_wave<double>(int64_t, int64_t);
template void cluster_forward<float>(const SequenceForwardTensors<float>&, cudaStream_t);
template void cluster_forward<double>(const SequenceForwardTensors<double>&, cudaStream_t);
template void cluster_backward<float>(const SequenceBackwardTensors<float>&, cudaStream_t);
template void cluster_backward<double>(const SequenceBackwardTensors<double>&, cudaStream_t);

}  // namespace lltm::cuda
