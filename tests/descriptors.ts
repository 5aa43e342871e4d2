/** Hand-altered descriptors for the tests that call the C ABI with bad arguments. */
import { type Describable, newDescribableId } from "../ts/native/descriptor.ts";

/** A descriptor like `t` with some fields replaced. */
export function altered(t: Describable, change: Partial<Describable>): Describable {
  return { id: newDescribableId(), shape: t.shape, strides: t.strides, dataAddress: t.dataAddress, dtype: t.dtype, disposed: false, ...change };
}
