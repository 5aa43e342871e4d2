/** Devices: "cpu", or "cuda:N" for the N-th GPU ("cuda" is "cuda:0"). */
import { LLTMError } from "./errors.ts";

export type DeviceKind = "cpu" | "cuda";
export type DeviceLike = Device | "cpu" | "cuda" | `cuda:${number}`;

export const deviceKindCode: Record<DeviceKind, number> = { cpu: 0, cuda: 1 };

export class Device {
  private static readonly cache = new Map<string, Device>();
  static readonly cpu = new Device("cpu", 0);

  readonly kind: DeviceKind;
  readonly index: number;

  private constructor(kind: DeviceKind, index: number) {
    this.kind = kind;
    this.index = index;
  }

  /** The code of the kind in the C ABI (lltm_device_kind). */
  get kindCode(): number {
    return deviceKindCode[this.kind];
  }

  static of(device: DeviceLike): Device {
    if (device instanceof Device) return device;
    let d = Device.cache.get(device);
    if (d) return d;
    const m = /^(cpu|cuda)(?::(\d+))?$/.exec(device);
    if (!m || (m[1] === "cpu" && m[2] !== undefined && m[2] !== "0")) {
      throw new LLTMError("INVALID_ARGUMENT", `device must be "cpu", "cuda" or "cuda:N", got ${JSON.stringify(device)}`);
    }
    d = m[1] === "cpu" ? Device.cpu : new Device("cuda", Number(m[2] ?? 0));
    Device.cache.set(device, d);
    return d;
  }

  equals(other: Device): boolean {
    return this.kind === other.kind && this.index === other.index;
  }

  toString(): string {
    return this.kind === "cpu" ? "cpu" : `cuda:${this.index}`;
  }
}
