/**
 * Bad input to the sequence calls: refused before anything runs, with the
 * argument named and what was expected, and no output written; through the
 * TypeScript ops and through the C ABI directly.
 */
import { type Describable, DescriptorBlock } from "../ts/native/descriptor.ts";
import { lltmSequenceBackward, lltmSequenceForward, Tensor } from "../ts/index.ts";
import { native } from "../ts/native/library.ts";
import { altered } from "./descriptors.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";

const T = 4, B = 3, F = 2, S = 5;
const o = { dtype: "float64" as const };

function inputs() {
  const t = {
    inputs: Tensor.randn([T, B, F], { ...o, seed: 1 }),
    weights: Tensor.randn([3 * S, S + F], { ...o, seed: 2 }),
    bias: Tensor.randn([3 * S], { ...o, seed: 3 }),
    h0: Tensor.randn([B, S], { ...o, seed: 4 }),
    c0: Tensor.randn([B, S], { ...o, seed: 5 }),
    [Symbol.dispose]() {
      for (const x of [t.inputs, t.weights, t.bias, t.h0, t.c0]) x.dispose();
    },
  };
  return t;
}

const reserveBytes = T * B * 5 * S * 8;

test("lltmSequenceForward names a wrongly shaped, typed or disposed argument", () => {
  using a = inputs();
  using flat = Tensor.zeros([T * B, F], o);
  assertThrowsLLTM(() => lltmSequenceForward(flat, a.weights, a.bias, a.h0, a.c0), "SHAPE_MISMATCH", /lltmSequenceForward: 'inputs' must have 3 dimensions/);
  using badW = Tensor.zeros([3 * S, S + F + 1], o);
  assertThrowsLLTM(() => lltmSequenceForward(a.inputs, badW, a.bias, a.h0, a.c0), "SHAPE_MISMATCH", /'weights' must have shape \[15, 7\] \(3S, S\+F\), got \[15, 8\]/);
  using badC = Tensor.zeros([B + 1, S], o);
  assertThrowsLLTM(() => lltmSequenceForward(a.inputs, a.weights, a.bias, a.h0, badC), "SHAPE_MISMATCH", /'c0' must have shape \[3, 5\] \(B, S\)/);
  using h32 = Tensor.zeros([B, S]);
  assertThrowsLLTM(() => lltmSequenceForward(a.inputs, a.weights, a.bias, h32, a.c0), "INVALID_DTYPE", /lltmSequenceForward: 'h0' has dtype float32 but 'inputs' has dtype float64/);
  const gone = Tensor.zeros([3 * S], o);
  gone.dispose();
  assertThrowsLLTM(() => lltmSequenceForward(a.inputs, a.weights, gone, a.h0, a.c0), "DISPOSED", /lltmSequenceForward: 'bias' has been disposed/);
});

test("lltmSequenceBackward names bad gradients and a reserve that is not one", () => {
  using a = inputs();
  using fw = lltmSequenceForward(a.inputs, a.weights, a.bias, a.h0, a.c0);
  using wrong = Tensor.zeros([T + 1, B, S], o);
  assertThrowsLLTM(
    () => lltmSequenceBackward(wrong, undefined, undefined, fw.reserve!, a.inputs, a.weights, a.h0),
    "SHAPE_MISMATCH", /lltmSequenceBackward: 'gradOutputs' must have shape \[4, 3, 5\] \(T, B, S\)/,
  );
  using wrongCell = Tensor.zeros([B, S + 1], o);
  assertThrowsLLTM(
    () => lltmSequenceBackward(undefined, undefined, wrongCell, fw.reserve!, a.inputs, a.weights, a.h0),
    "SHAPE_MISMATCH", /'gradLastCell' must have shape \[3, 5\]/,
  );
  using small = Tensor.zeros([10], o);
  assertThrowsLLTM(
    () => lltmSequenceBackward(undefined, undefined, undefined, small, a.inputs, a.weights, a.h0),
    "INVALID_ARGUMENT", /lltmSequenceBackward: 'reserve' has 80 bytes but T = 4, B = 3, S = 5 needs 2400/,
  );
  using inference = lltmSequenceForward(a.inputs, a.weights, a.bias, a.h0, a.c0, { training: false });
  assert(inference.reserve === undefined, "no reserve in inference");
});

