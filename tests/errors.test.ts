/**
 * Bad input: every argument error is raised before any kernel runs, names
 * the argument and what was expected, and leaves caller memory untouched.
 * The C ABI is checked directly too, since it is public.
 */
import { backendInfo, loadLibrary, lltmBackward, lltmForward, Tensor } from "../ts/index.ts";
import { Status } from "../ts/native/constants.ts";
import { type Describable, DescriptorBlock } from "../ts/native/descriptor.ts";
import { native } from "../ts/native/library.ts";
import { altered } from "./descriptors.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";

const B = 3, F = 4, S = 5;

function inputs(dtype: "float32" | "float64" = "float64") {
  const o = { dtype };
  return {
    input: Tensor.randn([B, F], { ...o, seed: 1 }),
    weights: Tensor.randn([3 * S, S + F], { ...o, seed: 2 }),
    bias: Tensor.randn([3 * S], { ...o, seed: 3 }),
    oldH: Tensor.randn([B, S], { ...o, seed: 4 }),
    oldCell: Tensor.randn([B, S], { ...o, seed: 5 }),
    [Symbol.dispose]() {
      for (const t of [this.input, this.weights, this.bias, this.oldH, this.oldCell]) t.dispose();
    },
  };
}

test("a wrongly shaped argument is named with the shape expected", () => {
  using a = inputs();
  using badW = Tensor.zeros([3 * S, S + F + 1], { dtype: "float64" });
  assertThrowsLLTM(() => lltmForward(a.input, badW, a.bias, a.oldH, a.oldCell), "SHAPE_MISMATCH", /'weights' must have shape \[15, 9\] \(3S, S\+F\), got \[15, 10\]/);
  using badBias = Tensor.zeros([3 * S, 1], { dtype: "float64" });
  assertThrowsLLTM(() => lltmForward(a.input, a.weights, badBias, a.oldH, a.oldCell), "SHAPE_MISMATCH", /'bias' must have shape \[15\]/);
  using badCell = Tensor.zeros([B + 1, S], { dtype: "float64" });
  assertThrowsLLTM(() => lltmForward(a.input, a.weights, a.bias, a.oldH, badCell), "SHAPE_MISMATCH", /lltmForward: 'oldCell' must have shape \[3, 5\] \(B, S\)/);
  using flat = Tensor.zeros([B * F], { dtype: "float64" });
  assertThrowsLLTM(() => lltmForward(flat, a.weights, a.bias, a.oldH, a.oldCell), "SHAPE_MISMATCH", /'input' must have 2 dimensions/);
});

test("mixed dtypes are refused, naming both arguments", () => {
  using a = inputs();
  using h32 = Tensor.zeros([B, S], { dtype: "float32" });
  assertThrowsLLTM(() => lltmForward(a.input, a.weights, a.bias, h32, a.oldCell), "INVALID_DTYPE", /lltmForward: 'oldH' has dtype float32 but 'input' has dtype float64/);
});

test("a disposed argument is refused by name", () => {
  using a = inputs();
  const gone = Tensor.zeros([B, S], { dtype: "float64" });
  gone.dispose();
  assertThrowsLLTM(() => lltmForward(a.input, a.weights, a.bias, a.oldH, gone), "DISPOSED", /lltmForward: 'oldCell' has been disposed/);
});

test("backward checks its arguments the same way", () => {
  using a = inputs();
  using fw = lltmForward(a.input, a.weights, a.bias, a.oldH, a.oldCell);
  using g = Tensor.ones([B, S], { dtype: "float64" });
  using wrong = Tensor.ones([B, S + 1], { dtype: "float64" });
  assertThrowsLLTM(() => lltmBackward(g, wrong, fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, a.weights), "SHAPE_MISMATCH", /lltmBackward: 'gradCell' must have shape \[3, 5\]/);
  const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, a.weights] as const;
  assertThrowsLLTM(() => lltmBackward(g, g, ...saved, { gradOutput: wrong }), "SHAPE_MISMATCH", /lltmBackward: 'gradOutput' must have shape \[3, 5\]/);
  const gone = Tensor.ones([B, S], { dtype: "float64" });
  gone.dispose();
  assertThrowsLLTM(() => lltmBackward(g, g, ...saved, { gradOutput: gone }), "DISPOSED", /lltmBackward: 'gradOutput' has been disposed/);
});

