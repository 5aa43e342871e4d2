#include <cooperative_groups.h>
#include <cuda_pipeline_primitives.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <vector>

#include "device.h"
#include "launch.h"
#include "sequence_persistent.h"

namespace cg = cooperative_groups;

namespace lltm::cuda {

namespace {

// A block owns kStates consecutive states (a template parameter: 1, 2 or 4,
// the fewest that spread S over at most one block per multiprocessor, so
// that small S uses more of the GPU): in the forward pass their 3 x kStates
// rows of W_h (i, o and z of each), in the backward pass the same states'
// kStates columns of W_h over all 3S gates; both are 3 kStates S weights.
// Its warps take the batch rows in turn, several at once where there are
// enough (see for_row_groups). Nothing a block writes in one step
// is read by another block in that step: the grid barrier between steps is
// the only one the kernels need.
constexpr int kMaxStates = 4;
constexpr int kThreads = 512;
constexpr int kWarps = kThreads / kWarp;
// Each step first copies what it reads (h_{t-1} or dG_t from other blocks,
// and in the forward pass the block's input sums and cells) into shared
// memory, as many batch rows at a time as the shared memory left beside the
// weights holds: the whole block then has many loads in flight at once,
// instead of each warp waiting on L2 once per few products.

// The weights' slice in shared memory, rounded up to 16 bytes so that the
// staged rows after it take 16-byte copies.
template <typename T>
__host__ __device__ constexpr int64_t padded(int64_t elements) {
  constexpr int64_t per16 = 16 / int64_t(sizeof(T));
  return (elements + per16 - 1) / per16 * per16;
}

// N consecutive T of shared memory into registers, 16 bytes at a time (row is 16-byte aligned).
template <int N, typename T>
__device__ __forceinline__ void load_row(const T* row, T (&out)[N]) {
  if constexpr (std::is_same_v<T, float> && N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N / 4; ++i) {
      const float4 v = reinterpret_cast<const float4*>(row)[i];
      out[4 * i] = v.x;
      out[4 * i + 1] = v.y;
      out[4 * i + 2] = v.z;
      out[4 * i + 3] = v.w;
    }
  } else if constexpr (std::is_same_v<T, double> && N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
      const double2 v = reinterpret_cast<const double2*>(row)[i];
      out[2 * i] = v.x;
      out[2 * i + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = row[i];
  }
}

// Starts copying `count` consecutive elements that other blocks wrote before
// the grid barrier into shared memory, through L2 (never a stale L1 line):
// 16-byte asynchronous copies (cp.async.cg) where the source allows, all in
// flight at once without holding registers, else plain ld.cg loads. The
// caller waits with stage_wait() and then publishes them with __syncthreads().
template <typename T>
__device__ __forceinline__ void stage(T* dst, const T* src, int64_t count) {
  if ((count * int64_t(sizeof(T))) % 16 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0) {
    const uint4* from = reinterpret_cast<const uint4*>(src);
    uint4* to = reinterpret_cast<uint4*>(dst);
    const int n = int(count * int64_t(sizeof(T)) / 16);
    for (int e = threadIdx.x; e < n; e += kThreads) __pipeline_memcpy_async(to + e, from + e, 16);
    __pipeline_commit();
  } else {
#pragma unroll 4
    for (int e = threadIdx.x; e < count; e += kThreads) dst[e] = __ldcg(src + e);
  }
}

__device__ __forceinline__ void stage_wait() { __pipeline_wait_prior(0); }

// A warp takes R batch rows at a time, so that each weight it reads from
// shared memory serves R rows: at one row a time the weights' shared memory
// reads, not the arithmetic, set the pace of a step. R is the most whose
// sums fit the registers of a thread at kThreads a block; a pass with too
// few rows to give half the warps R rows each goes one row at a time, as do
// the rows left after the groups.
template <typename T>
constexpr int kForwardRowsPerWarp = sizeof(T) == 4 ? 4 : 2;
template <typename T>
constexpr int kBackwardRowsPerWarp = 4;
// The rows of a pass worth grouping: groups for at least half the warps.
template <int kRows>
constexpr int kGroupedRowsAtLeast = kWarps / 2 * kRows;

// The rows whose sums one butterfly exchange adds up (see butterfly_sum):
// as many of a group's R rows as fill a warp's lanes with sums. The
// exchange adds each sum's lane partials in the same order whatever the
// count, so the results do not change with it; the work after it (the
// activations, the cell update) then runs once for all of them.
constexpr int rows_per_exchange(int R, int sums_per_row) {
  return R < kWarp / sums_per_row ? R : kWarp / sums_per_row;
}

// The gate sums h_{t-1}[b] . W_h[q] of the block's rows q for R consecutive
// staged rows h (S apart), partial per lane. Each row's sums are added in
// the same order whatever R is.
template <int R, int kGateRows, int kForwardSums, typename T>
__device__ __forceinline__ void recurrent_sums(const T* w, const T* h, int S, int lane, T (&acc)[R][kForwardSums]) {
  constexpr int kUnroll = R == 1 ? 4 : 1;
#pragma unroll kUnroll
  for (int k = lane; k < S; k += kWarp) {
    T wk[kGateRows];
    load_row(w + k * kGateRows, wk);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const T v = h[r * S + k];
#pragma unroll
      for (int q = 0; q < kGateRows; ++q) acc[r][q] += v * wk[q];
    }
  }
}

// Calls rows<R>(first) for the R-row groups of a pass's `count` rows, R =
// kRows (where there are kGroupedRowsAtLeast rows) for as many whole groups
// as there are, then one row at a time for the rest; each warp takes its
// groups and then its single rows in turn.
template <int kRows, typename Rows>
__device__ __forceinline__ void for_row_groups(int count, int warp, Rows&& rows) {
  const int grouped = count >= kGroupedRowsAtLeast<kRows> ? count / kRows * kRows : 0;
  for (int b = warp * kRows; b < grouped; b += kWarps * kRows) rows(std::integral_constant<int, kRows>{}, b);
  for (int b = grouped + warp; b < count; b += kWarps) rows(std::integral_constant<int, 1>{}, b);
}

// A lane's parts after the gate sums of P rows went through one butterfly
// exchange: the sum it holds (row `row` of the P, the block's gate row r;
// the sum's first lane owns it) and, in lanes below P kStates, the cell it
// updates (row cell_row, state s0 + j).
template <int kStates, int P>
struct ForwardLanes {
  static constexpr int kSums = pow2_at_least(3 * kStates);  // a row's sums, padded to a power of two
  static constexpr int kLanesPerSum = kWarp / (P * kSums);
  static_assert(P * kSums <= kWarp, "every sum ends in its own lanes");
  int row, r, gate, s, cell_row, j;
  bool owner, finisher;
  __device__ __forceinline__ ForwardLanes(int lane, int s0, int S) {
    const int m = lane / kLanesPerSum;
    row = m / kSums;
    r = m % kSums;
    gate = r / kStates;
    s = s0 + r % kStates;
    owner = lane % kLanesPerSum == 0 && r < 3 * kStates && s < S;
    cell_row = lane / kStates % P;
    j = lane % kStates;
    finisher = lane < P * kStates && s0 + j < S;
  }
  // The lane holding gate row q's activation for this lane's cell.
  __device__ __forceinline__ int source(int q) const { return kLanesPerSum * (cell_row * kSums + q); }
};

// The gates and cells of P consecutive staged rows from `first` (row b0 +
// first of the batch) once their sums, P rows of kSums, are in `sums`.
template <int kStates, int P, typename T>
__device__ __forceinline__ void finish_rows(const SequenceForwardTensors<T>& p, int t, int b0, int first,
                                            T (&sums)[P * ForwardLanes<kStates, P>::kSums], T bias,
                                            const T* staged_in, const T* staged_cell, int s0, int lane) {
  constexpr int kGateRows = 3 * kStates;
  const ForwardLanes<kStates, P> l(lane, s0, p.S);
  const int row = first + l.row;
  const T g = butterfly_sum(sums, lane) + (l.r < kGateRows ? staged_in[row * kGateRows + l.r] : T(0)) + bias;
  const T activated = l.gate < 2 ? sigmoid(g) : elu(g);
  if (l.owner && p.reserve != nullptr) p.plane(kPlaneGate0 + l.gate, t)[int64_t(b0 + row) * p.S + l.s] = g;
  const T i = __shfl_sync(0xffffffffu, activated, l.source(l.j));
  const T o = __shfl_sync(0xffffffffu, activated, l.source(kStates + l.j));
  const T z = __shfl_sync(0xffffffffu, activated, l.source(2 * kStates + l.j));
  const int cell_row = first + l.cell_row;
  if (l.finisher) finish_cell(p, t, b0 + cell_row, s0 + l.j, i, o, z, staged_cell[cell_row * kStates + l.j]);
}

// rows: the batch rows staged per pass (see plan()).
template <typename T, int kStates>
__global__ void __launch_bounds__(kThreads, 1) forward_persistent(SequenceForwardTensors<T> p, int rows) {
  constexpr int kGateRows = 3 * kStates;
  constexpr int kForwardSums = ForwardLanes<kStates, 1>::kSums;
  constexpr int kPack = rows_per_exchange(kForwardRowsPerWarp<T>, kForwardSums);
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* w = reinterpret_cast<T*>(shared_bytes);  // [S][kGateRows]: w[k][q] = W_h[gate q / kStates of state q % kStates][k]
  const int S = p.S, s0 = blockIdx.x * kStates;
  T* staged_h = w + padded<T>(int64_t(S) * kGateRows);  // [rows][S]: h_{t-1}
  T* staged_in = staged_h + int64_t(rows) * S;        // [rows][kGateRows]: x_t W_x^T of the block's gates
  T* staged_cell = staged_in + rows * kGateRows;      // [rows][kStates]: the block's cells before step t
  // States past S read row S-1 instead, and their results are not stored.
  for (int e = threadIdx.x; e < S * kGateRows; e += kThreads) {
    const int k = e / kGateRows, q = e % kGateRows;
    w[e] = p.weights[q / kStates * S + min(s0 + q % kStates, S - 1)][k];
  }
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // The bias of the sum a lane owns after an exchange of one row's sums, and after one of kPack rows'.
  auto bias_of = [&](auto lanes) { return lanes.owner ? p.bias[lanes.gate * S + lanes.s] : T(0); };
  const T bias = bias_of(ForwardLanes<kStates, 1>(lane, s0, S));
  const T packed_bias = bias_of(ForwardLanes<kStates, kPack>(lane, s0, S));
  for (int e = threadIdx.x; e < p.B * kStates; e += kThreads)
    if (s0 + e % kStates < S) save_h0(p, e / kStates, s0 + e % kStates);
  // The block's own inputs of a pass (no other block writes them): its gates'
  // x_t W_x^T, and its cells, written by their finisher lanes and read back
  // here by other threads after a barrier.
  auto stage_own = [&](int t, int b0, int count) {
    for (int e = threadIdx.x; e < count * kGateRows; e += kThreads) {
      const int q = e % kGateRows;
      staged_in[e] = __ldg(p.gin + (int64_t(t) * p.B + b0 + e / kGateRows) * 3 * S + q / kStates * S +
                           min(s0 + q % kStates, S - 1));
    }
    for (int e = threadIdx.x; e < count * kStates; e += kThreads) {
      const int b = b0 + e / kStates, se = min(s0 + e % kStates, S - 1);
      staged_cell[e] = t == 0 ? p.c0[b][se] : __ldcg(p.cell + int64_t(b) * S + se);
    }
  };
  const int first = min(rows, p.B);
  stage_own(0, 0, first);
  cg::grid_group grid = cg::this_grid();
  for (int t = 0; t < p.steps; ++t) {
    for (int b0 = 0; b0 < p.B; b0 += rows) {
      const int count = min(rows, p.B - b0);
      // The first pass's own inputs were staged during the barrier before it.
      if (b0 > 0) {
        __syncthreads();  // the last pass's readers are done with the staged rows
        stage_own(t, b0, count);
      }
      if (t == 0)
        for (int e = threadIdx.x; e < count * S; e += kThreads) staged_h[e] = p.h0[b0 + e / S][e % S];
      else
        stage(staged_h, p.h_of(t - 1) + int64_t(b0) * S, int64_t(count) * S);
      stage_wait();
      __syncthreads();
      for_row_groups<kForwardRowsPerWarp<T>>(count, warp, [&](auto group, int first) {
        constexpr int R = decltype(group)::value;
        T acc[R][kForwardSums] = {};
        recurrent_sums<R, kGateRows>(w, staged_h + first * S, S, lane, acc);
        constexpr int P = rows_per_exchange(R, kForwardSums);
#pragma unroll
        for (int row = 0; row < R; row += P) {
          T sums[P * kForwardSums];
#pragma unroll
          for (int e = 0; e < P * kForwardSums; ++e) sums[e] = acc[row + e / kForwardSums][e % kForwardSums];
          finish_rows<kStates, P>(p, t, b0, first + row, sums, P == 1 ? bias : packed_bias, staged_in, staged_cell,
                                  s0, lane);
        }
      });
    }
    // Step t's h is complete in memory before any block reads it. While the
    // other blocks finish theirs, this one stages its own inputs of step t + 1.
    if (t + 1 < p.steps) {
      auto token = grid.barrier_arrive();
      stage_own(t + 1, 0, first);
      grid.barrier_wait(std::move(token));
    }
  }
}

template <typename T, int kStates>
__global__ void __launch_bounds__(kThreads, 1) backward_persistent(SequenceBackwardTensors<T> p, int rows) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* w = reinterpret_cast<T*>(shared_bytes);  // [3S][kStates]: w[n][j] = W_h[n][state j]
  const int S = p.S, G = 3 * S, s0 = blockIdx.x * kStates;
  for (int e = threadIdx.x; e < G * kStates; e += kThreads) {
    const int n = e / kStates, j = e % kStates;
    w[e] = p.weights[n][min(s0 + j, S - 1)];
  }
  __syncthreads();
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  T* staged = w + padded<T>(int64_t(G) * kStates);  // [rows][3S]: rows of dG_t
  // A thread's first element of phase A: its saved values are loaded one step ahead, during the barrier.
  const int b_first = threadIdx.x / kStates, s_first = s0 + threadIdx.x % kStates;
  const bool has_first = b_first < p.B && s_first < S;
  SavedCell<T> ahead = has_first ? load_saved(p, p.steps - 1, b_first, s_first) : SavedCell<T>{};
  cg::grid_group grid = cg::this_grid();
  for (int t = p.steps - 1; t >= 0; --t) {
    // The gate gradients of this block's states; dh and dc come from this
    // block's own work on step t + 1.
    for (int e = threadIdx.x; e < p.B * kStates; e += kThreads) {
      const int b = e / kStates, se = s0 + e % kStates;
      if (se < S) backward_cell(p, t, b, se, e == int(threadIdx.x) ? ahead : load_saved(p, t, b, se));
    }
    // Every block's gate gradients of step t are in memory before any block reads them.
    auto token = grid.barrier_arrive();
    if (t > 0 && has_first) ahead = load_saved(p, t - 1, b_first, s_first);
    grid.barrier_wait(std::move(token));
    // dh_{t-1}[b][s] = sum over n of dG_t[b][n] W_h[n][s], for this block's states.
    for (int b0 = 0; b0 < p.B; b0 += rows) {
      const int count = min(rows, p.B - b0);
      if (b0 > 0) __syncthreads();  // the last pass's readers are done with the staging rows
      stage(staged, p.dG + (int64_t(t) * p.B + b0) * G, int64_t(count) * G);
      stage_wait();
      __syncthreads();
      for_row_groups<kBackwardRowsPerWarp<T>>(count, warp, [&](auto group, int first) {
        constexpr int R = decltype(group)::value;
        const T* dg = staged + first * G;
        T acc[R][kStates] = {};
#pragma unroll 4
        for (int n = lane; n < G; n += kWarp) {
          T wn[kStates];
          load_row(w + n * kStates, wn);
#pragma unroll
          for (int row = 0; row < R; ++row) {
            const T g = dg[row * G + n];
#pragma unroll
            for (int q = 0; q < kStates; ++q) acc[row][q] += g * wn[q];
          }
        }
        // P rows' sums a butterfly exchange: sum m (row m / kStates, state m % kStates) in lanes m L...
        constexpr int P = rows_per_exchange(R, kStates), L = kWarp / (P * kStates);
        const int m = lane / L, j = m % kStates, s = s0 + j;
        const bool owner = lane % L == 0 && s < S;
#pragma unroll
        for (int row = 0; row < R; row += P) {
          T sums[P * kStates];
#pragma unroll
          for (int e = 0; e < P * kStates; ++e) sums[e] = acc[row + e / kStates][e % kStates];
          const T sum = butterfly_sum(sums, lane);
          const int b = b0 + first + row + m / kStates;
          if (owner) {
            if (t > 0)
              p.dh[int64_t(b) * S + s] = sum;
            else
              p.d_h0[b][s] = sum;
          }
        }
      });
    }
    // This block's dh is complete before its threads read it for step t - 1.
    __syncthreads();
  }
}

