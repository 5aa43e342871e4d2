/**
 * Whether this machine has an NVIDIA GPU that a CUDA library can use: the
 * driver is loaded and lists a device. The loader asks it before taking the
 * prebuilt CUDA package, and the builds ask it before compiling a CUDA
 * backend that no device here could run.
 */
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";

/** By the driver's files alone (no process started): the devices it lists in /proc, or its /dev/nvidiaN nodes. */
export function gpuDevicePresent(): boolean {
  for (const [dir, entry] of [["/proc/driver/nvidia/gpus", /./], ["/dev", /^nvidia\d+$/]] as const) {
    try {
      if (readdirSync(dir).some((name) => entry.test(name))) return true;
    } catch {
      // Not there, or not readable (Deno without --allow-read): the next sign is asked.
    }
  }
  return false;
}

/** By the driver's files, else by `nvidia-smi -L` (systems whose driver has no /proc entry). */
export function gpuPresent(): boolean {
  if (gpuDevicePresent()) return true;
  try {
    const r = spawnSync("nvidia-smi", ["-L"], { encoding: "utf8" });
    return r.status === 0 && /GPU \d/.test(r.stdout ?? "");
  } catch {
    return false; // Deno without --allow-run
  }
}
