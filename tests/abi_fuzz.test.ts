/**
 * The C ABI under fast-check: the typed entry points (forward, backward,
 * backward_ex, copy, fill, axpy, sgd_step, adam_step) called through the raw
 * symbols with valid descriptors and then one field spoiled: null
 * descriptors and data, ndim 0 and 5, sizes 0 / negative / near 2^62,
 * negative strides and size x stride products past 2^48, addresses at the
 * end of the address space, mismatched shapes and ranks, unknown dtypes,
 * devices and flags, scalars out of range, outputs overlapping another
 * argument. Every case checks the status the header documents, that the
 * message starts with the entry point's name, and that no byte of the
 * sentinel-filled memory around and under every tensor changed (on success:
 * none but the outputs' own elements). Descriptors are written here as raw
 * int64 fields, so that values beyond 2^53 reach the library exactly.
 *
 * LLTM_ABI_FUZZ_RUNS sets the number of cases.
 */
import fc from "fast-check";

import { backendInfo } from "../ts/index.ts";
import { dtypeTable, headerConstants as h, layoutConstants, MAX_DIMS, Status, TENSOR_BYTES } from "../ts/native/constants.ts";
import { environment, isBun, native } from "../ts/native/library.ts";
import { assert, test } from "./harness.ts";

// 10,000 under Bun (the CI's count); the same cases, fewer of them, under Deno and Node.
const RUNS = Number(environment("LLTM_ABI_FUZZ_RUNS") ?? (isBun ? 10_000 : 2_000));

// ---- native memory: one region per tensor, and one descriptor slot each ----

const MAX_TENSORS = 16;
const GUARD = 16; // elements of sentinel before and after each tensor's span
const REGION_ELEMENTS = 4096; // the largest span below (4-D, padded, inner stride 2) is about 1100
const REGION_BYTES = REGION_ELEMENTS * 8;
const OUTPUT_FILL = 12345;
const INPUT_FILL = 0.5;
const TWO_32 = 2 ** 32;

function allocate(bytes: number): number {
  const lib = native();
  const out = new Uint32Array(2);
  const status = lib.lltm_alloc(bytes, h.LLTM_CPU, 0, out);
  assert(status === Status.OK, `lltm_alloc: ${lib.lltm_last_error()}`);
  return out[0]! + out[1]! * TWO_32;
}

let memory: { regions: number; slots: number; f64: Float64Array; f32: Float32Array; fields: BigInt64Array } | undefined;

function arena() {
  if (!memory) {
    const lib = native();
    const regions = allocate(MAX_TENSORS * REGION_BYTES), slots = allocate(MAX_TENSORS * TENSOR_BYTES);
    const bytes = lib.view(regions, MAX_TENSORS * REGION_BYTES);
    memory = {
      regions, slots, f64: new Float64Array(bytes), f32: new Float32Array(bytes),
      fields: new BigInt64Array(lib.view(slots, MAX_TENSORS * TENSOR_BYTES)),
    };
  }
  return memory;
}

// ---- calls ----

type Fn = "lltm_forward" | "lltm_backward" | "lltm_backward_ex" | "lltm_copy" | "lltm_fill" | "lltm_axpy" | "lltm_sgd_step" | "lltm_adam_step";
const fns: Fn[] = ["lltm_forward", "lltm_backward", "lltm_backward_ex", "lltm_copy", "lltm_fill", "lltm_axpy", "lltm_sgd_step", "lltm_adam_step"];

interface TensorArg {
  name: string;
  output: boolean;
  ndim: bigint;
  sizes: bigint[];
  strides: bigint[];
  data: bigint; // address
  passNull: boolean;
  /** The layout as built: which elements a successful call may write. */
  built: { sizes: number[]; strides: number[] };
}

interface Call {
  fn: Fn;
  dtype: number;
  fillDtype: number;
  kind: number;
  index: number;
  srcKind: number;
  srcIndex: number;
  args: TensorArg[];
  momentumBuffer: number; // index in args, or -1
  flags: number;
  lr: number; momentum: number; beta1: number; beta2: number; eps: number; step: bigint;
}

