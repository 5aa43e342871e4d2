/** Batches made on the host, moved to the device the step runs on. */
import { Device, type DeviceLike, Tensor } from "../ts/index.ts";

/**
 * A host array as a tensor on `device`; for a GPU through pinned memory, copied asynchronously, so
 * that the host goes on to the next batch while the device still runs the step before.
 */
export function toDevice(data: Int32Array | Float32Array, shape: readonly number[], device: DeviceLike): Tensor {
  if (Device.of(device).kind !== "cuda") return Tensor.fromTypedArray(data, shape, { device });
  using pinned = Tensor.fromTypedArray(data, shape, { pinMemory: true });
  return pinned.to(device, { nonBlocking: true });
}
