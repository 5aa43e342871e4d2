/** Device memory, copies between devices, and the right GPU. Skipped without a GPU. */
import { fileURLToPath } from "node:url";

import { backendInfo, cuda, lltmForward, referenceForward, relativeError, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, cudaSkipReason, test } from "./harness.ts";
import { runChild, runChildAsync, testFile } from "./child.ts";

const skip = cudaSkipReason();

test("tensors go to the GPU and back unchanged, strided views included", () => {
  for (const dtype of ["float32", "float64"] as const) {
    using host = Tensor.randn([5, 7], { dtype, seed: 3 });
    using dev = host.to("cuda");
    assertEquals(dev.device.toString(), "cuda:0");
    assertEquals(dev.toArray(), host.toArray());
    using t = host.transpose();
    using devT = t.to("cuda");
    assertEquals(devT.toArray(), t.toArray());
    using devView = dev.transpose();
    using back = devView.cpu();
    assertEquals(back.toArray(), t.toArray());
    using narrowed = dev.narrow(1, 2, 3);
    using hostNarrowed = host.narrow(1, 2, 3);
    assertEquals(narrowed.toArray(), hostNarrowed.toArray());
    using intoBase = Tensor.zeros([7, 5], { dtype });
    using into = intoBase.transpose();
    into.copyFrom(dev);
    assertEquals(into.toArray(), host.toArray());
  }
}, { skip });