// ---- the C ABI directly ----

const SENTINEL = 4321;

interface Raw {
  status: number;
  message: string;
  untouched: boolean;
}

/** The descriptor addresses of `args` in a block (0 for an absent one), and the mask of those present. */
function describe(block: DescriptorBlock, args: readonly (Describable | undefined)[]): { slots: number[]; given: number } {
  let given = 0;
  const slots = args.map((t, i) => {
    if (t === undefined) return 0;
    given |= 1 << i;
    return block.write(i, t);
  });
  return { slots, given };
}

/** lltm_sequence_forward with outputs and the reserve pre-filled with a sentinel; `patch` alters the arguments. */
function rawForwardOf(
  patch: (args: (Describable | undefined)[]) => void,
  extra: { reserve?: number; reserveAt?: number; bytes?: number; flags?: number; dtype?: number; kind?: number; index?: number } = {},
): Raw {
  using a = inputs();
  const outs = [[T, B, S], [B, S], [B, S]].map((s) => Tensor.full(s, SENTINEL, o));
  using reserve = Tensor.full([reserveBytes / 8], SENTINEL, o);
  try {
    const args: (Describable | undefined)[] = [a.inputs, a.weights, a.bias, a.h0, a.c0, ...outs];
    patch(args);
    using block = new DescriptorBlock(8);
    const { slots: s } = describe(block, args);
    const lib = native();
    const reserveAddress = extra.reserveAt !== undefined ? args[extra.reserveAt]!.dataAddress : extra.reserve ?? reserve.dataAddress;
    const bytes = extra.bytes ?? reserveBytes, flags = extra.flags ?? 1, dtype = extra.dtype ?? 1;
    const kind = extra.kind ?? 0, index = extra.index ?? 0;
    const status = lib.lltm_sequence_forward(
      s[0]!, s[1]!, s[2]!, s[3]!, s[4]!, s[5]!, s[6]!, s[7]!, reserveAddress, bytes, flags, dtype, kind, index,
    );
    const untouched = [...outs, reserve].every((t) => t.toTypedArray().every((v) => v === SENTINEL));
    return { status, message: lib.lltm_last_error(), untouched };
  } finally {
    for (const t of outs) t.dispose();
  }
}

/** lltm_sequence_backward on a real reserve, with outputs pre-filled with a sentinel. */
function rawBackwardOf(
  patch: (args: (Describable | undefined)[]) => void, extra: { reserve?: number; bytes?: number; flags?: number } = {},
): Raw {
  using a = inputs();
  using fw = lltmSequenceForward(a.inputs, a.weights, a.bias, a.h0, a.c0);
  using go = Tensor.ones([T, B, S], o);
  const outs = [[T, B, F], [3 * S, S + F], [3 * S], [B, S], [B, S]].map((s) => Tensor.full(s, SENTINEL, o));
  try {
    const args: (Describable | undefined)[] = [go, undefined, undefined, a.inputs, a.weights, a.h0, ...outs];
    patch(args);
    using block = new DescriptorBlock(11);
    const { slots: s } = describe(block, args);
    const lib = native();
    const reserve = extra.reserve ?? fw.reserve!.dataAddress, bytes = extra.bytes ?? reserveBytes, flags = extra.flags ?? 0;
    const status = lib.lltm_sequence_backward(
      s[0]!, s[1]!, s[2]!, reserve, bytes, s[3]!, s[4]!, s[5]!, s[6]!, s[7]!, s[8]!, s[9]!, s[10]!, flags, 1, 0, 0,
    );
    const untouched = outs.every((t) => t.toTypedArray().every((v) => v === SENTINEL));
    return { status, message: lib.lltm_last_error(), untouched };
  } finally {
    for (const t of outs) t.dispose();
  }
}

function expectRefused(r: Raw, status: number, pattern: RegExp, what: string): void {
  assertEquals(r.status, status, `${what}: ${r.message}`);
  assert(pattern.test(r.message), `${what}: ${r.message}`);
  assert(r.untouched, `${what}: nothing written`);
}

