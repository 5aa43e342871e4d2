/**
 * GradScaler, as torch.amp.GradScaler: dynamic loss scaling for float16
 * training. The loss is multiplied by the scale before backward(), so that
 * small gradients stay representable in float16 on their way through the
 * model; step(optimizer) divides the gradients by the scale and checks them
 * for infinities and NaNs on their device (the UNSCALE_CHECK op: one flag per
 * device and compute type, read once), and skips the optimizer's step when
 * one was found; update() halves the scale after such a step and doubles it
 * after growthInterval steps in a row without one.
 *
 * Use it as in PyTorch:
 *   using scaled = scaler.scale(loss); scaled.backward();
 *   scaler.unscale_(optimizer);            // only to clip or read the true gradients first
 *   scaler.step(optimizer); scaler.update();
 */
import { scale as scaleOp } from "../autograd/index.ts";
import { valueDType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { unscaleCheck_ } from "../ops/unscale_check.ts";
import type { Optimizer } from "../optim/optimizer.ts";
import { Tensor } from "../tensor/index.ts";

export interface GradScalerOptions {
  /** The first scale (default 2^16). */
  initScale?: number;
  /** What the scale is multiplied by after growthInterval steps without an infinity (default 2). */
  growthFactor?: number;
  /** What the scale is multiplied by after a step with one (default 0.5). */
  backoffFactor?: number;
  /** Steps in a row without an infinity before the scale grows (default 2000). */
  growthInterval?: number;
  /** false makes every method a pass-through: scale() returns the loss, step() steps (default true). */
  enabled?: boolean;
}

/** A GradScaler's state, as torch's state_dict() names it. */
export interface GradScalerState {
  scale: number;
  growth_factor: number;
  backoff_factor: number;
  growth_interval: number;
  _growth_tracker: number;
}

/** Where an optimizer is in the current iteration. */
interface Stage {
  /** Per device and compute type, the flag its gradients' checks set. */
  flags: Map<string, Tensor>;
  stepped: boolean;
  /** Whether an infinity or a NaN was found, once read. */
  found?: boolean;
}

function positive(fn: string, name: string, v: unknown, above: number, below = Infinity): number {
  if (typeof v !== "number" || !Number.isFinite(v) || !(v > above) || !(v < below)) {
    const range = below === Infinity ? `a finite number > ${above}` : `in (${above}, ${below})`;
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${name}' must be ${range}, got ${String(v)}`);
  }
  return v;
}

function count(fn: string, name: string, v: unknown, min: number): number {
  if (!Number.isSafeInteger(v) || (v as number) < min) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${name}' must be an integer ≥ ${min}, got ${String(v)}`);
  }
  return v as number;
}

export class GradScaler implements Disposable {
  private scaleValue: number;
  private readonly growthFactor: number;
  private readonly backoffFactor: number;
  private readonly growthInterval: number;
  private readonly enabled: boolean;
  private growthTracker = 0;
  private stages = new Map<Optimizer, Stage>();

  constructor(options: GradScalerOptions = {}) {
    const fn = "GradScaler";
    if (typeof options !== "object" || options === null) throw new LLTMError("INVALID_ARGUMENT", `${fn}: options must be an object`);
    this.scaleValue = positive(fn, "initScale", options.initScale ?? 2 ** 16, 0);
    this.growthFactor = positive(fn, "growthFactor", options.growthFactor ?? 2, 1);
    this.backoffFactor = positive(fn, "backoffFactor", options.backoffFactor ?? 0.5, 0, 1);
    this.growthInterval = count(fn, "growthInterval", options.growthInterval ?? 2000, 1);
    if (options.enabled !== undefined && typeof options.enabled !== "boolean") {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'enabled' must be true or false, got ${String(options.enabled)}`);
    }
    this.enabled = options.enabled ?? true;
  }

  isEnabled(): boolean {
    return this.enabled;
  }

  /** The scale the next scale() multiplies by (1 when disabled). */
  getScale(): number {
    return this.enabled ? this.scaleValue : 1;
  }

  /**
   * The loss times the scale, on the tape (its backward() carries the scaled gradients), in float32 for a half
   * loss (as autocast computes losses), so the scaled value itself never overflows; a view of the loss when disabled.
   */
  scale(outputs: Tensor): Tensor {
    const fn = "GradScaler.scale";
    if (!(outputs instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'outputs' must be a Tensor`);
    outputs.assertLive(fn);
    // A view on the tape, so that backward() from it reaches the loss's graph as from the loss.
    if (!this.enabled) return outputs.reshape(outputs.shape);
    if (valueDType(outputs.dtype) === "int32") {
      throw new LLTMError("INVALID_DTYPE", `${fn}: 'outputs' has dtype int32; scale the float loss`);
    }
    if (outputs.dtype === "float32" || outputs.dtype === "float64") return scaleOp(outputs, this.scaleValue);
    using wide = outputs.to("float32");
    return scaleOp(wide, this.scaleValue);
  }

