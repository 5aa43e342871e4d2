/** Devices: "cpu", or "cuda:N" for the N-th GPU ("cuda" is "cuda:0"). */
import { LLTMError } from "./errors.ts";
import { deviceKindCode } from "./native/constants.ts";

export type DeviceKind = "cpu" | "cuda";
export type DeviceLike = Device | "cpu" | "cuda" | `cuda:${number}`;

/** The C ABI takes a device index as an int32_t. */
const MAX_INDEX = 2 ** 31 - 1;

export class Device {
  private static readonly cache: Map<string, Device> = new Map();
  static readonly cpu: Device = new Device("cpu", 0);

  readonly kind: DeviceKind;
  readonly index: number;
  /** The code of the kind in the C ABI (lltm_device_kind). */
  readonly kindCode: number;

  private constructor(kind: DeviceKind, index: number) {
    this.kind = kind;
    this.index = index;
    this.kindCode = deviceKindCode[kind];
  }

  static of(device: DeviceLike): Device {
    if (device instanceof Device) return device;
    let d = Device.cache.get(device);
    if (d) return d;
    const m = typeof device === "string" ? /^(cpu|cuda)(?::(\d+))?$/.exec(device) : null;
    if (!m || (m[1] === "cpu" && m[2] !== undefined && m[2] !== "0")) {
      throw new LLTMError("INVALID_ARGUMENT", `device must be "cpu", "cuda" or "cuda:N", got ${JSON.stringify(device)}`);
    }
    const index = Number(m[2] ?? 0);
    if (index > MAX_INDEX) {
      throw new LLTMError("INVALID_DEVICE", `device ${device}: the index must be at most ${MAX_INDEX}`);
    }
    d = m[1] === "cpu" ? Device.cpu : Device.cuda(index);
    Device.cache.set(device, d);
    return d;
  }

  /** One object per CUDA index, so "cuda" and "cuda:0" are the same Device. */
  private static cuda(index: number): Device {
    const key = `cuda:${index}`;
    let d = Device.cache.get(key);
    if (!d) {
      d = new Device("cuda", index);
      Device.cache.set(key, d);
    }
    return d;
  }

  equals(other: Device): boolean {
    return this === other;
  }

  toString(): string {
    return this.kind === "cpu" ? "cpu" : `cuda:${this.index}`;
  }
}
