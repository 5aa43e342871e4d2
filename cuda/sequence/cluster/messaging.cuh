// How a block hands values to the other blocks of its cluster: st.async into
// their shared memory, counted on their mbarriers.
#pragma once

#include <cstdint>

#include "sequence/cluster/work_split.cuh"

namespace lltm::cuda::cluster {

// Each step's values reach the other blocks by st.async into their shared
// memory, each store counting its bytes on the receiver's mbarrier for that
// slot: a block waits for its own barrier only (the bytes of every block's
// values of the step), with neither a cluster-wide barrier nor the
// GPU-scope fence that a release of the cluster barrier costs.
//
// Two slots per block suffice without any other synchronisation: a block
// sends a step's values into a slot only after it has received every
// block's values of the step before (in the pass's order), and each block
// computed those after it had finished reading that slot two steps before;
// for the same reason no values of a slot's next phase reach a block before
// its current phase has completed (they may come before the block posts the
// next expectation: the transaction count then dips below zero, which the
// mbarrier allows, and the phase still needs that arrival to complete).
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ uint32_t cluster_address(uint32_t local, int rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

__device__ __forceinline__ void send(uint32_t to, float v, uint32_t barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];" ::"r"(to), "f"(v),
               "r"(barrier)
               : "memory");
}

__device__ __forceinline__ void send(uint32_t to, double v, uint32_t barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f64 [%0], %1, [%2];" ::"r"(to), "d"(v),
               "r"(barrier)
               : "memory");
}

// Two consecutive floats (8-byte aligned) into a cluster block's shared memory, counted on its mbarrier.
__device__ __forceinline__ void send(uint32_t to, float a, float b, uint32_t barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(to), "f"(a),
               "f"(b), "r"(barrier)
               : "memory");
}

// Copies `bytes` (a multiple of 16, both ends 16-byte aligned) from this
// block's shared memory at `from` to a cluster block's at `to`, counted on
// that block's mbarrier: one transfer where st.async would take one per value.
__device__ __forceinline__ void send_bulk(uint32_t to, uint32_t from, uint32_t bytes, uint32_t barrier) {
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(to),
               "r"(from), "r"(bytes), "r"(barrier)
               : "memory");
}

// Orders this thread's shared-memory writes before the bulk copies (the
// async proxy) that read them, once a block barrier separates the two.
__device__ __forceinline__ void fence_for_bulk_copies() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// One arrival per phase (the expectation below) completes it, with the bytes.
__device__ __forceinline__ void init_barrier(uint32_t barrier) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrier) : "memory");
}

__device__ __forceinline__ void publish_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// The barrier's next phase completes once `bytes` more have arrived.
__device__ __forceinline__ void expect_bytes(uint32_t barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes) : "memory");
}

// Waits for the phase of this parity to complete: the st.async writes it
// counted are then visible to this thread.
__device__ __forceinline__ void wait_phase(uint32_t barrier, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
}

// A pass's two barriers: its `receipts` receipts of every block's values,
// `bytes` each, alternate between them, receipt r on barrier first ^ (r % 2)
// (a forward receives before each step but the first, on the step's slot;
// a backward before each step). Posted by one thread before the cluster's
// first barrier: the barriers, and the expectations of receipts 0 and 1.
__device__ __forceinline__ void init_receipt_barriers(uint32_t barriers, int first, int receipts, uint32_t bytes) {
  init_barrier(barriers);
  init_barrier(barriers + 8);
  publish_barrier_init();
  if (receipts > 0) expect_bytes(barriers + 8 * first, bytes);
  if (receipts > 1) expect_bytes(barriers + 8 * (first ^ 1), bytes);
}

// Receipt r's wait, and the expectation of receipt r + 2 on the same barrier.
__device__ __forceinline__ void receive(uint32_t barriers, int first, int r, int receipts, uint32_t bytes) {
  const uint32_t barrier = barriers + 8 * (first ^ (r & 1));
  wait_phase(barrier, (r >> 1) & 1);
  if (threadIdx.x == 0 && r + 2 < receipts) expect_bytes(barrier, bytes);
}

// Where a lane's sends go: the staged rows and the mbarrier of blocks lane
// and lane + kGroup of the cluster (those that exist; the sends skip the rest).
struct SendTargets {
  uint32_t staged[kSendsPerLane], barrier[kSendsPerLane];
};

template <typename T>
__device__ __forceinline__ SendTargets send_targets(const T* staged, uint32_t barriers, int lane, int blocks) {
  SendTargets to;
#pragma unroll
  for (int q = 0; q < kSendsPerLane; ++q) {
    const int r = min(lane + q * kGroup, blocks - 1);
    to.staged[q] = cluster_address(shared_address(staged), r);
    to.barrier[q] = cluster_address(barriers, r);
  }
  return to;
}

}  // namespace lltm::cuda::cluster
