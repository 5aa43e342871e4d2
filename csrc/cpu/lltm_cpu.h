// The CPU backend: every op of the table and host memory. Calls arrive
// validated (api/); these throw lltm::Error on failure. The kernels run the
// instruction-set variant chosen at load time (isa_dispatch.cpp).
#pragma once

#include <cstdint>

#include "../memory_counters.h"
#include "../op_call.h"

namespace lltm::cpu {

// Runs call.op; `fn` names the entry point in a refusal (no kernels this CPU can run).
void run(const OpCall& call, const char* fn);
// Whether op has a bfloat16 kernel in the kernels in use that this CPU can run (AVX512_BF16);
// run_bf16 runs it on a call whose float tensors are all bfloat16 and contiguous, but for the slots
// of bf16_float32_slots (bits), which may also be float32.
bool has_bf16_kernel(int32_t op, const char* fn);
uint32_t bf16_float32_slots(int32_t op, const char* fn);
void run_bf16(const OpCall& call, const char* fn);
// dst = src converted to dst's dtype (equal sizes, checked by the caller): the COPY op.
void copy(const lltm_tensor& dst, const lltm_tensor& src, const char* fn);

// Host memory, 64-byte aligned, counted in counters().
void* alloc(uint64_t bytes);
void free(void* data);
MemoryCounters& counters();

// The name of the kernels' variant in use: avx512, avx2, baseline or native.
const char* kernels_name();

}  // namespace lltm::cpu