const cudaMissing = !backendInfo().cuda;

test("a cuda tensor without a usable CUDA backend gives a clear error", () => {
  const e = assertThrowsLLTM(() => Tensor.zeros([2], { device: "cuda" }), "BACKEND_UNAVAILABLE", /CUDA/);
  assert(/no CUDA backend|no CUDA GPU/.test(e.message), e.message);
}, { skip: !cudaMissing && "this machine has a GPU" });

test("a missing library is reported with how to build it", async () => {
  let message = "";
  try {
    await loadLibrary("/nonexistent/liblltm.so");
  } catch (e) {
    message = (e as Error).message;
  }
  assert(/cannot load the native library at \/nonexistent\/liblltm.so/.test(message), message);
  assert(/LLTM_LIBRARY_PATH/.test(message), message);
});

// ---- the C ABI directly ----

const SENTINEL = 12345;

/** Calls lltm_forward with outputs pre-filled with a sentinel; returns the status and whether they stayed untouched. */
function rawForward(
  patch: (args: Describable[], slots: number[]) => void,
  dtype = 1, kind = 0, index = 0,
): { status: number; message: string; untouched: boolean } {
  using a = inputs();
  const outs = [[B, S], [B, S], [B, S], [B, S], [B, S], [B, S + F], [B, 3 * S]].map((s) => Tensor.full(s, SENTINEL, { dtype: "float64" }));
  using block = new DescriptorBlock(12);
  try {
    const args: Describable[] = [a.input, a.weights, a.bias, a.oldH, a.oldCell, ...outs];
    const slots: number[] = [];
    patch(args, slots);
    args.forEach((t, i) => (slots[i] ??= block.write(i, t)));
    const lib = native();
    const status = lib.lltm_forward(
      slots[0]!, slots[1]!, slots[2]!, slots[3]!, slots[4]!, slots[5]!, slots[6]!, slots[7]!, slots[8]!, slots[9]!,
      slots[10]!, slots[11]!, dtype, kind, index,
    );
    const untouched = outs.every((t) => t.toTypedArray().every((v) => v === SENTINEL));
    return { status, message: lib.lltm_last_error(), untouched };
  } finally {
    for (const t of outs) t.dispose();
  }
}

test("C ABI: a null tensor pointer is refused and nothing is written", () => {
  const r = rawForward((_, slots) => (slots[3] = 0));
  assertEquals(r.status, Status.NULL_POINTER);
  assert(/lltm_forward: 'old_h' is a null pointer/.test(r.message), r.message);
  assert(r.untouched, "outputs untouched");
});

test("C ABI: null data, bad sizes and strides, and zero-stride outputs are refused", () => {
  const { NULL_POINTER, INVALID_SHAPE, SHAPE_MISMATCH } = Status;
  const cases: [string, number, Partial<Describable>, number, RegExp][] = [
    ["null data", 2, { dataAddress: 0 }, NULL_POINTER, /'bias' has a null data pointer/],
    ["zero size", 0, { shape: [0, F] }, INVALID_SHAPE, /'input' has size 0 in dimension 0/],
    ["negative stride", 1, { strides: [-3, 1] }, INVALID_SHAPE, /'weights' has stride -3 in dimension 0/],
    ["bad rank", 4, { shape: [1, 1, 1, 1, 1], strides: [1, 1, 1, 1, 1] }, INVALID_SHAPE, /'old_cell' has 5 dimensions/],
    ["zero-stride output", 5, { strides: [0, 1] }, INVALID_SHAPE, /'new_h' is an output with stride 0/],
    ["mismatched output", 11, { shape: [B, 3 * S - 1] }, SHAPE_MISMATCH, /'gate_weights' must have shape \[3, 15\]/],
  ];
  for (const [what, arg, change, status, pattern] of cases) {
    const r = rawForward((args) => {
      args[arg] = altered(args[arg]!, change);
    });
    assertEquals(r.status, status, what);
    assert(pattern.test(r.message), `${what}: ${r.message}`);
    assert(r.untouched, `${what}: outputs untouched`);
  }
});

