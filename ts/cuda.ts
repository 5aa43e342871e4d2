/** The CUDA devices this build and machine can use. */
import { Device, type DeviceLike } from "./device.ts";
import { checkStatus, LLTMError } from "./errors.ts";
import { native } from "./native/library.ts";

export const cuda = {
  /** Whether the CUDA backend loaded and sees at least one GPU. */
  isAvailable(): boolean {
    return native().lltm_cuda_device_count() > 0;
  },

  /** Number of CUDA devices (0 without the CUDA backend or a GPU). */
  deviceCount(): number {
    return native().lltm_cuda_device_count();
  },

  /** Waits for the work queued on a device (default cuda:0) to finish. */
  synchronize(device: DeviceLike = "cuda"): void {
    const d = Device.of(device);
    if (d.kind !== "cuda") throw new LLTMError("INVALID_DEVICE", `cuda.synchronize: ${d} is not a CUDA device`);
    const lib = native();
    checkStatus(lib.lltm_synchronize(d.kindCode, d.index), lib.lltm_last_error);
  },
};
