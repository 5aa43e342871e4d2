/** Views: tensors sharing another's memory with other sizes, strides or offset. */
import { LLTMError } from "../errors.ts";
import { checkShape, contiguousStrides, numelOf } from "./shape.ts";
import type { Tensor } from "./tensor.ts";

export function transpose(t: Tensor, dim0: number, dim1: number): Tensor {
  t.assertLive("transpose");
  const a = t.checkDim(dim0, "transpose"), b = t.checkDim(dim1, "transpose");
  const shape = [...t.shape], strides = [...t.strides];
  [shape[a], shape[b]] = [shape[b]!, shape[a]!];
  [strides[a], strides[b]] = [strides[b]!, strides[a]!];
  return t.viewWith(shape, strides, t.offset);
}

export function narrow(t: Tensor, dim: number, start: number, length: number): Tensor {
  t.assertLive("narrow");
  const d = t.checkDim(dim, "narrow");
  const size = t.shape[d]!;
  if (!Number.isInteger(start) || !Number.isInteger(length) || start < 0 || length < 1 || start + length > size) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `narrow: start ${start} and length ${length} must select at least one of the ${size} elements of dimension ${d}`,
    );
  }
  const shape = [...t.shape];
  shape[d] = length;
  return t.viewWith(shape, t.strides, t.offset + start * t.strides[d]!);
}

export function slice(t: Tensor, dim: number, start: number, end: number | undefined, step: number): Tensor {
  t.assertLive("slice");
  const d = t.checkDim(dim, "slice");
  const stop = end ?? t.shape[d]!;
  if (!Number.isInteger(step) || step < 1) {
    throw new LLTMError("INVALID_ARGUMENT", `slice: step must be a positive integer, got ${step}`);
  }
  const narrowed = narrow(t, d, start, stop - start);
  if (step === 1) return narrowed;
  const shape = [...narrowed.shape], strides = [...narrowed.strides];
  shape[d] = Math.ceil(shape[d]! / step);
  strides[d] = strides[d]! * step;
  const stepped = narrowed.viewWith(shape, strides, narrowed.offset);
  narrowed.dispose();
  return stepped;
}

/**
 * Strides that read a tensor of `shape` and `strides` as `dims` without
 * moving an element (as PyTorch's view and reshape find them), or undefined
 * where none do: each run of dimensions that the tensor lays out as one
 * evenly spaced block must map onto whole dimensions of `dims`.
 */
function viewStrides(shape: readonly number[], strides: readonly number[], dims: readonly number[]): number[] | undefined {
  const out = new Array<number>(dims.length);
  let d = dims.length - 1;
  let base = strides[shape.length - 1]!, blockElements = 1, viewElements = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    blockElements *= shape[k]!;
    // Dimension k closes a block unless k - 1 continues it (or has size 1, which any stride reads).
    if (k === 0 || (shape[k - 1] !== 1 && strides[k - 1] !== blockElements * base)) {
      while (d >= 0 && (viewElements < blockElements || dims[d] === 1)) {
        out[d] = viewElements * base;
        viewElements *= dims[d]!;
        d--;
      }
      if (viewElements !== blockElements) return undefined;
      if (k > 0) {
        base = strides[k - 1]!;
        blockElements = 1;
        viewElements = 1;
      }
    }
  }
  return d === -1 ? out : undefined;
}

/** t as `shape`: a view where its strides allow one, else a contiguous copy (as torch.reshape). */
export function reshape(t: Tensor, shape: readonly number[]): Tensor {
  t.assertLive("reshape");
  const dims = checkShape(shape, "reshape: shape");
  if (numelOf(dims) !== t.numel) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `reshape: shape [${dims.join(", ")}] holds ${numelOf(dims)} elements but the tensor has ${t.numel}`,
    );
  }
  if (t.isContiguous()) return t.viewWith(dims, contiguousStrides(dims), t.offset);
  const strides = viewStrides(t.shape, t.strides, dims);
  if (strides !== undefined) return t.viewWith(dims, strides, t.offset);
  const copy = t.contiguous();
  const result = copy.viewWith(dims, contiguousStrides(dims), copy.offset);
  copy.dispose();
  return result;
}

export function expand(t: Tensor, shape: readonly number[]): Tensor {
  t.assertLive("expand");
  const dims = checkShape(shape, "expand: shape");
  const lead = dims.length - t.ndim;
  if (lead < 0) {
    throw new LLTMError("INVALID_ARGUMENT", `expand: shape [${dims.join(", ")}] has fewer dimensions than the tensor`);
  }
  const strides = dims.map((size, i) => {
    if (i < lead) return 0;
    const own = t.shape[i - lead]!;
    if (own === size) return t.strides[i - lead]!;
    if (own === 1) return 0;
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `expand: dimension ${i - lead} of size ${own} cannot be expanded to ${size} (only size 1 can)`,
    );
  });
  return t.viewWith(dims, strides, t.offset);
}