interface Sizes { B: number; F: number; S: number; dims: number[]; layouts: number[]; momentum: boolean; accumulate: boolean; withBuffer: boolean }

function elementSize(dtype: number): number {
  return Object.values(dtypeTable).find((d) => d.code === dtype)!.bytes;
}

/** A tensor in region `slot`, laid out row-major, padded, with inner stride 2, transposed or (inputs) broadcast. */
function tensor(call: Call, name: string, output: boolean, sizes: number[], layout: number): TensorArg {
  const slot = call.args.length;
  const strides = new Array<number>(sizes.length);
  let stride = layout === 2 ? 2 : 1;
  for (let d = sizes.length - 1; d >= 0; d--) {
    strides[d] = stride;
    stride = stride * sizes[d]! + (layout === 1 ? 1 + (d % 2) : 0);
  }
  if (layout === 3 && sizes.length === 2) {
    strides[0] = 1;
    strides[1] = sizes[0]!;
  }
  if (layout === 4 && !output) strides[sizes.length - 1] = 0;
  const t: TensorArg = {
    name, output, ndim: BigInt(sizes.length), sizes: sizes.map(BigInt), strides: strides.map(BigInt),
    data: BigInt(arena().regions + slot * REGION_BYTES + GUARD * elementSize(call.fillDtype)), passNull: false,
    built: { sizes, strides },
  };
  call.args.push(t);
  return t;
}

function build(fn: Fn, dtype: number, s: Sizes): Call {
  const call: Call = {
    fn, dtype, fillDtype: dtype, kind: h.LLTM_CPU, index: 0, srcKind: h.LLTM_CPU, srcIndex: 0, args: [], momentumBuffer: -1,
    flags: 0, lr: 0.1, momentum: 0, beta1: 0.9, beta2: 0.999, eps: 1e-8, step: 3n,
  };
  const { B, F, S } = s, K = S + F;
  const lay = (i: number) => s.layouts[i % s.layouts.length]!;
  const add = (name: string, output: boolean, sizes: number[], contiguous = false) =>
    tensor(call, name, output, sizes, contiguous ? 0 : lay(call.args.length));
  if (fn === "lltm_forward") {
    for (const [n, sh] of [["input", [B, F]], ["weights", [3 * S, K]], ["bias", [3 * S]], ["old_h", [B, S]], ["old_cell", [B, S]]] as const) add(n, false, [...sh]);
    for (const [n, sh] of [["new_h", [B, S]], ["new_cell", [B, S]], ["input_gate", [B, S]], ["output_gate", [B, S]], ["candidate_cell", [B, S]], ["X", [B, K]], ["gate_weights", [B, 3 * S]]] as const) add(n, true, [...sh]);
  } else if (fn === "lltm_backward" || fn === "lltm_backward_ex") {
    for (const n of ["grad_h", "grad_cell", "new_cell", "input_gate", "output_gate", "candidate_cell"]) add(n, false, [B, S]);
    add("X", false, [B, K]);
    add("gate_weights", false, [B, 3 * S]);
    add("weights", false, [3 * S, K]);
    for (const [n, sh] of [["d_old_h", [B, S]], ["d_input", [B, F]], ["d_weights", [3 * S, K]], ["d_bias", [3 * S]], ["d_old_cell", [B, S]]] as const) add(n, true, [...sh]);
    if (fn === "lltm_backward_ex" && s.accumulate) call.flags = h.LLTM_ACCUMULATE_PARAM_GRADS;
  } else if (fn === "lltm_copy" || fn === "lltm_axpy") {
    add(fn === "lltm_copy" ? "dst" : "y", true, s.dims);
    add(fn === "lltm_copy" ? "src" : "x", false, s.dims);
  } else if (fn === "lltm_fill") {
    add("dst", true, s.dims);
  } else if (fn === "lltm_sgd_step") {
    add("param", true, s.dims, true);
    add("grad", false, s.dims, true);
    call.momentum = s.momentum ? 0.9 : 0;
    // With momentum 0 the buffer may be NULL or anything (it is not read).
    if (s.momentum || s.withBuffer) {
      call.momentumBuffer = call.args.length;
      add("momentum_buffer", true, s.dims, true);
    }
  } else {
    add("param", true, s.dims, true);
    add("grad", false, s.dims, true);
    add("exp_avg", true, s.dims, true);
    add("exp_avg_sq", true, s.dims, true);
    call.lr = 1e-3;
  }
  return call;
}