test("fill, zeros and full work on the GPU", () => {
  using z = Tensor.zeros([3, 4], { device: "cuda" });
  using f = Tensor.full([2], 1.5, { device: "cuda", dtype: "float64" });
  assertEquals(z.toArray(), [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
  assertEquals(f.toArray(), [1.5, 1.5]);
  cuda.synchronize();
}, { skip });

test("fill on the GPU: zeros over every float dtype, dense and strided, and -0 kept as it is", () => {
  for (const dtype of ["float32", "float64", "bfloat16", "float16"] as const) {
    using t = Tensor.full([5, 7], 3, { device: "cuda", dtype });
    t.fill(0);
    assertEquals(t.toArray(), Array.from({ length: 5 }, () => Array(7).fill(0)), `${dtype}: dense zeros`);
    using u = Tensor.full([5, 7], 3, { device: "cuda", dtype });
    using columns = u.transpose();
    columns.narrow(0, 1, 3).fill(0);
    const expected = Array.from({ length: 5 }, () => [3, 0, 0, 0, 3, 3, 3]);
    assertEquals(u.toArray(), expected, `${dtype}: a strided view's zeros, the rest untouched`);
    t.fill(-0);
    assert(Array.from(t.toTypedArray()).every((v) => Object.is(v, -0)), `${dtype}: -0 is not a memset of zeros`);
  }
}, { skip });

test("tensors on different devices are refused by name", () => {
  using x = Tensor.randn([2, 3], { device: "cuda" });
  using w = Tensor.randn([6, 5]);
  using b = Tensor.randn([6], { device: "cuda" });
  using h = Tensor.randn([2, 2], { device: "cuda" });
  using c = Tensor.randn([2, 2], { device: "cuda" });
  assertThrowsLLTM(() => lltmForward(x, w, b, h, c), "INVALID_DEVICE", /'weights' is on cpu but 'input' is on cuda:0/);
}, { skip });

test("a device index past the last GPU is refused", () => {
  const n = cuda.deviceCount();
  assertThrowsLLTM(() => Tensor.zeros([1], { device: `cuda:${n}` }), "INVALID_DEVICE", new RegExp(`device_index ${n} is out of range`));
}, { skip });

const second = skip || (cuda.deviceCount() < 2 && "one GPU only: the second-GPU test needs two");

test("tensors on cuda:1 run on cuda:1, and copy between GPUs", () => {
  const B = 4, F = 6, S = 10;
  const on = (seed: number, shape: number[]) => Tensor.randn(shape, { dtype: "float64", seed, device: "cuda:1" });
  using x = on(1, [B, F]), w = on(2, [3 * S, S + F]), b = on(3, [3 * S]), h = on(4, [B, S]), c = on(5, [B, S]);
  using out = lltmForward(x, w, b, h, c);
  assertEquals(out.newH.device.toString(), "cuda:1");
  const ref = referenceForward(x, w, b, h, c);
  assert(relativeError(out.newH.toTypedArray(), ref.newH.data) <= 1e-12, "cuda:1 result matches the reference");
  using moved = out.newH.to("cuda:0");
  assertEquals(moved.toArray(), out.newH.toArray());
  cuda.synchronize("cuda:1");
}, { skip: second });

// The kernels are chosen once per process (from the sizes, and from
// LLTM_CUDA_KERNELS), so each path is checked in a process of its own: the
// 64-bit-index fused kernels serve only tensors of more than 2^31 elements,
// and cuBLAS only sizes above the property tests' (and only where the
// backend found cuBLAS: a prebuilt backend without it has its own kernels alone).
test("every CUDA path matches the reference: fused with 32- and 64-bit indexing, and cuBLAS where present", () => {
  const check = fileURLToPath(new URL("../scripts/check.ts", import.meta.url));
  const paths = backendInfo().cudaBlas === "cublas" ? ["fused", "fused-int64", "cublas"] : ["fused", "fused-int64"];
  for (const kernels of paths) {
    const r = runChild(check, ["--cuda", "-b", "37", "-f", "19", "-s", "45"], { env: { LLTM_CUDA_KERNELS: kernels }, timeoutMs: 300_000 });
    assert(r.status === 0, `LLTM_CUDA_KERNELS=${kernels}: check.ts failed:\n${r.stdout}${r.stderr}`);
  }
}, { skip });

// LLTM_CUDA_KERNELS=cublas where the backend has no cuBLAS is refused by name, in every dtype (the half
// types' step takes no size rule of its own but honours the forced path). LLTM_CUBLAS_LIBRARY=none takes
// cuBLAS away from a backend that opens it at run time; one that links it keeps it, and then runs.
test("a forced cuBLAS path without cuBLAS is refused, for float32 and the half types alike", () => {
  for (const dt of ["float32", "bfloat16", "float16"]) {
    const r = runChild(testFile("forced_cublas_child.ts"), [dt], { env: { LLTM_CUDA_KERNELS: "cublas", LLTM_CUBLAS_LIBRARY: "none" } });
    const expected = r.stdout.startsWith("cublas ")
      ? new RegExp(`^cublas ran ${dt}`)
      : /^own refused BACKEND_UNAVAILABLE lltmForward: the cuBLAS path was asked for \(LLTM_CUDA_KERNELS=cublas\)/;
    assert(r.status === 0 && expected.test(r.stdout), `${dt}: ${r.stdout}${r.stderr}`);
  }
}, { skip });

// The half types' sequences on each recurrence: on the graph path a bfloat16 call's products read its inputs and
// weights as the caller gave them, any view; every other call computes on float32 copies of its tensors.
test("bfloat16 and float16 sequences match the float64 reference on every CUDA sequence path", () => {
  const failures: string[] = [];
  for (const kernels of ["graph", "cluster", "persistent", "fused,graph"])
    for (const dt of ["bfloat16", "float16"]) {
      const r = runChild(testFile("sequence_half_child.ts"), [dt], { env: { LLTM_CUDA_KERNELS: kernels }, timeoutMs: 120_000 });
      if (r.status !== 0) failures.push(`LLTM_CUDA_KERNELS=${kernels} ${dt}:\n${r.stdout}${r.stderr}`);
    }
  assert(failures.length === 0, failures.join("\n"));
}, { skip });

// The sequence engine's CUDA paths, each in a process of its own like the
// step's: the cluster kernels (where they fit), the persistent kernels
// (where they fit), the graph of per-step kernels, and each with the
// library's own product kernel instead of cuBLAS.
test("every CUDA sequence path matches the float64 reference: cluster, persistent, graph, and the own product kernel", async () => {
  const check = fileURLToPath(new URL("../scripts/check_sequence.ts", import.meta.url));
  // The graph path again with lengths, with exact products and with "medium" ones (its bfloat16 copies of h
  // and of the gate gradients, beside a dead sample's carried state).
  const runs: [string, string[]][] = [
    ...["cluster", "persistent", "graph", "fused,cluster", "fused,persistent", "fused,graph"].map((k): [string, string[]] => [k, []]),
    ["graph", ["--lengths"]], ["graph", ["--lengths", "--precision", "medium"]],
    // The persistent recurrence on the tensor cores (S up to 512), with and without lengths: TF32 products,
    // and bfloat16 ones.
    ["persistent", ["--precision", "high"]], ["persistent", ["--lengths", "--precision", "high"]],
    ["persistent", ["--precision", "medium"]], ["persistent", ["--lengths", "--precision", "medium"]],
    // Both passes in tensor-core clusters, both products.
    ["cluster-mma", ["--lengths", "--precision", "high"]], ["cluster-mma", ["--precision", "medium"]],
  ];
  // Four processes at once: each spends most of its time in its float64 reference, on a core of its own.
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < runs.length) {
      const [kernels, extra] = runs[next++]!;
      const r = await runChildAsync(check, ["--cuda", ...extra], { env: { LLTM_CUDA_KERNELS: kernels }, timeoutMs: 300_000 });
      if (r.status !== 0) failures.push(`LLTM_CUDA_KERNELS=${kernels} ${extra.join(" ")}: check_sequence.ts failed:\n${r.stdout}${r.stderr}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  assert(failures.length === 0, failures.join("\n"));
}, { skip });
