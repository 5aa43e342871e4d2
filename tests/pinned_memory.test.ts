/**
 * Pinned host memory and non-blocking copies (torch's pin_memory and
 * non_blocking=True): pinned tensors are host tensors in every other respect;
 * a non-blocking copy to the GPU gives the values the source held when it was
 * queued, even when the source is disposed at once and its block handed out
 * again; bad options are refused by name. Without a GPU, pinning is refused
 * with a clear error.
 */
import fc from "fast-check";

import { compileStep, cuda, noGrad, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";

const skip = cudaSkipReason();

test("pinned tensors hold their values on the host, of every dtype, and to() the GPU copies them, blocking or not", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 3000 }),
      fc.constantFrom("float32", "float64", "bfloat16", "float16", "int32") as fc.Arbitrary<"float32" | "float64" | "bfloat16" | "float16" | "int32">,
      fc.boolean(),
      (n, dtype, nonBlocking) => {
        const data = dtype === "int32" ? Int32Array.from({ length: n }, (_, i) => i * 7 - 50) : Float32Array.from({ length: n }, (_, i) => (i % 97) / 8 - 3);
        using pinned = Tensor.fromTypedArray(data, [n], { dtype, pinMemory: true });
        assert(pinned.isPinned(), "fromTypedArray({ pinMemory: true }) is pinned");
        assertEquals(pinned.device.toString(), "cpu");
        using plain = Tensor.fromTypedArray(data, [n], { dtype });
        assertEquals([...pinned.toTypedArray()], [...plain.toTypedArray()]);
        using onGpu = pinned.to("cuda", { nonBlocking });
        assertEquals([...onGpu.toTypedArray()], [...plain.toTypedArray()]);
        using strided = pinned.narrow(0, Math.floor(n / 3), n - Math.floor(n / 3));
        using stridedGpu = strided.to("cuda", { nonBlocking });
        assertEquals([...stridedGpu.toTypedArray()], [...strided.toTypedArray()]);
      },
    ),
    { numRuns: 30 },
  );
}, { skip });

test("pinMemory() copies a host tensor into pinned memory (a pinned one is returned as itself), and empty/zeros pin too", () => {
  using host = Tensor.randn([4, 5], { seed: 1 });
  assert(!host.isPinned(), "a plain host tensor is not pinned");
  using view = host.transpose();
  using pinned = view.pinMemory();
  assert(pinned.isPinned() && pinned.isContiguous(), "pinMemory() gives a contiguous pinned copy");
  assertEquals(pinned.toArray(), view.toArray());
  using again = pinned.pinMemory();
  assert(again.storage === pinned.storage, "pinMemory() of a pinned tensor shares its memory");
  using zeros = Tensor.zeros([3], { pinMemory: true, dtype: "float64" });
  assert(zeros.isPinned(), "zeros({ pinMemory: true }) is pinned");
  assertEquals(zeros.toArray(), [0, 0, 0]);
  using onGpu = Tensor.zeros([2], { device: "cuda" });
  assert(!onGpu.isPinned(), "device memory is not pinned host memory");
}, { skip });

test("a non-blocking copy from a pinned tensor disposed at once keeps its values while new pinned blocks are written", () => {
  const n = 1 << 22;
  const rounds = 6;
  const gpu: Tensor[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      // The block of the round before is free now; if the pool handed it out before its copy ran, that copy would see this round's values.
      using pinned = Tensor.full([n], r, { pinMemory: true });
      gpu.push(pinned.to("cuda", { nonBlocking: true }));
    }
    cuda.synchronize();
    gpu.forEach((t, r) => {
      const got = t.toTypedArray() as Float32Array;
      assert(got.every((v) => v === r), `round ${r}: the device holds the values queued from its own pinned block`);
    });
  } finally {
    for (const t of gpu) t.dispose();
  }
}, { skip });

test("copyFrom({ nonBlocking: true }) into a device tensor, and to() the host with it, finish as copies do", () => {
  using src = Tensor.fromTypedArray(Float32Array.from([1, 2, 3, 4]), [2, 2], { pinMemory: true });
  using dst = Tensor.zeros([2, 2], { device: "cuda" });
  dst.copyFrom(src, { nonBlocking: true });
  using back = dst.to("cpu", { nonBlocking: true });
  assertEquals(back.toArray(), [[1, 2], [3, 4]]);
}, { skip });

test("a compiled step takes pinned inputs without waiting for their copies, each disposed at once", () => {
  using sum = Tensor.zeros([5], { device: "cuda" });
  using step = compileStep((x: Tensor) => noGrad(() => void sum.add_(x)), { device: "cuda" });
  const rounds = 8;
  for (let r = 1; r <= rounds; r++) {
    using x = Tensor.full([5], r, { pinMemory: true });
    step(x);
  }
  assert(step.captured, "the step was captured");
  assertEquals([...sum.toTypedArray()], new Array(5).fill((rounds * (rounds + 1)) / 2));
}, { skip });

test("pinning a device tensor, or with a device, and bad copy options are refused by name", () => {
  using onGpu = Tensor.zeros([2], { device: "cuda" });
  assertThrowsLLTM(() => onGpu.pinMemory(), "INVALID_DEVICE", /^pinMemory: only host tensors are pinned; the tensor is on cuda:0/);
  assertThrowsLLTM(() => Tensor.empty([2], { device: "cuda", pinMemory: true }), "INVALID_DEVICE", /^Tensor\.empty: pinMemory is for host tensors/);
  using host = Tensor.zeros([2]);
  assertThrowsLLTM(() => host.to("cuda", { nonBlocking: "yes" as unknown as boolean }), "INVALID_ARGUMENT", /^to: 'nonBlocking' must be a boolean/);
}, { skip });

test("without the CUDA backend or a GPU, pinning is refused with a clear error and nothing is allocated", () => {
  assertThrowsLLTM(() => Tensor.zeros([3], { pinMemory: true }), "BACKEND_UNAVAILABLE", /^Tensor\.zeros: .*(CUDA|cuda)/);
  using host = Tensor.zeros([3]);
  assertThrowsLLTM(() => host.pinMemory(), "BACKEND_UNAVAILABLE", /^pinMemory: .*(CUDA|cuda)/);
  assertThrowsLLTM(() => Tensor.zeros([2], { pinMemory: 1 as unknown as boolean }), "INVALID_ARGUMENT", /^Tensor\.zeros: 'pinMemory' must be a boolean, got 1/);
}, { skip: skip === false ? "a GPU is present: pinning works here" : false });