function lastOffset(sizes: readonly number[], strides: readonly number[]): number {
  return sizes.reduce((sum, size, d) => sum + (size - 1) * strides[d]!, 0);
}

/** The tensors the call checks (sgd's buffer only with momentum). */
function checkedArgs(call: Call): number[] {
  return call.args.map((_, i) => i).filter((i) => !(call.fn === "lltm_sgd_step" && i === call.momentumBuffer && call.momentum === 0));
}

// ---- mutations ----

const mutations = [
  "valid", "null descriptor", "null data", "ndim", "size", "stride", "span overflow", "address wrap", "output stride 0",
  "mismatch", "rank", "non-contiguous", "dtype", "device kind", "device index", "no CUDA", "flags", "scalar", "overlap",
] as const;
type Mutation = (typeof mutations)[number];

const I64_MIN = -(2n ** 63n), I64_MAX = 2n ** 63n - 1n, LIMIT = 2n ** 48n;
const badNdim = [0n, 5n, -1n, 64n, I64_MAX, I64_MIN];
const badSize = [0n, -1n, -(2n ** 62n), 2n ** 62n, 2n ** 62n + 1n, LIMIT + 1n, I64_MAX, I64_MIN];
const badStride = [-1n, -(2n ** 62n), LIMIT + 1n, 2n ** 62n, I64_MAX, I64_MIN];
const badDtype = [2, -1, 1000, -(2 ** 31), 2 ** 31 - 1];
const badKind = [2, -1, 100, -(2 ** 31)];
const badIndex = [1, -1, 2 ** 31 - 1, -(2 ** 31)];
const badRate = [-1, NaN, Infinity, -Infinity, 1e31];
const badFraction = [1, -0.1, NaN, 2, Infinity];

interface Choice { pick: number; pick2: number; dim: number; value: number; big: bigint; big2: bigint }

interface Expected { status: number; names: string[] }

function at<T>(list: readonly T[], i: number): T {
  return list[i % list.length]!;
}

