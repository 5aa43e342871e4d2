/**
 * How a Tensor prints (console.log, util.inspect, Deno.inspect, Bun.inspect):
 * its dtype, device and shape, then its values, summarised PyTorch's way
 * (the first and last three along each dimension) when there are many.
 */
import type { DType } from "./dtype.ts";

/** The symbols the runtimes' inspectors look for (Bun uses Node's). */
export const nodeInspect: unique symbol = Symbol.for("nodejs.util.inspect.custom") as never;
export const denoInspect: unique symbol = Symbol.for("Deno.customInspect") as never;

const SUMMARY_THRESHOLD = 1000;
const EDGE = 3;

export interface Inspectable {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly device: { toString(): string };
  readonly disposed: boolean;
  readonly numel: number;
  /** The values (float32 for the half types). */
  toTypedArray(): Float32Array | Float64Array | Int32Array;
}

function formatValue(v: number, integer: boolean): string {
  if (integer) return String(v);
  if (Number.isInteger(v)) return `${v}.`;
  return String(Number(v.toPrecision(5)));
}

export function formatTensor(t: Inspectable): string {
  const head = `Tensor(${t.dtype}, ${t.device}, [${t.shape.join(", ")}]`;
  if (t.disposed) return `${head}, disposed)`;
  const values = t.toTypedArray();
  const integer = values instanceof Int32Array;
  const summarise = t.numel > SUMMARY_THRESHOLD;
  const strides: number[] = [];
  let s = 1;
  for (let d = t.shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= t.shape[d]!;
  }
  const render = (d: number, offset: number, indent: string): string => {
    if (t.shape.length === 0) return formatValue(values[0]!, integer);
    const n = t.shape[d]!;
    const indices = summarise && n > 2 * EDGE
      ? [...Array.from({ length: EDGE }, (_, i) => i), -1, ...Array.from({ length: EDGE }, (_, i) => n - EDGE + i)]
      : Array.from({ length: n }, (_, i) => i);
    const last = d === t.shape.length - 1;
    const parts = indices.map((i) =>
      i < 0 ? "..." : last ? formatValue(values[offset + i]!, integer) : render(d + 1, offset + i * strides[d]!, indent + " ")
    );
    return last ? `[${parts.join(", ")}]` : `[${parts.join(`,\n${indent} `)}]`;
  };
  return `${head})${t.shape.length > 1 ? "\n" : " "}${render(0, 0, "")}`;
}
