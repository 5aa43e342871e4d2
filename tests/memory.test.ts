/**
 * Memory counters (lltm_memory_stat): memoryStats on the CPU and on CUDA, and
 * torch.cuda's names (cuda.memoryAllocated, maxMemoryAllocated,
 * memoryReserved, resetPeakMemoryStats), which refuse other devices.
 */
import { cuda, memoryStats, resetPeakMemoryStats, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";

/** The bytes a block of `bytes` is counted as on the CPU: rounded up to 64 (csrc/cpu/memory_cpu.cpp). */
const cpuBlock = (bytes: number) => Math.ceil(bytes / 64) * 64;

// Larger than the blocks the tensors' storage keeps for reuse on the CPU (ts/storage.ts), so that dispose() frees it.
const rows = 10_001;

test("the CPU's counters follow tensors made and freed, and the peak resets to what is allocated", () => {
  // The first tensor of the kind also makes the blocks the native calls describe their arguments in, which stay.
  Tensor.zeros([rows, 3], { dtype: "float64" }).dispose();
  const before = memoryStats("cpu");
  assert(before.peakAllocated >= before.allocated && before.reserved >= before.allocated, JSON.stringify(before));
  const t = Tensor.zeros([rows, 3], { dtype: "float64" });
  const during = memoryStats("cpu");
  assertEquals(during.allocated - before.allocated, cpuBlock(rows * 3 * 8), `allocated bytes of a [${rows}, 3] float64 tensor`);
  assert(during.peakAllocated >= during.allocated, `peak ${during.peakAllocated} below allocated ${during.allocated}`);
  t.dispose();
  const after = memoryStats("cpu");
  assertEquals(after.allocated, before.allocated, "allocated once the tensor is freed");
  assert(after.peakAllocated >= during.allocated, "the peak remembers the tensor");
  assert(after.reserved >= during.allocated, "the freed block is kept for reuse, still reserved");
  // The next tensor of that size reuses the kept block: nothing more is reserved.
  const again = Tensor.zeros([rows, 3], { dtype: "float64" });
  assertEquals(memoryStats("cpu").reserved, after.reserved, "reserved after reusing the block");
  again.dispose();
  resetPeakMemoryStats("cpu");
  assertEquals(memoryStats("cpu").peakAllocated, memoryStats("cpu").allocated, "peak after resetPeakMemoryStats");
});

test("the counters' functions refuse what is not a device of theirs, naming themselves", () => {
  for (const [name, f] of [
    ["cuda.memoryAllocated", () => cuda.memoryAllocated("cpu")],
    ["cuda.maxMemoryAllocated", () => cuda.maxMemoryAllocated("cpu")],
    ["cuda.memoryReserved", () => cuda.memoryReserved("cpu")],
    ["cuda.resetPeakMemoryStats", () => cuda.resetPeakMemoryStats("cpu")],
  ] as const) {
    assertThrowsLLTM(f, "INVALID_DEVICE", new RegExp(`^${name.replace(".", "\\.")}: cpu is not a CUDA device`));
  }
  assertThrowsLLTM(() => memoryStats("tpu" as "cpu"), "INVALID_ARGUMENT", /device must be "cpu", "cuda" or "cuda:N", got "tpu"/);
});

test("a CUDA device's counters: a tensor's block is counted while it lives, its memory stays reserved in the pool", () => {
  cuda.synchronize();
  const before = cuda.memoryAllocated();
  resetPeakMemoryStats("cuda");
  const t = Tensor.zeros([1 << 20], { device: "cuda" });
  const during = cuda.memoryAllocated();
  assert(during - before >= 4 << 20, `allocated grew by ${during - before}, less than the tensor's 4 MiB`);
  assert(cuda.maxMemoryAllocated() >= during && cuda.memoryReserved() >= during, "peak and reserved cover what is allocated");
  t.dispose();
  assertEquals(cuda.memoryAllocated(), before, "allocated once the tensor is freed");
  assert(cuda.memoryReserved() >= during, "the freed block stays in the pool");
  assertEquals(memoryStats("cuda:0").peakAllocated, cuda.maxMemoryAllocated("cuda:0"), "memoryStats and cuda.* agree");
  cuda.resetPeakMemoryStats();
  assertEquals(cuda.maxMemoryAllocated(), before, "peak after resetPeakMemoryStats");
}, { skip: cudaSkipReason() });