/** Applies the mutation; undefined when it does not fit the call. */
function mutate(call: Call, m: Mutation, c: Choice, hasCuda: boolean): Expected | undefined {
  const checked = checkedArgs(call);
  const t = call.args[at(checked, c.pick)]!;
  const dim = Number(t.ndim) > 0 ? c.dim % Number(t.ndim) : 0;
  const optimizer = call.fn === "lltm_sgd_step" || call.fn === "lltm_adam_step";
  const fail = (status: number, names: string[] = []): Expected => ({ status, names });
  switch (m) {
    case "valid":
      return fail(Status.OK);
    case "null descriptor":
      t.passNull = true;
      return fail(Status.NULL_POINTER);
    case "null data":
      t.data = 0n;
      return fail(Status.NULL_POINTER);
    case "ndim":
      t.ndim = at(badNdim, c.value);
      return fail(Status.INVALID_SHAPE);
    case "size":
      t.sizes[dim] = at(badSize, c.value);
      return fail(Status.INVALID_SHAPE);
    case "stride":
      t.strides[dim] = at(badStride, c.value);
      return fail(Status.INVALID_SHAPE);
    case "span overflow": {
      // size and stride each at most 2^48, (size - 1) x stride at least 2^48 (up to 2^96).
      const size = 2n + c.big % (LIMIT - 1n);
      const least = (LIMIT + size - 2n) / (size - 1n);
      t.sizes[dim] = size;
      t.strides[dim] = least + c.big2 % (LIMIT - least + 1n);
      return fail(Status.INVALID_SHAPE);
    }
    case "address wrap":
      t.data = 2n ** 64n - 1n - BigInt(c.value % 8);
      return fail(Status.INVALID_SHAPE);
    case "output stride 0": {
      const d = t.sizes.findIndex((s) => s > 1n);
      if (!t.output || d < 0) return undefined;
      t.strides[d] = 0n;
      return fail(Status.INVALID_SHAPE);
    }
    case "mismatch":
      if (call.fn === "lltm_fill" || (optimizer && t.name === "param")) return undefined;
      t.sizes[dim] = t.sizes[dim]! + 1n + BigInt(c.value % 3);
      return fail(Status.SHAPE_MISMATCH);
    case "rank":
      if (call.fn === "lltm_fill" || (optimizer && t.name === "param")) return undefined;
      if (t.ndim < BigInt(MAX_DIMS) && (t.ndim === 1n || c.value % 2 === 0)) {
        t.sizes[Number(t.ndim)] = 2n;
        t.strides[Number(t.ndim)] = 1n;
        t.ndim += 1n;
      } else {
        t.ndim -= 1n;
        if (t.ndim === 0n) return undefined;
      }
      return fail(Status.SHAPE_MISMATCH);
    case "non-contiguous": {
      const d = t.sizes.findIndex((s) => s > 1n);
      if (!optimizer || d < 0) return undefined;
      t.strides[d] = t.strides[d]! * 2n;
      return fail(Status.INVALID_SHAPE);
    }
    case "dtype":
      call.dtype = at(badDtype, c.value);
      return fail(Status.INVALID_DTYPE);
    case "device kind":
      if (call.fn === "lltm_copy" && c.pick2 % 2) call.srcKind = at(badKind, c.value);
      else call.kind = at(badKind, c.value);
      return fail(Status.INVALID_DEVICE);
    case "device index":
      if (call.fn === "lltm_copy" && c.pick2 % 2) call.srcIndex = at(badIndex, c.value);
      else call.index = at(badIndex, c.value);
      return fail(Status.INVALID_DEVICE);
    case "no CUDA":
      // Host memory passed as device memory is only safe to try where nothing would run it.
      if (hasCuda) return undefined;
      if (call.fn === "lltm_copy" && c.pick2 % 2) call.srcKind = h.LLTM_CUDA;
      else call.kind = h.LLTM_CUDA;
      return fail(Status.BACKEND_UNAVAILABLE);
    case "flags":
      if (call.fn !== "lltm_backward_ex") return undefined;
      call.flags = ((c.value | 2) >>> 0) & ~(c.pick2 % 2 ? h.LLTM_ACCUMULATE_PARAM_GRADS : 0);
      return fail(Status.INVALID_ARGUMENT);
    case "scalar":
      if (call.fn === "lltm_sgd_step") {
        if (c.pick2 % 2) call.lr = at(badRate, c.value);
        else call.momentum = at(badFraction, c.value);
      } else if (call.fn === "lltm_adam_step") {
        const which = c.pick2 % 5;
        if (which === 0) call.lr = at(badRate, c.value);
        else if (which === 1) call.beta1 = at(badFraction, c.value);
        else if (which === 2) call.beta2 = at(badFraction, c.value);
        else if (which === 3) call.eps = at([-1, NaN, Infinity], c.value);
        else call.step = at([0n, -1n, I64_MIN], c.value);
      } else {
        return undefined;
      }
      return fail(Status.INVALID_ARGUMENT);
    case "overlap": {
      // An output moved into another checked argument's span (copy and axpy accept the very same view: start past it).
      const other = call.args[at(checked, c.pick2)]!;
      if (!t.output || other === t) return undefined;
      const span = lastOffset(other.built.sizes, other.built.strides) + 1;
      const first = call.fn === "lltm_copy" || call.fn === "lltm_axpy" ? 1 : 0;
      if (span <= first) return undefined;
      t.data = other.data + BigInt((first + c.value % (span - first)) * elementSize(call.fillDtype));
      // Only the moved output is sure to be named: its span may reach a third argument first.
      return fail(Status.INVALID_ARGUMENT, [t.name]);
    }
  }
}

