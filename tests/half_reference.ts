/**
 * bfloat16 and float16 in plain TypeScript, from the formats' definitions
 * (sign, exponent bias, mantissa bits) rather than from any bit trick: the
 * value a 16-bit pattern holds, and the pattern a number rounds to, to
 * nearest with ties to even, subnormals and overflow to infinity included.
 * The reference the native conversions are tested against.
 */

export interface HalfFormat {
  /** Stored mantissa bits. */
  mantissa: number;
  /** Exponent bits. */
  exponent: number;
}

export const bfloat16: HalfFormat = { mantissa: 7, exponent: 8 };
export const float16: HalfFormat = { mantissa: 10, exponent: 5 };

function limits(f: HalfFormat) {
  const bias = 2 ** (f.exponent - 1) - 1;
  const maxExponent = 2 ** f.exponent - 1;
  return { bias, maxExponent, minNormal: 1 - bias };
}

/** The value of the 16-bit pattern `bits` of format `f` (NaN for every NaN pattern). */
export function decode(f: HalfFormat, bits: number): number {
  const { bias, maxExponent, minNormal } = limits(f);
  const sign = bits >> 15 ? -1 : 1;
  const e = (bits >> f.mantissa) & maxExponent;
  const m = bits & (2 ** f.mantissa - 1);
  if (e === maxExponent) return m === 0 ? sign * Infinity : NaN;
  if (e === 0) return sign * m * 2 ** (minNormal - f.mantissa);
  return sign * (1 + m / 2 ** f.mantissa) * 2 ** (e - bias);
}

/** The pattern of format `f` nearest to `x` (ties to even); NaN gives a NaN pattern. */
export function encode(f: HalfFormat, x: number): number {
  const { bias, maxExponent, minNormal } = limits(f);
  if (Number.isNaN(x)) return (maxExponent << f.mantissa) | (1 << (f.mantissa - 1));
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  // The largest finite value, and the midpoint between it and the next power of two, which rounds up (its mantissa is odd).
  const maxFinite = (2 - 2 ** -f.mantissa) * 2 ** (maxExponent - 1 - bias);
  const overflow = (2 - 2 ** (-f.mantissa - 1)) * 2 ** (maxExponent - 1 - bias);
  if (a >= overflow) return sign | (maxExponent << f.mantissa);
  const e = a === 0 ? minNormal : Math.max(minNormal, Math.floor(Math.log2(a)));
  // Math.log2 may be off by one at powers of two: correct it on the value itself.
  const exponent = a >= 2 ** (e + 1) ? e + 1 : a < 2 ** e && e > minNormal ? e - 1 : e;
  const quantum = 2 ** (exponent - f.mantissa);
  const n = a / quantum; // exact: a has at most 53 significant bits and quantum is a power of two
  const floor = Math.floor(n), rest = n - floor;
  const rounded = rest > 0.5 || (rest === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  const value = rounded * quantum;
  if (value > maxFinite) return sign | (maxExponent << f.mantissa);
  if (value < 2 ** minNormal) return sign | (value / 2 ** (minNormal - f.mantissa)); // subnormal (or zero)
  const exp = Math.floor(Math.log2(value));
  const e2 = value >= 2 ** (exp + 1) ? exp + 1 : value < 2 ** exp ? exp - 1 : exp;
  const m = value / 2 ** e2 - 1;
  return sign | ((e2 + bias) << f.mantissa) | Math.round(m * 2 ** f.mantissa);
}