struct DeviceLimits {
  bool cooperative;
  int multiprocessors;
  size_t shared_per_block, shared_per_multiprocessor, shared_reserved_per_block;
};

const DeviceLimits& limits(int device) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<DeviceLimits>> all(device_count());
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<DeviceLimits>& l = all.at(device);
  if (!l) {
    int cooperative = 0, sms = 0, per_block = 0, per_sm = 0, reserved = 0;
    LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    LLTM_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
    l = std::make_unique<DeviceLimits>(
        DeviceLimits{cooperative != 0, sms, size_t(per_block), size_t(per_sm), size_t(reserved)});
  }
  return *l;
}

int64_t blocks_for(int64_t S, int states) { return (S + states - 1) / states; }

// The fewest states per block (1, 2 or 4) whose grid has at most one block per multiprocessor; 4 beyond.
int states_for(int64_t S) {
  int device = 0;
  LLTM_CUDA_CHECK(cudaGetDevice(&device));
  const int sms = limits(device).multiprocessors;
  for (int states = 1; states < kMaxStates; states *= 2)
    if (blocks_for(S, states) <= sms) return states;
  return kMaxStates;
}

// How a kernel runs S states and B rows: the rows staged per pass (0 when it cannot run) and its shared memory.
struct Plan {
  int rows;
  size_t shared;
};