// ---- running and checking ----

const DATA = layoutConstants["offsetof(lltm_tensor, data)"] / 8;
const NDIM = layoutConstants["offsetof(lltm_tensor, ndim)"] / 8;
const SIZES = layoutConstants["offsetof(lltm_tensor, sizes)"] / 8;
const STRIDES = layoutConstants["offsetof(lltm_tensor, strides)"] / 8;
const SLOT = TENSOR_BYTES / 8;

function elements(call: Call): Float64Array | Float32Array {
  return call.fillDtype === h.LLTM_FLOAT64 ? arena().f64 : arena().f32;
}

/** Fills each tensor's region with its sentinel and writes its descriptor; returns the descriptors' addresses. */
function prepare(call: Call): number[] {
  const { fields, slots } = arena();
  const values = elements(call), perRegion = REGION_BYTES / elementSize(call.fillDtype);
  return call.args.map((t, i) => {
    values.fill(t.output ? OUTPUT_FILL : INPUT_FILL, i * perRegion, (i + 1) * perRegion);
    const o = i * SLOT;
    fields[o + DATA] = BigInt.asIntN(64, t.data);
    fields[o + NDIM] = t.ndim;
    for (let d = 0; d < MAX_DIMS; d++) {
      fields[o + SIZES + d] = t.sizes[d] ?? 0n;
      fields[o + STRIDES + d] = t.strides[d] ?? 0n;
    }
    return t.passNull ? 0 : slots + i * TENSOR_BYTES;
  });
}

function invoke(call: Call, d: number[]): number {
  const lib = native();
  const { dtype, kind, index } = call;
  switch (call.fn) {
    case "lltm_forward":
      return lib.lltm_forward(d[0]!, d[1]!, d[2]!, d[3]!, d[4]!, d[5]!, d[6]!, d[7]!, d[8]!, d[9]!, d[10]!, d[11]!, dtype, kind, index);
    case "lltm_backward":
      return lib.lltm_backward(d[0]!, d[1]!, d[2]!, d[3]!, d[4]!, d[5]!, d[6]!, d[7]!, d[8]!, d[9]!, d[10]!, d[11]!, d[12]!, d[13]!, dtype, kind, index);
    case "lltm_backward_ex":
      return lib.lltm_backward_ex(
        d[0]!, d[1]!, d[2]!, d[3]!, d[4]!, d[5]!, d[6]!, d[7]!, d[8]!, d[9]!, d[10]!, d[11]!, d[12]!, d[13]!, call.flags, dtype, kind, index,
      );
    case "lltm_copy":
      return lib.lltm_copy(d[0]!, kind, index, d[1]!, call.srcKind, call.srcIndex, dtype);
    case "lltm_fill":
      return lib.lltm_fill(d[0]!, 3.25, dtype, kind, index);
    case "lltm_axpy":
      return lib.lltm_axpy(d[0]!, -2, d[1]!, dtype, kind, index);
    case "lltm_sgd_step":
      return lib.lltm_sgd_step(d[0]!, d[1]!, call.momentumBuffer < 0 ? 0 : d[call.momentumBuffer]!, call.lr, call.momentum, dtype, kind, index);
    case "lltm_adam_step":
      return lib.lltm_adam_step(d[0]!, d[1]!, d[2]!, d[3]!, call.lr, call.beta1, call.beta2, call.eps, Number(call.step), dtype, kind, index);
  }
}