test("C ABI: lltm_sequence_forward refuses a null tensor by name", () => {
  expectRefused(rawForwardOf((a) => (a[3] = undefined)), 1, /lltm_sequence_forward: 'h0' is a null pointer/, "null h0");
});

{
  const rawForward = rawForwardOf;
  test("C ABI: lltm_sequence_forward refuses bad tensors, a missing or short reserve, flags, dtype and device", () => {
    expectRefused(rawForward((a) => (a[0] = altered(a[0]!, { shape: [T, B, F, 1, 1] }))), 2, /'inputs' has 5 dimensions/, "rank 5");
    expectRefused(rawForward((a) => (a[5] = altered(a[5]!, { strides: [0, S, 1] }))), 2, /'outputs' is an output with stride 0/, "zero-stride output");
    expectRefused(rawForward((a) => (a[5] = altered(a[5]!, { shape: [T - 1, B, S] }))), 3, /'outputs' must have shape \[4, 3, 5\] \(T, B, S\), got \[3, 3, 5\]/, "short outputs");
    expectRefused(rawForward((a) => (a[7] = altered(a[7]!, { shape: [B, S + 1] }))), 3, /'last_cell' must have shape \[3, 5\]/, "last_cell");
    expectRefused(rawForward(() => {}, { reserve: 0 }), 1, /'reserve' is a null pointer; training needs 2400 bytes/, "no reserve");
    expectRefused(rawForward(() => {}, { bytes: reserveBytes - 1 }), 10, /'reserve_bytes' is 2399 but T = 4, B = 3, S = 5 needs 2400/, "short reserve");
    expectRefused(rawForward((a) => (a[6] = altered(a[6]!, { dataAddress: a[3]!.dataAddress }))), 10, /output 'last_h' overlaps input 'h0'/, "last_h on h0");
    // (Which argument a message names first depends on where the allocator put the others.)
    expectRefused(rawForward(() => {}, { reserveAt: 0 }), 10, /output 'reserve' overlaps input|overlaps output 'reserve'/, "reserve on inputs");
    expectRefused(rawForward(() => {}, { reserveAt: 5 }), 10, /output 'outputs' overlaps output 'reserve'/, "reserve on outputs");
    expectRefused(rawForward(() => {}, { flags: 2 }), 10, /lltm_sequence_forward: unknown bits in flags 2/, "flags");
    expectRefused(rawForward(() => {}, { dtype: 3 }), 4, /dtype 3 is not float32 \(0\) or float64 \(1\)/, "dtype");
    expectRefused(rawForward(() => {}, { kind: 7 }), 5, /device_kind 7 is not cpu \(0\) or cuda \(1\)/, "device kind");
    expectRefused(rawForward(() => {}, { index: 1 }), 5, /device_index must be 0 for the CPU, got 1/, "device index");
    // Sizes whose reserve cannot be addressed: broadcast inputs and state of 2^46 steps and rows (outputs may overlap themselves).
    const huge = 2 ** 46;
    expectRefused(
      rawForward((a) => {
        a[0] = altered(a[0]!, { shape: [huge, huge, F], strides: [0, 0, 1] });
        for (const i of [3, 4]) a[i] = altered(a[i]!, { shape: [huge, S], strides: [0, 1] });
        a[5] = altered(a[5]!, { shape: [huge, huge, S], strides: [1, 1, 1] });
        for (const i of [6, 7]) a[i] = altered(a[i]!, { shape: [huge, S], strides: [1, 1] });
      }),
      10, /the reserve of T = 70368744177664, B = 70368744177664, S = 5 \(T\*B\*5\*S elements\) does not fit in 63 bits/, "huge sizes",
    );
  });

  test("C ABI: lltm_sequence_forward: inference needs no reserve", () => {
    const r = rawForwardOf(() => {}, { reserve: 0, bytes: 0, flags: 0 });
    assertEquals(r.status, 0, r.message);
  });
}

