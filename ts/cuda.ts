/** The CUDA devices this build and machine can use. */
import { Device, type DeviceLike } from "./device.ts";
import type { DType } from "./dtype.ts";
import { LLTMError } from "./errors.ts";
import * as native from "./native/index.ts";

export interface CUDA {
  /** Whether the CUDA backend loaded and sees at least one GPU. */
  isAvailable(): boolean;
  /** Number of CUDA devices (0 without the CUDA backend or a GPU). */
  deviceCount(): number;
  /** Waits for the work queued on a device (default cuda:0) to finish. */
  synchronize(device?: DeviceLike): void;
  /** Bytes of device memory in tensors and lltm's scratch blocks now (torch.cuda.memory_allocated). */
  memoryAllocated(device?: DeviceLike): number;
  /** The most memoryAllocated() has been since the start or resetPeakMemoryStats() (torch.cuda.max_memory_allocated). */
  maxMemoryAllocated(device?: DeviceLike): number;
  /** Bytes the memory pool holds from the device, allocated or cached for reuse (torch.cuda.memory_reserved). */
  memoryReserved(device?: DeviceLike): number;
  /** Starts the peak of maxMemoryAllocated() again from what is allocated now (torch.cuda.reset_peak_memory_stats). */
  resetPeakMemoryStats(device?: DeviceLike): void;
}

/** `device` as a CUDA device, or an error naming `fn` for another kind. */
function cudaDevice(device: DeviceLike, fn: string): Device {
  const d = Device.of(device);
  if (d.kind !== "cuda") throw new LLTMError("INVALID_DEVICE", `${fn}: ${d} is not a CUDA device`);
  return d;
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
    native.synchronize("cuda.synchronize", cudaDevice(device, "cuda.synchronize"));
  },

  memoryAllocated(device: DeviceLike = "cuda"): number {
    const fn = "cuda.memoryAllocated";
    return native.memoryStat(fn, "allocated", cudaDevice(device, fn));
  },

  maxMemoryAllocated(device: DeviceLike = "cuda"): number {
    const fn = "cuda.maxMemoryAllocated";
    return native.memoryStat(fn, "peakAllocated", cudaDevice(device, fn));
  },

  memoryReserved(device: DeviceLike = "cuda"): number {
    const fn = "cuda.memoryReserved";
    return native.memoryStat(fn, "reserved", cudaDevice(device, fn));
  },

  resetPeakMemoryStats(device: DeviceLike = "cuda"): void {
    const fn = "cuda.resetPeakMemoryStats";
    native.resetPeakMemory(fn, cudaDevice(device, fn));
  },
};

let cudaUsable = false;

/**
 * Throws, naming the public operation `fn`, when `device` is a CUDA device
 * and this process cannot use one: the library's own reason (no CUDA backend
 * beside it, no GPU, a driver too old), and where the library in use has no
 * CUDA backend, the ways to one. Checked before any memory is allocated, so
 * that load({ cuda: true }) can still switch libraries afterwards.
 */
export function requireDevice(device: DeviceLike | DType | undefined, fn: string): void {
  if (cudaUsable || device === undefined || (typeof device === "string" && !device.startsWith("cuda"))) return;
  const d = Device.of(device as DeviceLike);
  if (d.kind !== "cuda") return;
  if (native.cudaDeviceCount() > 0) {
    cudaUsable = true;
    return;
  }
  let reason = "no CUDA device";
  try {
    native.synchronize(fn, d);
  } catch (e) {
    if (!(e instanceof LLTMError)) throw e;
    reason = e.message;
  }
  const library = native.libraryInUse();
  if (library === undefined || native.hasCudaPlugin(library)) {
    throw new LLTMError("BACKEND_UNAVAILABLE", /no CUDA GPU/.test(reason) ? reason : `${reason}; no CUDA GPU can be used`);
  }
  const prebuilt = native.prebuiltPackages?.cuda;
  throw new LLTMError(
    "BACKEND_UNAVAILABLE",
    `${reason}\nThe lltm library in use (${library}) has no CUDA backend. To use the GPU: call \`await load({ cuda: true })\` ` +
      "before making any tensor (it takes the prebuilt CUDA package when it is installed, else builds the backend with the " +
      `CUDA toolkit), ${prebuilt ? `install ${prebuilt} beside lltm (it needs only the NVIDIA driver), ` : ""}or set ` +
      "LLTM_LIBRARY_PATH to a liblltm built with CUDA and restart the process",
  );
}