// The most rows that fit beside the block's 3 states S weights when every
// block must be resident at once, each row taking row_elements, rounded down
// to a multiple of `group` rows (the rows worth grouping, see
// for_row_groups) where a pass holds some but not all of B and at least
// `group`; then a check of the occupancy
// the compiler's registers allow. Plans are cached: a call's plan costs a
// lookup.
template <typename T>
Plan plan(const void* kernel, int states, int64_t S, int64_t B, int64_t row_elements, int64_t group) {
  int device = 0;
  LLTM_CUDA_CHECK(cudaGetDevice(&device));
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, int64_t, int64_t>, Plan> plans;
  const auto key = std::make_tuple(device, kernel, S, B);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto hit = plans.find(key); hit != plans.end()) return hit->second;
  const DeviceLimits& l = limits(device);
  const int64_t per_sm = (blocks_for(S, states) + l.multiprocessors - 1) / l.multiprocessors;
  const int64_t budget = std::min<int64_t>(int64_t(l.shared_per_block),
                                           int64_t(l.shared_per_multiprocessor) / per_sm -
                                               int64_t(l.shared_reserved_per_block));
  const int64_t weights = padded<T>(3 * states * S) * int64_t(sizeof(T)), row = row_elements * int64_t(sizeof(T));
  Plan result{0, 0};
  if (l.cooperative && budget >= weights + row) {
    const int64_t fit = (budget - weights) / row;
    const int64_t rows = fit >= B ? B : fit >= group ? fit / group * group : fit;
    const size_t shared = size_t(weights + rows * row);
    // The cap, not what this size takes: plans of other sizes launch the same
    // kernel, and a smaller limit set for a later size would make an earlier,
    // cached plan's launch fail.
    cudaFuncAttributes attributes;
    LLTM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    LLTM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(l.shared_per_block - attributes.sharedSizeBytes)));
    int resident = 0;
    LLTM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, shared));
    if (resident >= per_sm) result = {int(rows), shared};
  }
  plans.emplace(key, result);
  return result;
}

