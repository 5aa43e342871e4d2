/**
 * A block of native memory (host or device) shared by the tensors that view
 * it. Each tensor holds one reference; the block is freed when the last one
 * is disposed, or by the finalizer if they are collected undisposed; every
 * block is counted (native_memory.ts) so that forgotten ones get collected.
 *
 * A small host block whose last tensor is disposed is kept, with its Storage
 * (still registered with the finalizer), for the next allocation of the same
 * size: an op's outputs are made and released again at every step, and
 * lltm_alloc, lltm_free and a finalizer registration and unregistration cost
 * more than the rest of the TypeScript side of a small call. The latest
 * RECYCLED such blocks, of at most RECYCLED_BYTES each, are kept; the CUDA
 * backend pools device memory, and pinned host memory, itself.
 */
import { Device } from "./device.ts";
import { alloc, allocPinned, free, freePinned } from "./native/index.ts";
import { allocated, finalized, released } from "./native_memory.ts";

const RECYCLED = 8;
const RECYCLED_BYTES = 64 * 1024;

interface Held {
  address: number;
  device: Device;
  bytes: number;
  pinned: boolean;
}

function freeBlock(held: Held): void {
  if (held.pinned) freePinned(held.address);
  else free(held.address, held.device);
}

const registry = new FinalizationRegistry<Held>((held) => {
  freeBlock(held);
  finalized(held.bytes);
});

/** Host blocks no tensor holds, most recently released last. */
const recycled: Storage[] = [];

let everAllocated = false;

/** Whether a tensor's memory was ever allocated in this process: it belongs to the library in use, which must then stay. */
export function tensorMemoryMade(): boolean {
  return everAllocated;
}

export class Storage {
  private refs: number;
  readonly address: number;
  readonly bytes: number;
  readonly device: Device;
  /** Page-locked host memory (lltm_alloc_pinned), which copies to a GPU may read asynchronously. */
  readonly pinned: boolean;

  private constructor(address: number, bytes: number, device: Device, refs: number, pinned: boolean) {
    this.address = address;
    this.bytes = bytes;
    this.device = device;
    this.refs = refs;
    this.pinned = pinned;
    registry.register(this, { address, device, bytes, pinned }, this);
  }

  /**
   * Allocates `bytes` bytes on `device`, owned by `refs` tensors, for the public function `fn` (named in a failure);
   * with `pinned`, page-locked host memory.
   */
  static allocate(bytes: number, device: Device, fn: string, refs = 1, pinned = false): Storage {
    allocated(bytes);
    if (device === Device.cpu && !pinned && bytes <= RECYCLED_BYTES) {
      for (let i = recycled.length - 1; i >= 0; i--) {
        const s = recycled[i]!;
        if (s.bytes !== bytes) continue;
        if (i === recycled.length - 1) recycled.pop();
        else recycled.splice(i, 1);
        s.refs = refs;
        return s;
      }
    }
    let address: number;
    try {
      address = pinned ? allocPinned(fn, bytes) : alloc(fn, bytes, device);
    } catch (e) {
      released(bytes);
      throw e;
    }
    everAllocated = true;
    return new Storage(address, bytes, device, refs, pinned);
  }

  /** How many tensors view this block now. */
  get references(): number {
    return this.refs;
  }

  retain(): void {
    this.refs++;
  }

  release(): void {
    if (this.refs === 0) return;
    if (--this.refs === 0) {
      released(this.bytes);
      if (this.device !== Device.cpu || this.pinned || this.bytes > RECYCLED_BYTES) {
        this.free();
        return;
      }
      if (recycled.length === RECYCLED) recycled.shift()!.free();
      recycled.push(this);
    }
  }

  private free(): void {
    registry.unregister(this);
    freeBlock(this);
  }
}
