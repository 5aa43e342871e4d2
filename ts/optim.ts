/**
 * Optimizers that update parameters in place on their device through the
 * native library: SGD with momentum and Adam, with torch.optim's formulas
 * (see lltm_sgd_step and lltm_adam_step in csrc/lltm.h), on one base that
 * holds the parameters, their state and the hyperparameters.
 *
 * A step is all or nothing: every parameter, its gradient and its state are
 * checked (alive, dtypes the library accepts together, one device, one shape, contiguous) before the
 * first is updated; the hyperparameters, shared by all, are checked by the
 * library on the first update, before anything moves.
 */
import { loadCheckpoint, saveCheckpoint } from "./checkpoint.ts";
import type { DeviceLike } from "./device.ts";
import { LLTMError } from "./errors.ts";
import type { Parameter } from "./module.ts";
import { valueDType } from "./dtype.ts";
import * as native from "./native/index.ts";
import { sameShape, Tensor } from "./tensor/index.ts";

/** An optimizer's state as safetensors holds it: tensors named `<parameter>.<state>`, hyperparameters as strings. */
export interface OptimizerState {
  tensors: Record<string, Tensor>;
  metadata: Record<string, string>;
}

/**
 * Every parameter, gradient and state tensor alive, of the parameter's dtype, device and shape, and contiguous:
 * what the library would refuse for one parameter after the ones before it had moved.
 */
function checkParameters(fn: string, params: readonly Parameter[], states: readonly ReadonlyMap<string, Tensor>[]): void {
  params.forEach((p, i) => {
    const tensors: [string, Tensor][] = [[`parameter '${p.name}'`, p.value], [`the gradient of '${p.name}'`, p.grad]];
    for (const [name, t] of states[i] ?? []) tensors.push([`the ${name} of '${p.name}'`, t]);
    for (const [what, t] of tensors) {
      if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: ${what} is not a Tensor`);
      if (t.disposed) {
        throw new LLTMError("DISPOSED", `${fn}: ${what} has been disposed (moved by LLTM.to? make the optimizer after moving the module)`);
      }
      // The library's rule, checked for all before the first moves: one compute type (float64, or float32 for the rest).
      if (valueDType(t.dtype) !== valueDType(p.value.dtype)) {
        throw new LLTMError("INVALID_DTYPE", `${fn}: ${what} is ${t.dtype}, parameter '${p.name}' is ${p.value.dtype}`);
      }
      if (t.device !== p.value.device) {
        throw new LLTMError("INVALID_DEVICE", `${fn}: ${what} is on ${t.device}, parameter '${p.name}' on ${p.value.device}`);
      }
      if (!sameShape(t.shape, p.value.shape)) {
        throw new LLTMError(
          "SHAPE_MISMATCH",
          `${fn}: ${what} has shape [${t.shape.join(", ")}], parameter '${p.name}' [${p.value.shape.join(", ")}]`,
        );
      }
      if (!t.isContiguous()) throw new LLTMError("INVALID_ARGUMENT", `${fn}: ${what} must be contiguous`);
    }
  });
}

export abstract class Optimizer implements Disposable {
  readonly params: readonly Parameter[];
  /** Per parameter, its state tensors by name (e.g. exp_avg), on the parameter's device and dtype. */
  protected readonly state: ReadonlyMap<string, Tensor>[];
  protected readonly hyper: Record<string, number>;
  private readonly kind: string;

  protected constructor(kind: string, params: readonly Parameter[], hyper: Record<string, number>, stateNames: readonly string[]) {
    this.kind = kind;
    if (!Array.isArray(params) || params.length === 0) throw new LLTMError("INVALID_ARGUMENT", `${kind}: no parameters to optimise`);
    const names = new Set<string>();
    for (const p of params) {
      if (names.has(p.name)) throw new LLTMError("INVALID_ARGUMENT", `${kind}: two parameters are named '${p.name}'`);
      names.add(p.name);
    }
    this.params = [...params];
    this.hyper = { ...hyper };
    checkParameters(kind, this.params, []);
    const state: Map<string, Tensor>[] = [];
    try {
      for (const p of params) {
        const o = { dtype: p.value.dtype, device: p.value.device };
        state.push(new Map(stateNames.map((n) => [n, Tensor.zeros(p.value.shape, o)])));
      }
    } catch (e) {
      for (const m of state) for (const t of m.values()) t.dispose();
      throw e;
    }
    this.state = state;
  }

  /** The learning rate, settable between steps (a schedule). */
  get lr(): number {
    return this.hyper.lr!;
  }

  set lr(value: number) {
    if (typeof value !== "number") throw new LLTMError("INVALID_ARGUMENT", `${this.kind}: lr must be a number, got ${typeof value}`);
    this.hyper.lr = value;
  }

  /** Sets every parameter's gradient to zero. */
  zeroGrad(): void {
    checkParameters(`${this.kind}.zeroGrad`, this.params, this.state);
    for (const p of this.params) p.grad.fill(0);
  }

  /** Updates every parameter from its gradient, or none of them. */
  step(): void {
    checkParameters(`${this.kind}.step`, this.params, this.state);
    this.update(`${this.kind}.step`);
  }

  protected abstract update(fn: string): void;

  /** The state to save: the optimizer's own tensors (not copies) and its hyperparameters. */
  stateDict(): OptimizerState {
    const tensors = Object.create(null) as Record<string, Tensor>;
    this.params.forEach((p, i) => {
      for (const [name, t] of this.state[i]!) tensors[`${p.name}.${name}`] = t;
    });
    const metadata: Record<string, string> = { optimizer: this.kind };
    for (const [k, v] of Object.entries(this.hyper)) metadata[k] = String(v);
    return { tensors, metadata };
  }

  /** Restores a state from stateDict() (of an optimizer of this kind over parameters of the same names and shapes); all checked before anything changes. */
  loadStateDict(state: OptimizerState): void {
    const fn = `${this.kind}.loadStateDict`;
    const { tensors, metadata } = state;
    if (metadata.optimizer !== this.kind) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state is of ${JSON.stringify(metadata.optimizer)}, not ${this.kind}`);
    }
    const hyper: Record<string, number> = {};
    for (const k of Object.keys(this.hyper)) {
      const v = Object.hasOwn(metadata, k) ? Number(metadata[k]) : NaN;
      if (Number.isNaN(v)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state has no number '${k}' (got ${JSON.stringify(metadata[k])})`);
      hyper[k] = v;
    }
    this.checkHyper(fn, hyper);
    const expected = new Set<string>();
    this.params.forEach((p, i) => {
      for (const [name, mine] of this.state[i]!) {
        const key = `${p.name}.${name}`;
        expected.add(key);
        const t = Object.hasOwn(tensors, key) ? tensors[key] : undefined;
        if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state has no tensor '${key}'`);
        if (t.disposed) throw new LLTMError("DISPOSED", `${fn}: '${key}' has been disposed`);
        if (t.dtype !== mine.dtype) throw new LLTMError("INVALID_DTYPE", `${fn}: '${key}' is ${t.dtype}, the parameter is ${mine.dtype}`);
        if (!sameShape(t.shape, mine.shape)) {
          throw new LLTMError("SHAPE_MISMATCH", `${fn}: '${key}' has shape [${t.shape.join(", ")}], the parameter [${mine.shape.join(", ")}]`);
        }
      }
    });
    for (const key of Object.keys(tensors)) {
      if (!expected.has(key)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state has a tensor '${key}' this ${this.kind} does not hold`);
    }
    this.params.forEach((p, i) => {
      for (const [name, mine] of this.state[i]!) mine.copyFrom(tensors[`${p.name}.${name}`]!);
    });
    Object.assign(this.hyper, hyper);
  }

  /** Writes stateDict() to a safetensors file (beside the model's, say). */
  save(path: string): void {
    const { tensors, metadata } = this.stateDict();
    saveCheckpoint(path, tensors, metadata);
  }

  /** Restores the state saved by save(). */
  load(path: string, options: { device?: DeviceLike } = {}): void {
    const { tensors, metadata } = loadCheckpoint(path, { device: options.device ?? this.params[0]!.value.device });
    try {
      this.loadStateDict({ tensors, metadata });
    } finally {
      for (const t of Object.values(tensors)) t.dispose();
    }
  }

  /** Refuses hyperparameters a saved state must not bring in (what only this optimizer knows, beyond the library's ranges). */
  protected checkHyper(_fn: string, _hyper: Record<string, number>): void {}

  dispose(): void {
    for (const m of this.state) for (const t of m.values()) t.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

const SGD_STEP = native.op("SGD_STEP"), ADAM_STEP = native.op("ADAM_STEP");

export interface SGDOptions {
  lr: number;
  momentum?: number;
}

export class SGD extends Optimizer {
  constructor(params: readonly Parameter[], options: SGDOptions) {
    const momentum = options.momentum ?? 0;
    super("SGD", params, { lr: options.lr, momentum }, momentum === 0 ? [] : ["momentum_buffer"]);
  }

  get momentum(): number {
    return this.hyper.momentum!;
  }

  /** param -= lr * (momentum buffer or gradient), for every parameter. */
  protected update(fn: string): void {
    const { lr, momentum } = this.hyper as { lr: number; momentum: number };
    const scalars = [lr, momentum];
    this.params.forEach((p, i) => native.run(SGD_STEP, fn, [p.value, p.grad, this.state[i]!.get("momentum_buffer")], 0, scalars));
  }

  protected override checkHyper(fn: string, hyper: Record<string, number>): void {
    if ((hyper.momentum === 0) !== (this.momentum === 0)) {
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `${fn}: the state has momentum ${hyper.momentum}, this SGD ${this.momentum}; make the SGD with the state's momentum`,
      );
    }
  }
}

