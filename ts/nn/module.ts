/**
 * Module, the base of the layers (as torch.nn.Module): parameters and child
 * modules registered by name, so that a model's parameters carry prefixed
 * names (`layers.0.weights`); state dicts; whole-model safetensors files;
 * train/eval mode; moving to a device or dtype in place; and disposal of
 * everything the model holds.
 */
import { noGrad } from "../autograd/grad_mode.ts";
import { loadCheckpoint, saveCheckpoint } from "../checkpoint.ts";
import { Device, type DeviceLike } from "../device.ts";
import { type DType, isDType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { sameShape, type Tensor } from "../tensor/index.ts";

export interface LoadStateDictOptions {
  /** Refuse names the module does not have, and require all it has (default true). */
  strict?: boolean;
}

export abstract class Module implements Disposable {
  /** The class's name in messages ("Linear", "LLTM"). */
  readonly kind: string;
  private readonly params = new Map<string, Tensor>();
  private readonly children = new Map<string, Module>();
  private isTraining = true;
  private isDisposed = false;

  protected constructor(kind: string) {
    this.kind = kind;
  }

  /** Adds a parameter (a leaf that requires gradients from now on) under `name`. */
  protected registerParameter(name: string, value: Tensor): Tensor {
    this.params.set(name, value.requiresGrad_(true));
    return value;
  }

  /** Adds a child module under `name`; its parameters are named `name.<theirs>`. */
  protected registerModule<M extends Module>(name: string, module: M): M {
    this.children.set(name, module);
    return module;
  }

  /** The parameter registered under `name` (replaced by to()). */
  protected parameter(name: string): Tensor {
    return this.params.get(name)!;
  }

  /** Throws when the module has been disposed, naming `fn`. */
  protected assertLive(fn: string): void {
    if (this.isDisposed) throw new LLTMError("DISPOSED", `${fn}: this ${this.kind} has been disposed`);
  }

  get training(): boolean {
    return this.isTraining;
  }

  /** Training mode (the default): dropout drops. Applies to every child. */
  train(on = true): this {
    this.isTraining = on;
    for (const m of this.children.values()) m.train(on);
    return this;
  }

  /** Evaluation mode: train(false). */
  eval(): this {
    return this.train(false);
  }

  /** Every parameter, this module's first, then its children's in registration order. */
  parameters(): Tensor[] {
    return this.namedParameters().map(([, t]) => t);
  }

  /** Every parameter with its dotted name, e.g. ["layers.0.weights", tensor]. */
  namedParameters(prefix = ""): [string, Tensor][] {
    this.assertLive(`${this.kind}.namedParameters`);
    const out: [string, Tensor][] = [];
    for (const [name, t] of this.params) out.push([prefix + name, t]);
    for (const [name, m] of this.children) out.push(...m.namedParameters(`${prefix}${name}.`));
    return out;
  }

  /** The direct children with their names. */
  namedChildren(): [string, Module][] {
    return [...this.children];
  }

  /** The parameters by name: the module's own tensors, not copies (as torch's state_dict). */
  stateDict(): Record<string, Tensor> {
    const out = Object.create(null) as Record<string, Tensor>;
    for (const [name, t] of this.namedParameters()) out[name] = t;
    return out;
  }

  /** Copies `state`'s tensors into the parameters of the same names, after checking all of them (names, shapes, dtype). */
  loadStateDict(state: Readonly<Record<string, Tensor>>, options: LoadStateDictOptions = {}): void {
    const fn = `${this.kind}.loadStateDict`;
    this.assertLive(fn);
    const strict = options.strict ?? true;
    const mine = this.namedParameters();
    const names = new Set(mine.map(([n]) => n));
    if (strict) {
      const unexpected = Object.keys(state).filter((k) => !names.has(k));
      if (unexpected.length > 0) throw new LLTMError("INVALID_ARGUMENT", `${fn}: unexpected tensors ${unexpected.map((k) => `'${k}'`).join(", ")}`);
    }
    const pairs: [Tensor, Tensor][] = [];
    for (const [name, p] of mine) {
      const t = Object.hasOwn(state, name) ? state[name] : undefined;
      if (t === undefined) {
        if (strict) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state has no tensor '${name}'`);
        continue;
      }
      t.assertLive(`${fn}: '${name}'`);
      if (!sameShape(t.shape, p.shape)) {
        throw new LLTMError("SHAPE_MISMATCH", `${fn}: '${name}' has shape [${t.shape.join(", ")}], the module needs [${p.shape.join(", ")}]`);
      }
      pairs.push([p, t]);
    }
    noGrad(() => {
      for (const [p, t] of pairs) p.copyFrom(t);
    });
  }

  /** Writes every parameter to a safetensors file (names as namedParameters(); torch's safetensors reads it). */
  save(path: string, metadata: Record<string, string> = {}): void {
    this.assertLive(`${this.kind}.save`);
    saveCheckpoint(path, this.stateDict(), { format: "lltm.nn", module: this.kind, ...metadata });
  }

  /** Loads parameters saved by save() (or any safetensors file with the same names and shapes), converting dtypes. */
  load(path: string, options: LoadStateDictOptions = {}): void {
    this.assertLive(`${this.kind}.load`);
    const first = this.parameters()[0];
    const { tensors } = loadCheckpoint(path, { device: first?.device ?? "cpu" });
    try {
      this.loadStateDict(tensors, options);
    } finally {
      for (const t of Object.values(tensors)) t.dispose();
    }
  }

  /**
   * Moves every parameter to a device, or converts it to a dtype, in place (as torch's Module.to); their
   * gradients are dropped. Make optimizers after moving: theirs hold the old tensors.
   */
  to(target: DeviceLike | DType): this {
    this.assertLive(`${this.kind}.to`);
    const convert = (t: Tensor) => isDType(target) ? t.cast(target) : t.to(Device.of(target));
    noGrad(() => {
      for (const [name, t] of this.params) {
        // A new leaf (to() gives another reference even when nothing changes): the old one and its .grad go.
        const moved = convert(t);
        t.dispose();
        this.params.set(name, moved.requiresGrad_(true));
      }
    });
    for (const m of this.children.values()) m.to(target);
    return this;
  }

  /** Sets every parameter's gradient to zero (or drops it, with setToNone). */
  zeroGrad(setToNone = false): void {
    for (const p of this.parameters()) {
      if (p.grad === undefined) continue;
      if (setToNone) {
        p.grad.dispose();
        p.grad = undefined;
      } else p.grad.fill(0);
    }
  }

  get disposed(): boolean {
    return this.isDisposed;
  }

  /** Frees every parameter and gradient, this module's and its children's; later use throws. Idempotent. */
  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    for (const t of this.params.values()) t.dispose();
    for (const m of this.children.values()) m.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
