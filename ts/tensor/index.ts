/** Tensors: the class, its factories, views, copies and conversions, and the layout of an op's outputs. */
export { GroupLayout } from "./group.ts";
export { contiguousStrides, sameShape } from "./shape.ts";
export {
  type CopyOptions, disposedError, type NestedArray, type RandomOptions, Tensor, type TensorOptions, type ToTypedArrayOptions,
} from "./tensor.ts";
export { coalesce, registerTiling } from "./tiling.ts";
