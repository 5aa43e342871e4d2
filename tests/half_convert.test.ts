/**
 * Conversions between bfloat16, float16, float32 and float64 through the
 * library's COPY op (Tensor.cast / to): exact where the value is
 * representable (every 16-bit pattern to float32 and back), and otherwise
 * rounded to nearest with ties to even, checked against an independent
 * TypeScript reference of the formats (tests/half_reference.ts): ties,
 * subnormals, overflow to infinity, signed zeros, NaN. Also the raw bits
 * through fromTypedArray and toTypedArray({ raw: true }).
 */
import fc from "fast-check";

import { type DType, Tensor } from "../ts/index.ts";
import type { StorageArray } from "../ts/dtype.ts";
import { assert, assertEquals, cudaSkipReason, test } from "./harness.ts";
import { bfloat16, decode, encode, float16, type HalfFormat } from "./half_reference.ts";

const formats = { bfloat16, float16 } as const;
type Half = keyof typeof formats;
const halves: Half[] = ["bfloat16", "float16"];

const allPatterns = Uint16Array.from({ length: 65536 }, (_, i) => i);

/** `values` stored as `from`, cast to `to` on the CPU: the result's raw storage. */
function convert(values: Float32Array | Float64Array | Uint16Array, from: DType, to: DType): StorageArray {
  using src = Tensor.fromTypedArray(values, [values.length], { dtype: from });
  using dst = src.cast(to);
  assertEquals(dst.dtype, to);
  return dst.toTypedArray({ raw: true });
}

/** Whether two patterns of format `f` are equal, every NaN matching every NaN. */
function samePattern(f: HalfFormat, a: number, b: number): boolean {
  return a === b || (Number.isNaN(decode(f, a)) && Number.isNaN(decode(f, b)));
}

function firstMismatch(f: HalfFormat, actual: ArrayLike<number>, expected: ArrayLike<number>, inputs: ArrayLike<number>): string | undefined {
  for (let i = 0; i < expected.length; i++) {
    if (!samePattern(f, actual[i]!, expected[i]!)) {
      return `input ${inputs[i]}: got 0x${actual[i]!.toString(16)} (${decode(f, actual[i]!)}), ` +
        `expected 0x${expected[i]!.toString(16)} (${decode(f, expected[i]!)})`;
    }
  }
  return undefined;
}

test("the reference: every 16-bit pattern encodes back to itself, and its neighbours' midpoints round to even", () => {
  for (const f of [bfloat16, float16]) {
    for (let p = 0; p < 65536; p++) {
      const v = decode(f, p);
      if (Number.isNaN(v)) continue;
      assertEquals(encode(f, v), p, `pattern 0x${p.toString(16)}`);
      const next = p & 0x7fff ? p + 1 : p;
      if ((p & 0x7fff) < (((1 << f.exponent) - 1) << f.mantissa) - 1 && next !== p) {
        const mid = (v + decode(f, next)) / 2;
        assertEquals(encode(f, mid), p % 2 === 0 ? p : next, `midpoint after 0x${p.toString(16)}`);
      }
    }
  }
});

for (const half of halves) {
  const f = formats[half];

  test(`every ${half} pattern converts to float32 and float64 exactly, and back to itself`, () => {
    for (const wide of ["float32", "float64"] as const) {
      const values = convert(allPatterns, half, wide) as Float32Array | Float64Array;
      for (let p = 0; p < 65536; p++) {
        const expected = decode(f, p);
        assert(Object.is(values[p], expected) || (Number.isNaN(expected) && Number.isNaN(values[p])), `${half} 0x${p.toString(16)} -> ${wide}: ${values[p]} != ${expected}`);
      }
      const back = convert(values, wide, half);
      const why = firstMismatch(f, back, allPatterns, allPatterns);
      assert(why === undefined, `${half} -> ${wide} -> ${half}: ${why}`);
    }
  });

  test(`float32 to ${half} rounds to nearest even: random patterns, ties, subnormals, overflow, NaN`, () => {
    const special = new Float32Array([
      0, -0, Infinity, -Infinity, NaN, 1, -1, 65504, 65519.99, 65520, -65520, 65536, 3.4028234663852886e38,
      2 ** -14, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 2 ** -126, 2 ** -133, 2 ** -134, 3 * 2 ** -135, 1.401298464324817e-45,
    ]);
    // Exact ties of the half type: a kept last bit of each parity, then exactly half a unit.
    const ties = new Uint32Array(64);
    const drop = 23 - f.mantissa;
    for (let i = 0; i < ties.length; i++) ties[i] = ((0x3f800000 + (i << drop)) | (1 << (drop - 1))) >>> 0;
    const random = fc.sample(fc.integer({ min: 0, max: 0xffffffff }), { numRuns: 20000, seed: 17 });
    const bits = new Uint32Array([...new Uint32Array(special.buffer), ...ties, ...random]);
    const values = new Float32Array(bits.buffer);
    const expected = Uint16Array.from(values, (v) => encode(f, v));
    const why = firstMismatch(f, convert(values, "float32", half), expected, values);
    assert(why === undefined, `float32 -> ${half}: ${why}`);
  });

  test(`float64 to ${half} rounds to nearest even`, () => {
    const doubles = fc.sample(fc.double({ noNaN: false }), { numRuns: 5000, seed: 23 });
    const scaled = fc.sample(fc.double({ min: -70000, max: 70000, noNaN: true }), { numRuns: 5000, seed: 29 });
    const values = new Float64Array([...doubles, ...scaled, 65520, 65519.999999, 2 ** -25, 2 ** -134]);
    const expected = Uint16Array.from(values, (v) => encode(f, v));
    const why = firstMismatch(f, convert(values, "float64", half), expected, values);
    assert(why === undefined, `float64 -> ${half}: ${why}`);
  });

  test(`fill rounds its value to ${half} once, to nearest even`, () => {
    // Just above a tie of the half type by less than float32 keeps: rounding through float32 first
    // lands on the tie and goes to even (down), rounding once goes up.
    const ulp = 2 ** -f.mantissa;
    const aboveTie = 1 + ulp / 2 + 2 ** -40;
    const values = [aboveTie, -aboveTie, 1 + ulp / 2, 1 + 1.5 * ulp, 65520, 2 ** -25 + 2 ** -60, 0.1, -0, NaN];
    using t = Tensor.zeros([3], { dtype: half });
    for (const v of values) {
      t.fill(v);
      const bits = t.toTypedArray({ raw: true });
      assert(bits.every((b) => samePattern(f, b, encode(f, v))), `fill(${v}): got 0x${bits[0]!.toString(16)}, expected 0x${encode(f, v).toString(16)}`);
    }
  });
}