template <typename T, int kStates>
Plan forward_plan(int64_t S, int64_t B) {
  // A forward row stages h, the block's 3 kStates input sums and its kStates cells.
  return plan<T>(reinterpret_cast<const void*>(forward_persistent<T, kStates>), kStates, S, B, S + 4 * kStates,
                 kGroupedRowsAtLeast<kForwardRowsPerWarp<T>>);
}

template <typename T, int kStates>
Plan backward_plan(int64_t S, int64_t B) {
  return plan<T>(reinterpret_cast<const void*>(backward_persistent<T, kStates>), kStates, S, B, 3 * S,
                 kGroupedRowsAtLeast<kBackwardRowsPerWarp<T>>);
}

// Calls body.template operator()<kStates>() with the states per block that S takes.
template <typename Body>
auto with_states(int64_t S, Body&& body) {
  switch (states_for(S)) {
    case 1:
      return body(std::integral_constant<int, 1>{});
    case 2:
      return body(std::integral_constant<int, 2>{});
    default:
      return body(std::integral_constant<int, kMaxStates>{});
  }
}

}  // namespace

template <typename T>
bool persistent_fits(int64_t S, int64_t B) {
  return with_states(S, [&](auto states) {
    return forward_plan<T, states()>(S, B).rows > 0 && backward_plan<T, states()>(S, B).rows > 0;
  });
}

