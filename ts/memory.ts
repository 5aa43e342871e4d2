/**
 * Memory counters of a device, as torch.cuda.memory_allocated,
 * max_memory_allocated and memory_reserved give them (lltm_memory_stat): the
 * bytes of the blocks lltm's allocator hands out (requests rounded up to its
 * block sizes), lltm's scratch memory included. The CPU counts every host
 * allocation lltm makes in the process.
 */
import { Device, type DeviceLike } from "./device.ts";
import * as native from "./native/index.ts";

export interface MemoryStats {
  /** Bytes in blocks handed out and not yet freed. */
  allocated: number;
  /** The most `allocated` has been since the process started or the last resetPeakMemoryStats(device). */
  peakAllocated: number;
  /** Bytes held from the device: allocated, and freed blocks kept for reuse (the CUDA pool's; on the CPU, those of 64 KiB and up). */
  reserved: number;
}

/** The device's memory counters, in bytes. */
export function memoryStats(device: DeviceLike): MemoryStats {
  const fn = "memoryStats", d = Device.of(device);
  return {
    allocated: native.memoryStat(fn, "allocated", d),
    peakAllocated: native.memoryStat(fn, "peakAllocated", d),
    reserved: native.memoryStat(fn, "reserved", d),
  };
}

/** Starts the device's peak of allocated bytes again from what is allocated now (torch.cuda.reset_peak_memory_stats). */
export function resetPeakMemoryStats(device: DeviceLike): void {
  native.resetPeakMemory("resetPeakMemoryStats", Device.of(device));
}