  /**
   * Divides the optimizer's gradients by the scale in place and checks them for infinities and NaNs, on their
   * device, reading nothing back; at most once per optimizer between update() calls (step() calls it if not yet).
   * float16 gradients are refused: unscaled in float16 the small ones flush to zero (the optimizer's master
   * weights, on by default for half parameters, keep them in float32).
   */
  unscale_(optimizer: Optimizer): void {
    const fn = "GradScaler.unscale_";
    if (!this.enabled) return;
    const stage = this.stageOf(fn, optimizer);
    if (stage.stepped) throw new LLTMError("INVALID_ARGUMENT", `${fn}: step() has already been called for this optimizer since the last update()`);
    if (stage.flags.size > 0) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: unscale_() has already been called for this optimizer since the last update()`);
    }
    const grads = optimizer.gradients();
    for (const { name, grad } of grads) {
      if (grad.dtype === "float16") {
        throw new LLTMError(
          "INVALID_DTYPE",
          `${fn}: the gradient of '${name}' is float16; unscaled in float16 its small values would flush to zero: ` +
            "keep the optimizer's master weights (masterWeights, on by default), whose gradients are float32",
        );
      }
    }
    const inv = 1 / this.scaleValue;
    try {
      for (const { grad } of grads) {
        const dtype = valueDType(grad.dtype) === "float64" ? "float64" : "float32";
        const key = `${grad.device}|${dtype}`;
        let flag = stage.flags.get(key);
        if (flag === undefined) {
          flag = Tensor.zeros([1], { dtype, device: grad.device });
          stage.flags.set(key, flag);
        }
        unscaleCheck_(grad, flag, inv);
      }
    } catch (e) {
      this.dropStage(optimizer);
      throw e;
    }
    if (stage.flags.size === 0) stage.flags.set("none", Tensor.zeros([1]));
  }

  /**
   * Unscales the gradients (unless unscale_ already did), reads whether any was infinite or NaN (one read per
   * device and compute type), and runs optimizer.step() only if none was; returns whether it stepped.
   */
  step(optimizer: Optimizer): boolean {
    const fn = "GradScaler.step";
    if (!this.enabled) {
      optimizer.step();
      return true;
    }
    const stage = this.stageOf(fn, optimizer);
    if (stage.stepped) throw new LLTMError("INVALID_ARGUMENT", `${fn}: step() has already been called for this optimizer since the last update()`);
    if (stage.flags.size === 0) this.unscale_(optimizer);
    let found = false;
    for (const flag of stage.flags.values()) found ||= flag.item() !== 0;
    stage.found = found;
    stage.stepped = true;
    if (!found) optimizer.step();
    return !found;
  }

  /**
   * Adjusts the scale for the next iteration: times backoffFactor if any optimizer stepped this iteration found
   * an infinity or a NaN, else times growthFactor once growthInterval such steps came in a row; or sets it to
   * `newScale`. Ends the iteration.
   */
  update(newScale?: number): void {
    const fn = "GradScaler.update";
    if (!this.enabled) return;
    try {
      if (newScale !== undefined) {
        this.scaleValue = positive(fn, "newScale", newScale, 0);
        return;
      }
      const stepped = [...this.stages.values()].filter((s) => s.stepped);
      if (stepped.length === 0) {
        throw new LLTMError("INVALID_ARGUMENT", `${fn}: no optimizer was stepped through this scaler since the last update() (call step(optimizer) first)`);
      }
      if (stepped.some((s) => s.found)) {
        this.scaleValue *= this.backoffFactor;
        this.growthTracker = 0;
      } else if (++this.growthTracker === this.growthInterval) {
        this.scaleValue *= this.growthFactor;
        this.growthTracker = 0;
      }
    } finally {
      if (newScale !== undefined || [...this.stages.values()].some((s) => s.stepped)) this.clearStages();
    }
  }

  stateDict(): GradScalerState {
    return {
      scale: this.scaleValue, growth_factor: this.growthFactor, backoff_factor: this.backoffFactor,
      growth_interval: this.growthInterval, _growth_tracker: this.growthTracker,
    };
  }

  /** Restores the scale and growth tracker of stateDict() (the factors and interval must match this scaler's). */
  loadStateDict(state: GradScalerState): void {
    const fn = "GradScaler.loadStateDict";
    if (typeof state !== "object" || state === null) throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'state' must be an object`);
    const scale = positive(fn, "scale", state.scale, 0);
    const tracker = count(fn, "_growth_tracker", state._growth_tracker, 0);
    const mine = this.stateDict();
    for (const k of ["growth_factor", "backoff_factor", "growth_interval"] as const) {
      if (state[k] !== mine[k]) {
        throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state's ${k} is ${String(state[k])}, this scaler's ${mine[k]}`);
      }
    }
    if (tracker >= this.growthInterval) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: '_growth_tracker' must be below growth_interval ${this.growthInterval}, got ${tracker}`);
    }
    this.scaleValue = scale;
    this.growthTracker = tracker;
  }

  private stageOf(fn: string, optimizer: Optimizer): Stage {
    if (typeof optimizer !== "object" || optimizer === null || typeof optimizer.gradients !== "function") {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'optimizer' must be an Optimizer`);
    }
    let stage = this.stages.get(optimizer);
    if (stage === undefined) {
      stage = { flags: new Map(), stepped: false };
      this.stages.set(optimizer, stage);
    }
    return stage;
  }

  private dropStage(optimizer: Optimizer): void {
    const stage = this.stages.get(optimizer);
    if (stage === undefined) return;
    for (const t of stage.flags.values()) t.dispose();
    this.stages.delete(optimizer);
  }

  private clearStages(): void {
    for (const o of [...this.stages.keys()]) this.dropStage(o);
  }

  dispose(): void {
    this.clearStages();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
