/**
 * A block of native memory (host or device) shared by the tensors that view
 * it. Each tensor holds one reference; the block is freed when the last one
 * is disposed, or by the finalizer if they are collected undisposed; every
 * block is counted (native_memory.ts) so that forgotten ones get collected.
 */
import type { Device } from "./device.ts";
import { alloc, free } from "./native/index.ts";
import { allocated, released } from "./native_memory.ts";

interface Held {
  address: number;
  device: Device;
  bytes: number;
}

const registry = new FinalizationRegistry<Held>((held) => {
  free(held.address, held.device, held.bytes);
  released(held.bytes);
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
    registry.register(this, { address, device, bytes }, this);
  }

  /** Allocates `bytes` bytes on `device`, owned by `refs` tensors. */
  static allocate(bytes: number, device: Device, refs = 1): Storage {
    allocated(bytes);
    let address: number;
    try {
      address = alloc(bytes, device);
    } catch (e) {
      released(bytes);
      throw e;
    }
    return new Storage(address, bytes, device, refs);
  }

  retain(): void {
    this.refs++;
  }

  release(): void {
    if (this.refs === 0) return;
    if (--this.refs === 0) {
      registry.unregister(this);
      free(this.address, this.device, this.bytes);
      released(this.bytes);
    }
  }
}