template <typename T>
void persistent_forward(const SequenceForwardTensors<T>& p, cudaStream_t stream) {
  with_states(p.S, [&](auto states) {
    const Plan plan = forward_plan<T, states()>(p.S, p.B);
    launch_cooperative("forward_persistent", forward_persistent<T, states()>, dim3(unsigned(blocks_for(p.S, states()))),
                       dim3(kThreads), plan.shared, stream, p, plan.rows);
  });
}

template <typename T>
void persistent_backward(const SequenceBackwardTensors<T>& p, cudaStream_t stream) {
  with_states(p.S, [&](auto states) {
    const Plan plan = backward_plan<T, states()>(p.S, p.B);
    launch_cooperative("backward_persistent", backward_persistent<T, states()>,
                       dim3(unsigned(blocks_for(p.S, states()))), dim3(kThreads), plan.shared, stream, p, plan.rows);
  });
}

template bool persistent_fits<float>(int64_t, int64_t);
template bool persistent_fits<double>(int64_t, int64_t);
template void persistent_forward<float>(const SequenceForwardTensors<float>&, cudaStream_t);
template void persistent_forward<double>(const SequenceForwardTensors<double>&, cudaStream_t);
template void persistent_backward<float>(const SequenceBackwardTensors<float>&, cudaStream_t);
template void persistent_backward<double>(const SequenceBackwardTensors<double>&, cudaStream_t);

}  // namespace lltm::cuda
