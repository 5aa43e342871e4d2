/** The CUDA devices this build and machine can use. */
import { Device, type DeviceLike } from "./device.ts";
import { LLTMError } from "./errors.ts";
import * as native from "./native/index.ts";

export interface CUDA {
  /** Whether the CUDA backend loaded and sees at least one GPU. */
  isAvailable(): boolean;
  /** Number of CUDA devices (0 without the CUDA backend or a GPU). */
  deviceCount(): number;
  /** Waits for the work queued on a device (default cuda:0) to finish. */
  synchronize(device?: DeviceLike): void;
}

export const cuda: CUDA = {
  /** Whether the CUDA backend loaded and sees at least one GPU. */
  isAvailable(): boolean {
    return native.cudaDeviceCount() > 0;
  },

  /** Number of CUDA devices (0 without the CUDA backend or a GPU). */
  deviceCount(): number {
    return native.cudaDeviceCount();
  },

  /** Waits for the work queued on a device (default cuda:0) to finish. */
  synchronize(device: DeviceLike = "cuda"): void {
    const d = Device.of(device);
    if (d.kind !== "cuda") throw new LLTMError("INVALID_DEVICE", `cuda.synchronize: ${d} is not a CUDA device`);
    native.synchronize("cuda.synchronize", d);
  },
};