test("C ABI: lltm_sequence_backward refuses a null tensor by name", () => {
  expectRefused(rawBackwardOf((a) => (a[5] = undefined)), 1, /lltm_sequence_backward: 'h0' is a null pointer/, "null h0");
});

{
  const rawBackward = rawBackwardOf;
  test("C ABI: lltm_sequence_backward refuses bad tensors, a missing or short reserve and unknown flags", () => {
    expectRefused(rawBackward((a) => (a[0] = altered(a[0]!, { shape: [T, B, S + 1] }))), 3, /'grad_outputs' must have shape \[4, 3, 5\]/, "grad_outputs");
    expectRefused(rawBackward((a) => (a[6] = altered(a[6]!, { shape: [T, B, F + 1] }))), 3, /'d_inputs' must have shape \[4, 3, 2\] \(T, B, F\)/, "d_inputs");
    expectRefused(rawBackward((a) => (a[8] = altered(a[8]!, { strides: [0] }))), 2, /'d_bias' is an output with stride 0/, "d_bias");
    expectRefused(rawBackward(() => {}, { reserve: 0 }), 1, /lltm_sequence_backward: 'reserve' is a null pointer/, "no reserve");
    expectRefused(rawBackward(() => {}, { bytes: 8 }), 10, /'reserve_bytes' is 8 but T = 4, B = 3, S = 5 needs 2400/, "short reserve");
    expectRefused(rawBackward((a) => (a[9] = altered(a[9]!, { dataAddress: a[5]!.dataAddress }))), 10, /output 'd_h0' overlaps input 'h0'/, "d_h0 on h0");
    expectRefused(rawBackward((a) => (a[8] = altered(a[8]!, { dataAddress: a[0]!.dataAddress }))), 10, /output 'd_bias' overlaps input 'grad_outputs'/, "d_bias on grad_outputs");
    expectRefused(rawBackward(() => {}, { flags: 4 }), 10, /lltm_sequence_backward: unknown bits in flags 4/, "flags");
    // An absent gradient is zeros; one given must be valid.
    assertEquals(rawBackward((a) => (a[0] = undefined)).status, 0, "no gradients at all");
    expectRefused(rawBackward((a) => (a[1] = altered(a[0]!, { shape: [B, S + 2] }))), 3, /'grad_last_h' must have shape \[3, 5\]/, "grad_last_h");
  });
}

/** lltm_sequence_reserve_bytes into `out`. */
function reserveBytesOf(args: readonly number[], out: Uint32Array): number {
  const [steps, batch, features, state, dtype, kind, index] = args as [number, number, number, number, number, number, number];
  return native().lltm_sequence_reserve_bytes(steps, batch, features, state, dtype, kind, index, out);
}

{
  test("C ABI: lltm_sequence_reserve_bytes answers T*B*5*S elements and refuses what does not fit", () => {
    const lib = native();
    const out = new Uint32Array(2);
    assertEquals(reserveBytesOf([64, 16, 32, 128, 0, 0, 0], out), 0);
    assertEquals(out[0]! + out[1]! * 2 ** 32, 64 * 16 * 5 * 128 * 4);
    assertEquals(reserveBytesOf([3, 2, 1, 7, 1, 0, 0], out), 0);
    assertEquals(out[0]! + out[1]! * 2 ** 32, 3 * 2 * 5 * 7 * 8);
    const refused = (args: [number, number, number, number, number], status: number, pattern: RegExp) => {
      out.fill(7);
      assertEquals(reserveBytesOf([...args, 0, 0], out), status);
      assert(pattern.test(lib.lltm_last_error()), lib.lltm_last_error());
      assertEquals(out[0]! + out[1]!, 0, "bytes set to 0 on failure");
    };
    refused([2 ** 40, 2 ** 20, 1, 2 ** 10, 0], 10, /^lltm_sequence_reserve_bytes: .*does not fit in 63 bits/);
    refused([0, 2, 3, 4, 0], 10, /'steps' must be at least 1, got 0/);
    refused([1, 2, -3, 4, 0], 10, /'input_features' must be at least 1, got -3/);
    refused([1, 2, 3, 4, 9], 4, /dtype 9 is not float32/);
  });
}