test("bfloat16 and float16 convert into each other correctly rounded, every pattern", () => {
  for (const [from, to] of [["bfloat16", "float16"], ["float16", "bfloat16"]] as const) {
    const expected = Uint16Array.from(allPatterns, (p) => encode(formats[to], decode(formats[from], p)));
    const inputs = Float64Array.from(allPatterns, (p) => decode(formats[from], p));
    const why = firstMismatch(formats[to], convert(allPatterns, from, to), expected, inputs);
    assert(why === undefined, `${from} -> ${to}: ${why}`);
  }
});

test("a half tensor's raw bits go in and out unchanged, and its values read as float32", () => {
  const bits = Uint16Array.from([0x3f80, 0xc000, 0x7f80, 0x0001, 0x8000]);
  using t = Tensor.fromTypedArray(bits, [5], { dtype: "bfloat16" });
  assertEquals([...t.toTypedArray({ raw: true })], [...bits]);
  const values = t.toTypedArray();
  assert(values instanceof Float32Array, "values as float32");
  assertEquals([...values], [1, -2, Infinity, 2 ** -133, -0]);
  using h = Tensor.fromArray([[1.5, -2.25], [65504, 1e-7]], { dtype: "float16" });
  assertEquals([...h.toTypedArray({ raw: true })], [0x3e00, 0xc080, 0x7bff, encode(float16, Math.fround(1e-7))]);
  using strided = h.transpose();
  assertEquals([...strided.toTypedArray()], [1.5, 65504, -2.25, decode(float16, encode(float16, Math.fround(1e-7)))]);
});

// The CUDA backend converts dense tensors eight elements a thread where both ends are aligned to that, the rest
// (a tail short of eight, a view that starts off the alignment, a strided one) one element a thread: each must
// equal the CPU's conversion bit for bit, NaNs as NaNs (their payloads are the formats' own business).
test("CUDA conversions equal the CPU's: whole packs, tails, misaligned and strided views", () => {
  const n = 65536;
  const wide = new Float32Array(n);
  const wideBits = new Uint32Array(wide.buffer);
  for (let i = 0; i < n; ++i) wideBits[i] = Math.imul(i + 1, 2654435761) >>> 0;
  for (let i = 0; i < n; ++i) if (Number.isNaN(wide[i]!)) wide[i] = i;
  const sameBits = (what: string, actual: ArrayLike<number>, expected: ArrayLike<number>, nan: (v: number) => boolean) => {
    assertEquals(actual.length, expected.length, what);
    for (let i = 0; i < actual.length; ++i)
      if (actual[i] !== expected[i] && !(nan(actual[i]!) && nan(expected[i]!))) assert(false, `${what}: element ${i} is ${actual[i]}, the CPU's ${expected[i]}`);
  };
  const f32NaN = (bits: number) => Number.isNaN(new Float32Array(new Uint32Array([bits]).buffer)[0]!);
  for (const h of halves) {
    const halfNaN = (bits: number) => decode(formats[h], bits) !== decode(formats[h], bits);
    using wides = Tensor.fromTypedArray(wide, [n]);
    using halfs = Tensor.fromTypedArray(allPatterns, [n], { dtype: h });
    // Views are taken on the device, so that they start where the CPU's do, off the packs' alignment.
    using widesOnDevice = wides.to("cuda");
    using halfsOnDevice = halfs.to("cuda");
    for (const [start, length, step] of [[0, n, 1], [0, n - 5, 1], [1, n - 1, 1], [3, n - 10, 1], [2, 1000, 3]] as const) {
      const what = `${h} [${start}, +${length}) step ${step}`;
      using wideView = wides.slice(0, start, start + length * step, step);
      using toHalf = wideView.cast(h);
      using wideViewOnDevice = widesOnDevice.slice(0, start, start + length * step, step);
      using toHalfOnDevice = wideViewOnDevice.cast(h);
      sameBits(`float32 to ${what}`, toHalfOnDevice.toTypedArray({ raw: true }), toHalf.toTypedArray({ raw: true }), halfNaN);
      using halfView = halfs.slice(0, start, start + length * step, step);
      using toWide = halfView.cast("float32");
      using halfViewOnDevice = halfsOnDevice.slice(0, start, start + length * step, step);
      using toWideOnDevice = halfViewOnDevice.cast("float32");
      const raw = (t: Tensor) => {
        const a = t.toTypedArray() as Float32Array;
        return new Uint32Array(a.buffer, a.byteOffset, a.length);
      };
      sameBits(`${what} to float32`, raw(toWideOnDevice), raw(toWide), f32NaN);
    }
  }
}, { skip: cudaSkipReason() });