/** Problems with the result: status, message, memory. */
function check(call: Call, expected: Expected, status: number): string[] {
  const problems: string[] = [];
  const message = native().lltm_last_error();
  if (status !== expected.status) problems.push(`status ${status}, expected ${expected.status}: ${message}`);
  if (status !== Status.OK) {
    if (!message.startsWith(`${call.fn}:`) && !message.startsWith(`${call.fn} `)) problems.push(`the message does not start with ${call.fn}: ${message}`);
    for (const name of expected.names) if (!message.includes(`'${name}'`)) problems.push(`the message does not name '${name}': ${message}`);
  }
  const values = elements(call), perRegion = REGION_BYTES / elementSize(call.fillDtype);
  const fill = (v: number) => (call.fillDtype === h.LLTM_FLOAT64 ? v : Math.fround(v));
  const checked = new Set(checkedArgs(call));
  call.args.forEach((t, i) => {
    const written = new Set<number>();
    if (status === Status.OK && t.output && checked.has(i)) {
      const { sizes, strides } = t.built;
      const walk = (d: number, offset: number) => {
        if (d === sizes.length) return void written.add(GUARD + offset);
        for (let k = 0; k < sizes[d]!; k++) walk(d + 1, offset + k * strides[d]!);
      };
      walk(0, 0);
    }
    const sentinel = fill(t.output ? OUTPUT_FILL : INPUT_FILL);
    for (let k = 0; k < perRegion; k++) {
      if (!written.has(k) && values[i * perRegion + k] !== sentinel) {
        problems.push(`'${t.name}' changed at element ${k - GUARD} of its region (status ${status})`);
        break;
      }
    }
  });
  return problems;
}

const sizes = fc.record({
  B: fc.integer({ min: 1, max: 4 }), F: fc.integer({ min: 1, max: 4 }), S: fc.integer({ min: 1, max: 4 }),
  dims: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: MAX_DIMS }),
  layouts: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: MAX_TENSORS, maxLength: MAX_TENSORS }),
  momentum: fc.boolean(), accumulate: fc.boolean(), withBuffer: fc.boolean(),
});
const choice = fc.record({
  pick: fc.nat(), pick2: fc.nat(), dim: fc.nat(), value: fc.nat(),
  big: fc.bigInt({ min: 0n, max: 2n ** 64n }), big2: fc.bigInt({ min: 0n, max: 2n ** 64n }),
});

test(`every typed C entry point refuses ${RUNS} spoiled descriptors with its status and name, writing nothing`, () => {
  const hasCuda = backendInfo().cuda;
  const seen = new Map<Mutation, number>();
  fc.assert(
    fc.property(fc.constantFrom(...fns), fc.constantFrom(h.LLTM_FLOAT32, h.LLTM_FLOAT64), sizes, fc.constantFrom(...mutations), choice, (fn, dtype, s, m, c) => {
      const call = build(fn, dtype, s);
      const expected = mutate(call, m, c, hasCuda);
      if (expected === undefined) return true;
      seen.set(m, (seen.get(m) ?? 0) + 1);
      const descriptors = prepare(call);
      const problems = check(call, expected, invoke(call, descriptors));
      assert(problems.length === 0, `${fn}, ${m}: ${problems.join("; ")}`);
      return true;
    }),
    { numRuns: RUNS, seed: 20261122 },
  );
  // Each kind of spoiled argument was tried, and accepted calls ran too.
  for (const m of mutations) if (m !== "no CUDA" || !hasCuda) assert((seen.get(m) ?? 0) > RUNS / 200, `only ${seen.get(m) ?? 0} cases of '${m}'`);
});

test("a span whose size x stride passes 2^48 elements is refused before anything is written (lltm_fill of [2^48] stride 2^16)", () => {
  const { slots } = arena();
  const call = build("lltm_fill", h.LLTM_FLOAT32, { B: 1, F: 1, S: 1, dims: [4], layouts: [0], momentum: false, accumulate: false, withBuffer: false });
  const dst = call.args[0]!;
  dst.sizes[0] = 2n ** 48n;
  dst.strides[0] = 2n ** 16n;
  prepare(call);
  const lib = native();
  const status = lib.lltm_fill(slots, 1, h.LLTM_FLOAT32, h.LLTM_CPU, 0);
  assert(status === Status.INVALID_SHAPE, `status ${status}: ${lib.lltm_last_error()}`);
  assert(/^lltm_fill: 'dst' spans more than 2\^48 elements/.test(lib.lltm_last_error()), lib.lltm_last_error());
  assert(check(call, { status: Status.INVALID_SHAPE, names: ["dst"] }, status).length === 0, "nothing written");
});
