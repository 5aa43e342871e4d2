/**
 * A block of native memory (host or device) shared by the tensors that view
 * it. Each tensor holds one reference; the block is freed when the last one
 * is disposed, or by the finalizer if they are collected undisposed.
 */
import type { Device } from "./device.ts";
import { allocate, native } from "./native/library.ts";

interface Held {
  address: number;
  kind: number;
  index: number;
}

const registry = new FinalizationRegistry<Held>((held) => {
  native().lltm_free(held.address, held.kind, held.index);
});

export class Storage {
  private refs: number;
  readonly address: number;
  readonly bytes: number;
  readonly device: Device;

  private constructor(address: number, bytes: number, device: Device, refs: number) {
    this.address = address;
    this.bytes = bytes;
    this.device = device;
    this.refs = refs;
    registry.register(this, { address, kind: device.kindCode, index: device.index }, this);
  }

  /** Allocates `bytes` bytes on `device`, owned by `refs` tensors. */
  static allocate(bytes: number, device: Device, refs = 1): Storage {
    return new Storage(allocate(bytes, device.kindCode, device.index), bytes, device, refs);
  }

  get freed(): boolean {
    return this.refs === 0;
  }

  retain(): void {
    this.refs++;
  }

  release(): void {
    if (this.refs === 0) return;
    if (--this.refs === 0) {
      registry.unregister(this);
      native().lltm_free(this.address, this.device.kindCode, this.device.index);
    }
  }
}
