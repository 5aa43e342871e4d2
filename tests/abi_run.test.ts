/**
 * lltm_run and lltm_buffer_bytes, the entry points every op of the suite goes
 * through (ts/native/calls.ts): their own refusals, and that each typed entry
 * point of versions 1 and 2 and its lltm_run equivalent answer identically:
 * the same outputs bit for bit, and for the same bad argument the same status
 * and the same message (both name the typed entry point and its arguments).
 */
import { Tensor } from "../ts/index.ts";
import { CALL_BYTES, headerConstants as h, layoutConstants, opTable, Status } from "../ts/native/constants.ts";
import { type Describable, DescriptorBlock, Descriptors, hostBlock } from "../ts/native/descriptor.ts";
import { native } from "../ts/native/library.ts";
import { op, type OpName } from "../ts/native/op.ts";
import { altered } from "./descriptors.ts";
import { assert, assertEquals, test } from "./harness.ts";

/** An lltm_call of its own in native memory, written field by field. */
class RawCall implements Disposable {
  readonly base: number;
  private readonly words: Int32Array;
  private readonly doubles: Float64Array;
  readonly tensors: Descriptors;

  constructor() {
    const { address, words } = hostBlock(CALL_BYTES, "test call block");
    this.base = address;
    this.words = words;
    this.doubles = new Float64Array(words.buffer, words.byteOffset, CALL_BYTES / 8);
    const at = layoutConstants["offsetof(lltm_call, tensors)"];
    this.tensors = new Descriptors(words, at / 4, address + at, h.LLTM_MAX_SLOTS);
  }

  private set(field: string, value: number): void {
    this.words[layoutConstants[`offsetof(lltm_call, ${field})` as keyof typeof layoutConstants] / 4] = value;
  }

  /**
   * Writes the call of `name` on the CPU: its tensors by slot (undefined:
   * absent; a BYTES slot is described as `bytes` bytes of its tensor), flags
   * and scalars; `given` overrides the mask of the tensors given.
   */
  write(
    name: OpName, tensors: readonly (Describable | undefined)[],
    extra: { flags?: number; scalars?: readonly number[]; given?: number; bytes?: number; kind?: number } = {},
  ): this {
    const o = op(name);
    let given = 0;
    tensors.forEach((t, i) => {
      if (t === undefined) return;
      given |= 1 << i;
      if (o.byteSlots[i]) this.tensors.writeBytes(i, t, extra.bytes ?? 0);
      else this.tensors.write(i, t);
    });
    for (const f of ["device_kind", "src_device_kind"]) this.set(f, extra.kind ?? 0);
    for (const f of ["device_index", "src_device_index"]) this.set(f, 0);
    this.set("flags", extra.flags ?? 0);
    this.set("given", extra.given ?? given);
    const first = layoutConstants["offsetof(lltm_call, scalars)"] / 8;
    (extra.scalars ?? []).forEach((v, i) => (this.doubles[first + i] = v));
    return this;
  }

  /** lltm_run of `name` on this block: the status and the message. */
  run(name: OpName): { status: number; message: string } {
    const lib = native();
    const status = lib.lltm_run(op(name).code, this.base);
    return { status, message: status === 0 ? "" : lib.lltm_last_error() };
  }

  [Symbol.dispose](): void {
    native().lltm_free(this.base, 0, 0);
  }
}

/** A typed call through a descriptor block: the status and the message. */
function typed(call: (d: (i: number, t: Describable | undefined) => number) => number, count: number): { status: number; message: string } {
  using block = new DescriptorBlock(count);
  const lib = native();
  const status = call((i, t) => (t === undefined ? 0 : block.write(i, t)));
  return { status, message: status === 0 ? "" : lib.lltm_last_error() };
}

const same = (a: Tensor, b: Tensor, what: string) => assertEquals([...a.toTypedArray()], [...b.toTypedArray()], what);

const code = { float32: h.LLTM_FLOAT32, float64: h.LLTM_FLOAT64 } as const;