export interface AdamOptions {
  lr?: number;
  betas?: readonly [number, number];
  eps?: number;
}

export class Adam extends Optimizer {
  constructor(params: readonly Parameter[], options: AdamOptions = {}) {
    const [beta1, beta2] = options.betas ?? [0.9, 0.999];
    super("Adam", params, { lr: options.lr ?? 1e-3, beta1, beta2, eps: options.eps ?? 1e-8, step: 0 }, ["exp_avg", "exp_avg_sq"]);
  }

  get betas(): readonly [number, number] {
    return [this.hyper.beta1!, this.hyper.beta2!];
  }

  get eps(): number {
    return this.hyper.eps!;
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.hyper.step!;
  }

  protected update(fn: string): void {
    const { lr, beta1, beta2, eps } = this.hyper as Record<string, number>;
    const step = this.hyper.step! + 1;
    const scalars = [lr!, beta1!, beta2!, eps!, step];
    this.params.forEach((p, i) => {
      const s = this.state[i]!;
      native.run(ADAM_STEP, fn, [p.value, p.grad, s.get("exp_avg"), s.get("exp_avg_sq")], 0, scalars);
    });
    this.hyper.step = step;
  }

  protected override checkHyper(fn: string, hyper: Record<string, number>): void {
    if (!Number.isSafeInteger(hyper.step) || hyper.step! < 0) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state's step must be a count of steps, got ${hyper.step}`);
    }
  }
}