test("C ABI: unknown dtype, unknown device and a CPU index other than 0 are refused", () => {
  const dtype = rawForward(() => {}, 7);
  assertEquals(dtype.status, Status.INVALID_DTYPE);
  assert(/dtype 7 is not float32 \(0\) or float64 \(1\)/.test(dtype.message), dtype.message);
  const kind = rawForward(() => {}, 1, 9);
  assertEquals(kind.status, Status.INVALID_DEVICE);
  assert(/device_kind 9 is not cpu \(0\) or cuda \(1\)/.test(kind.message), kind.message);
  const index = rawForward(() => {}, 1, 0, 2);
  assertEquals(index.status, Status.INVALID_DEVICE);
  assert(/device_index must be 0 for the CPU, got 2/.test(index.message), index.message);
  for (const r of [dtype, kind, index]) assert(r.untouched, "outputs untouched");
});

test("C ABI: unknown flags of lltm_backward_ex are refused", () => {
  using a = inputs();
  using fw = lltmForward(a.input, a.weights, a.bias, a.oldH, a.oldCell);
  using g = Tensor.ones([B, S], { dtype: "float64" });
  const outs = [[B, S], [B, F], [3 * S, S + F], [3 * S], [B, S]].map((s) => Tensor.full(s, SENTINEL, { dtype: "float64" }));
  using block = new DescriptorBlock(14);
  try {
    const ins = [g, g, fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, a.weights, ...outs];
    const slots = ins.map((t, i) => block.write(i, t));
    const lib = native();
    const status = lib.lltm_backward_ex(
      slots[0]!, slots[1]!, slots[2]!, slots[3]!, slots[4]!, slots[5]!, slots[6]!, slots[7]!, slots[8]!, slots[9]!,
      slots[10]!, slots[11]!, slots[12]!, slots[13]!, 6, 1, 0, 0,
    );
    assertEquals(status, Status.INVALID_ARGUMENT);
    assert(/unknown bits in flags 6/.test(lib.lltm_last_error()), lib.lltm_last_error());
    assert(outs.every((t) => t.toTypedArray().every((v) => v === SENTINEL)), "outputs untouched");
  } finally {
    for (const t of outs) t.dispose();
  }
});

test("C ABI: strided (transposed) outputs receive the same values", () => {
  using a = inputs();
  using ref = lltmForward(a.input, a.weights, a.bias, a.oldH, a.oldCell);
  const shapes = [[B, S], [B, S], [B, S], [B, S], [B, S], [B, S + F], [B, 3 * S]];
  const bases = shapes.map(([r, c]) => Tensor.zeros([c!, r!], { dtype: "float64" }));
  const outs = bases.map((t) => t.transpose());
  using block = new DescriptorBlock(12);
  try {
    const slots = [a.input, a.weights, a.bias, a.oldH, a.oldCell, ...outs].map((t, i) => block.write(i, t));
    const status = native().lltm_forward(
      slots[0]!, slots[1]!, slots[2]!, slots[3]!, slots[4]!, slots[5]!, slots[6]!, slots[7]!, slots[8]!, slots[9]!,
      slots[10]!, slots[11]!, 1, 0, 0,
    );
    assertEquals(status, Status.OK);
    const expected = [ref.newH, ref.newCell, ref.inputGate, ref.outputGate, ref.candidateCell, ref.X, ref.gateWeights];
    outs.forEach((t, i) => assertEquals(t.toArray(), expected[i]!.toArray(), `output ${i}`));
  } finally {
    for (const t of [...outs, ...bases]) t.dispose();
  }
});