test("lltm_run refuses a null call, an unknown op, bits past the op's slots and a missing required tensor", () => {
  const lib = native();
  assertEquals(lib.lltm_run(op("FORWARD").code, 0), Status.NULL_POINTER);
  assert(/lltm_forward/.test(lib.lltm_last_error()), lib.lltm_last_error());
  using call = new RawCall();
  for (const bad of [0, Math.max(...Object.values(opTable).map((o) => o.code)) + 1, 1000, -1]) {
    assertEquals(lib.lltm_run(bad, call.base), Status.INVALID_ARGUMENT, `op ${bad}`);
    assert(/^lltm_run: /.test(lib.lltm_last_error()), lib.lltm_last_error());
  }
  using t = Tensor.zeros([2, 3]);
  const beyond = call.write("FILL", [t], { scalars: [1], given: 0b11 }).run("FILL");
  assertEquals(beyond.status, Status.INVALID_ARGUMENT, beyond.message);
  assertEquals([...t.toTypedArray()], [0, 0, 0, 0, 0, 0], "nothing written");
  const missing = call.write("FILL", [], { scalars: [1] }).run("FILL");
  assertEquals(missing.status, Status.NULL_POINTER, missing.message);
  assert(/^lltm_fill: 'dst'/.test(missing.message), missing.message);
});

test("a call that repeats an accepted one but for its addresses is checked for what its addresses break", () => {
  // Validation remembers the last accepted call of an op (csrc/api/recall.h): the same descriptors again
  // skip the shape checks, and must still meet the null and overlap checks, word for word
  // as the full checks refuse them (which run once another accepted call of other sizes replaced it).
  const made: Tensor[] = [];
  const forwardOf = (B: number, F: number, S: number) => {
    const ins = [[B, F], [3 * S, S + F], [3 * S], [B, S], [B, S]].map((s, i) => Tensor.randn(s, { seed: i + 1 }));
    const outs = [[B, S], [B, S], [B, S], [B, S], [B, S], [B, S + F], [B, 3 * S]].map((s) => Tensor.zeros(s));
    made.push(...ins, ...outs);
    return { ins, outs, all: [...ins, ...outs] as Describable[] };
  };
  try {
    const { ins, outs, all } = forwardOf(2, 3, 4), other = forwardOf(3, 3, 4);
    using call = new RawCall();
    const cases: [string, number, Partial<Describable>, RegExp][] = [
      ["an output on an input", 5, { dataAddress: ins[0]!.dataAddress }, /'new_h' overlaps input 'input'/],
      ["two outputs on one block", 6, { dataAddress: outs[0]!.dataAddress }, /overlaps output/],
      ["a null address", 2, { dataAddress: 0 }, /'bias'/],
    ];
    for (const [what, slot, change, message] of cases) {
      const bad = [...all];
      bad[slot] = altered(bad[slot]!, change);
      assertEquals(call.write("FORWARD", all).run("FORWARD").status, 0, "the accepted call");
      const repeated = call.write("FORWARD", bad).run("FORWARD");
      assert(repeated.status !== 0 && message.test(repeated.message), `${what}: ${repeated.message}`);
      assertEquals(call.write("FORWARD", other.all).run("FORWARD").status, 0, "an accepted call of other sizes");
      const full = call.write("FORWARD", bad).run("FORWARD");
      assertEquals([full.status, full.message], [repeated.status, repeated.message], what);
    }
    assertEquals([...outs[0]!.toTypedArray()].every((v) => Number.isFinite(v)), true, "outputs written only by accepted calls");
  } finally {
    for (const t of made) t.dispose();
  }
});

for (const dtype of ["float32", "float64"] as const) {
  const o = { dtype };
  const B = 3, F = 4, S = 5;
  const inputs = () => [
    Tensor.randn([B, F], { ...o, seed: 1 }), Tensor.randn([3 * S, S + F], { ...o, seed: 2 }), Tensor.randn([3 * S], { ...o, seed: 3 }),
    Tensor.randn([B, S], { ...o, seed: 4 }), Tensor.randn([B, S], { ...o, seed: 5 }),
  ];
  const forwardShapes = [[B, S], [B, S], [B, S], [B, S], [B, S], [B, S + F], [B, 3 * S]];

  test(`lltm_forward and lltm_run(FORWARD) answer identically (${dtype})`, () => {
    const ins = inputs();
    const a = forwardShapes.map((s) => Tensor.zeros(s, o)), b = forwardShapes.map((s) => Tensor.zeros(s, o));
    try {
      const all = [...ins, ...a];
      const r = typed((d) => native().lltm_forward(...(all.map((t, i) => d(i, t)) as Tuple12), code[dtype], 0, 0), 12);
      assertEquals(r.status, 0, r.message);
      using call = new RawCall();
      const s = call.write("FORWARD", [...ins, ...b]).run("FORWARD");
      assertEquals(s.status, 0, s.message);
      a.forEach((t, i) => same(t, b[i]!, `output ${i}`));
      // The same refusal: a weights of the wrong shape, and an output overlapping an input.
      for (const [slot, change] of [[1, { shape: [3 * S, S + F + 1] }], [5, { dataAddress: ins[0]!.dataAddress }]] as const) {
        const bad = [...ins, ...a] as Describable[];
        bad[slot] = altered(bad[slot]!, change);
        const rt = typed((d) => native().lltm_forward(...(bad.map((t, i) => d(i, t)) as Tuple12), code[dtype], 0, 0), 12);
        const rr = call.write("FORWARD", bad).run("FORWARD");
        assert(rt.status !== 0, `slot ${slot} refused`);
        assertEquals(rr, rt, `slot ${slot}`);
      }
    } finally {
      for (const t of [...ins, ...a, ...b]) t.dispose();
    }
  });

  test(`lltm_backward_ex and lltm_run(BACKWARD) answer identically, accumulating or not (${dtype})`, () => {
    const ins = inputs();
    using call = new RawCall();
    const fw = forwardShapes.map((s) => Tensor.zeros(s, o));
    const gradH = Tensor.randn([B, S], { ...o, seed: 6 }), gradCell = Tensor.randn([B, S], { ...o, seed: 7 });
    const shapes = [[B, S], [B, F], [3 * S, S + F], [3 * S], [B, S]];
    const a = shapes.map((s) => Tensor.ones(s, o)), b = shapes.map((s) => Tensor.ones(s, o));
    try {
      assertEquals(call.write("FORWARD", [...ins, ...fw]).run("FORWARD").status, 0);
      const bwIns = [gradH, gradCell, fw[1]!, fw[2]!, fw[3]!, fw[4]!, fw[5]!, fw[6]!, ins[1]!];
      for (const flags of [0, h.LLTM_ACCUMULATE_PARAM_GRADS]) {
        const all = [...bwIns, ...a];
        const r = typed((d) => native().lltm_backward_ex(...(all.map((t, i) => d(i, t)) as Tuple14), flags, code[dtype], 0, 0), 14);
        assertEquals(r.status, 0, r.message);
        const s = call.write("BACKWARD", [...bwIns, ...b], { flags }).run("BACKWARD");
        assertEquals(s.status, 0, s.message);
        a.forEach((t, i) => same(t, b[i]!, `flags ${flags}: output ${i}`));
      }
      const bad = [...bwIns, ...a] as Describable[];
      bad[6] = altered(bad[6]!, { shape: [B, S] });
      const rt = typed((d) => native().lltm_backward(...(bad.map((t, i) => d(i, t)) as Tuple14), code[dtype], 0, 0), 14);
      assert(rt.status !== 0, "a short X is refused");
      assertEquals(call.write("BACKWARD", bad).run("BACKWARD"), rt, "a short X");
    } finally {
      for (const t of [...ins, ...fw, gradH, gradCell, ...a, ...b]) t.dispose();
    }
  });

  test(`lltm_sequence_* and lltm_run / lltm_buffer_bytes answer identically (${dtype})`, () => {
    const T = 3, lib = native();
    const ins = [Tensor.randn([T, B, F], { ...o, seed: 11 }), ...inputs().slice(1)];
    using call = new RawCall();
    const out = new Uint32Array(2);
    assertEquals(lib.lltm_sequence_reserve_bytes(T, B, F, S, code[dtype], 0, 0, out), 0, lib.lltm_last_error());
    const bytes = out[0]! + out[1]! * 2 ** 32;
    call.write("SEQUENCE_FORWARD", ins, { flags: h.LLTM_SEQUENCE_TRAINING });
    out.fill(7);
    assertEquals(lib.lltm_buffer_bytes(op("SEQUENCE_FORWARD").code, call.base, out), 0, lib.lltm_last_error());
    assertEquals(out[0]! + out[1]! * 2 ** 32, bytes, "lltm_buffer_bytes");
    const fShapes = [[T, B, S], [B, S], [B, S]], bShapes = [[T, B, F], [3 * S, S + F], [3 * S], [B, S], [B, S]];
    const made = (shapes: number[][]) => shapes.map((s) => Tensor.zeros(s, o));
    const [fa, fb, ba, bb] = [made(fShapes), made(fShapes), made(bShapes), made(bShapes)];
    const ra = Tensor.zeros([bytes], { dtype: "float64" }), rb = Tensor.zeros([bytes], { dtype: "float64" });
    const gradLast = Tensor.randn([B, S], { ...o, seed: 16 });
    try {
      const f = [...ins, ...fa];
      const r = typed(
        (d) => lib.lltm_sequence_forward(...(f.map((t, i) => d(i, t)) as Tuple8), ra.dataAddress, bytes, h.LLTM_SEQUENCE_TRAINING, code[dtype], 0, 0),
        8,
      );
      assertEquals(r.status, 0, r.message);
      const s = call.write("SEQUENCE_FORWARD", [...ins, ...fb, rb], { flags: h.LLTM_SEQUENCE_TRAINING, bytes }).run("SEQUENCE_FORWARD");
      assertEquals(s.status, 0, s.message);
      fa.forEach((t, i) => same(t, fb[i]!, `forward output ${i}`));
      const [inp, w, , h0] = ins as [Tensor, Tensor, Tensor, Tensor];
      const bw = [gradLast, inp, w, h0, ...ba];
      const rb2 = typed(
        (d) => lib.lltm_sequence_backward(0, 0, d(0, bw[0]), ra.dataAddress, bytes, ...(bw.slice(1).map((t, i) => d(i + 1, t)) as Tuple8), 0, code[dtype], 0, 0),
        9,
      );
      assertEquals(rb2.status, 0, rb2.message);
      const sb = call.write("SEQUENCE_BACKWARD", [undefined, undefined, gradLast, rb, inp, w, h0, ...bb], { bytes }).run("SEQUENCE_BACKWARD");
      assertEquals(sb.status, 0, sb.message);
      ba.forEach((t, i) => same(t, bb[i]!, `backward output ${i}`));
    } finally {
      for (const t of [...ins, ...fa, ...fb, ...ba, ...bb, ra, rb, gradLast]) t.dispose();
    }
  });

  test(`lltm_fill, lltm_axpy, lltm_copy, lltm_sgd_step and lltm_adam_step answer as lltm_run does (${dtype})`, () => {
    const lib = native();
    using call = new RawCall();
    const pair = (seed: number) => [Tensor.randn([4, 6], { ...o, seed }), Tensor.randn([4, 6], { ...o, seed })] as const;
    const [ya, yb] = pair(1), [x] = pair(2), [pa, pb] = pair(3), [g] = pair(4), [ma, mb] = pair(5);
    // exp_avg_sq, a mean of squares: not negative.
    using va = Tensor.rand([4, 6], { ...o, seed: 6 }), vb = Tensor.rand([4, 6], { ...o, seed: 6 });
    try {
      const d = (f: (d: (i: number, t: Describable) => number) => number, n: number) => typed((w) => f((i, t) => w(i, t)), n);
      assertEquals(d((w) => lib.lltm_axpy(w(0, ya), 0.5, w(1, x), code[dtype], 0, 0), 2).status, 0);
      assertEquals(call.write("AXPY", [yb, x], { scalars: [0.5] }).run("AXPY").status, 0);
      same(ya, yb, "axpy");
      assertEquals(d((w) => lib.lltm_sgd_step(w(0, pa), w(1, g), w(2, ma), 0.1, 0.9, code[dtype], 0, 0), 3).status, 0);
      assertEquals(call.write("SGD_STEP", [pb, g, mb], { scalars: [0.1, 0.9] }).run("SGD_STEP").status, 0);
      same(pa, pb, "sgd param");
      same(ma, mb, "sgd momentum");
      assertEquals(d((w) => lib.lltm_adam_step(w(0, pa), w(1, g), w(2, ma), w(3, va), 1e-2, 0.9, 0.99, 1e-8, 3, code[dtype], 0, 0), 4).status, 0);
      assertEquals(call.write("ADAM_STEP", [pb, g, mb, vb], { scalars: [1e-2, 0.9, 0.99, 1e-8, 3] }).run("ADAM_STEP").status, 0);
      same(pa, pb, "adam param");
      same(va, vb, "adam exp_avg_sq");
      assertEquals(d((w) => lib.lltm_fill(w(0, ya), -2.5, code[dtype], 0, 0), 1).status, 0);
      assertEquals(call.write("FILL", [yb], { scalars: [-2.5] }).run("FILL").status, 0);
      same(ya, yb, "fill");
      using xt = x.transpose();
      using ca = Tensor.zeros([6, 4], o), cb = Tensor.zeros([6, 4], o);
      assertEquals(d((w) => lib.lltm_copy(w(0, ca), 0, 0, w(1, xt), 0, 0, code[dtype]), 2).status, 0);
      assertEquals(call.write("COPY", [cb, xt]).run("COPY").status, 0);
      same(ca, cb, "copy");
      // The same refusals: an Adam step count of 0, an SGD momentum of 1, a fill of a stride-0 output.
      const adam = d((w) => lib.lltm_adam_step(w(0, pa), w(1, g), w(2, ma), w(3, va), 1e-2, 0.9, 0.99, 1e-8, 0, code[dtype], 0, 0), 4);
      assertEquals(adam.status, Status.INVALID_ARGUMENT, adam.message);
      assertEquals(call.write("ADAM_STEP", [pb, g, mb, vb], { scalars: [1e-2, 0.9, 0.99, 1e-8, 0] }).run("ADAM_STEP"), adam, "step 0");
      const sgd = d((w) => lib.lltm_sgd_step(w(0, pa), w(1, g), w(2, ma), 0.1, 1, code[dtype], 0, 0), 3);
      assertEquals(sgd.status, Status.INVALID_ARGUMENT, sgd.message);
      assertEquals(call.write("SGD_STEP", [pb, g, mb], { scalars: [0.1, 1] }).run("SGD_STEP"), sgd, "momentum 1");
      const broadcast = altered(ya, { strides: [0, 1] });
      const fill = d((w) => lib.lltm_fill(w(0, broadcast), 1, code[dtype], 0, 0), 1);
      assert(fill.status !== 0, "a stride-0 output is refused");
      assertEquals(call.write("FILL", [broadcast], { scalars: [1] }).run("FILL"), fill, "stride-0 fill");
    } finally {
      for (const t of [ya, yb, x, pa, pb, g, ma, mb]) t.dispose();
    }
  });
}

type Tuple8 = [number, number, number, number, number, number, number, number];
type Tuple12 = [...Tuple8, number, number, number, number];
type Tuple14 = [...Tuple12, number, number];
