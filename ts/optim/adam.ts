/**
 * Adam and AdamW, as torch.optim's: lltm_adam_step per parameter (or per flat
 * buffer of parameters, fused: optimizer.ts); AdamW first
 * decays each parameter by lr·weightDecay (decoupled weight decay) with the
 * library's axpy, on the parameter's device. With { capturable: true } (as
 * torch.optim's capturable), each group's lr and the step count live in a
 * small tensor on the parameters' device that lltm_adam_step_capturable reads,
 * the decay fused in: the step count advances on the device and a changed lr
 * is written there before the step, so that a captured step (compileStep)
 * replays with a schedule's lr and counts its steps.
 */
import { valueDType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import type { Capture } from "../graph/capture.ts";
import * as native from "../native/index.ts";
import { Tensor } from "../tensor/index.ts";
import { checkOptionNames, type Hyper, type MasterWeightsOption, Optimizer, type Parameters, type UpdateUnit } from "./optimizer.ts";

const ADAM_STEP = native.op("ADAM_STEP"), AXPY = native.op("AXPY");
const ADAM_STEP_CAPTURABLE = native.op("ADAM_STEP_CAPTURABLE");

export interface AdamOptions extends MasterWeightsOption {
  lr?: number;
  betas?: readonly [number, number];
  eps?: number;
  /** lr and the step count on the device, so that the step can be captured by compileStep (default false). */
  capturable?: boolean;
}

/** A group's lr and step count on its parameters' device: [lr, steps taken]. */
interface DeviceHyper {
  readonly values: Tensor;
  readonly lr: Tensor;
  readonly steps: Tensor;
  readonly one: Tensor;
  /** The lr last written to the device. */
  written: number;
}

export interface AdamWOptions extends AdamOptions {
  /** Decoupled weight decay: each step first multiplies the parameter by 1 - lr·weightDecay (default 0.01). */
  weightDecay?: number;
}

/** Options as a group's hyperparameters (betas split in two, as the op's scalars are). */
function hyperOf(kind: string, options: AdamWOptions, decoupled: boolean): Hyper {
  if (typeof options !== "object" || options === null) throw new LLTMError("INVALID_ARGUMENT", `${kind}: options must be an object`);
  checkOptionNames(kind, options, ["lr", "betas", "eps", "weightDecay", "masterWeights", "capturable", "fused"]);
  const betas = options.betas;
  if (betas !== undefined && (!Array.isArray(betas) || betas.length !== 2)) {
    throw new LLTMError("INVALID_ARGUMENT", `${kind}: 'betas' must be a pair [beta1, beta2]`);
  }
  if (!decoupled && options.weightDecay !== undefined) {
    throw new LLTMError("INVALID_ARGUMENT", `${kind}: 'weightDecay' is AdamW's (decoupled weight decay); use AdamW`);
  }
  if (options.capturable !== undefined && typeof options.capturable !== "boolean") {
    throw new LLTMError("INVALID_ARGUMENT", `${kind}: 'capturable' must be a boolean, got ${String(options.capturable)}`);
  }
  const hyper: Hyper = {};
  if (options.lr !== undefined) hyper.lr = options.lr;
  if (betas !== undefined) [hyper.beta1, hyper.beta2] = betas;
  if (options.eps !== undefined) hyper.eps = options.eps;
  if (options.weightDecay !== undefined) hyper.weightDecay = options.weightDecay;
  return hyper;
}

function groupsOf(kind: string, params: Parameters<AdamWOptions>, decoupled: boolean): Parameters<Hyper> {
  const list = params !== null && typeof params === "object" && Symbol.iterator in params ? [...params as Iterable<unknown>] : [];
  if (list.length > 0 && list.every((g) => typeof g === "object" && g !== null && "params" in g)) {
    return (list as { params: Iterable<never>; options?: AdamWOptions }[]).map((g) => ({
      params: g.params,
      options: hyperOf(kind, g.options ?? {}, decoupled),
    }));
  }
  return list as Parameters<Hyper>;
}

/** Adam's update, with or without decoupled weight decay. */
abstract class AdamBase extends Optimizer {
  /** Whether lr and the step count live on the device (per group), so that the step can be captured. */
  readonly capturable: boolean;
  private readonly deviceHyper: readonly (DeviceHyper | undefined)[];

  protected constructor(kind: string, params: Parameters<AdamWOptions>, options: AdamWOptions, weightDecay: number | undefined) {
    const decoupled = weightDecay !== undefined;
    const defaults: Hyper = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 };
    if (decoupled) defaults.weightDecay = weightDecay;
    super(kind, ADAM_STEP, groupsOf(kind, params, decoupled), { ...defaults, ...hyperOf(kind, options, decoupled) }, { step: 0 }, [
      "exp_avg",
      "exp_avg_sq",
    ], options.masterWeights, options.fused);
    this.capturable = options?.capturable === true;
    try {
      this.deviceHyper = this.capturable ? this.groups.map((g, i) => this.makeDeviceHyper(g, i)) : [];
    } catch (e) {
      super.dispose();
      throw e;
    }
  }

  /** Group i's [lr, steps] on its parameters' device, in their compute type (undefined for a group with no parameters). */
  private makeDeviceHyper(g: Hyper, i: number): DeviceHyper | undefined {
    // The tensors the step updates: a parameter's float32 master copy where it has one.
    const params = this.params.flatMap((p, k) => (p.group === i ? [{ name: p.name, value: this.target(k) }] : []));
    const first = params[0];
    if (first === undefined) return undefined;
    const dtype = valueDType(first.value.dtype), device = first.value.device;
    for (const p of params) {
      if (valueDType(p.value.dtype) !== dtype || p.value.device !== device) {
        throw new LLTMError(
          "INVALID_ARGUMENT",
          `${this.kind}: with capturable, the parameters of ${i === 0 ? "a group" : `group ${i}`} must share one device and ` +
            `compute type: '${p.name}' is ${p.value.dtype} on ${p.value.device}, '${first.name}' ${first.value.dtype} on ${device}`,
        );
      }
    }
    const values = Tensor.fromTypedArray(new Float64Array([g.lr!, this.counters.step!]), [2], { dtype, device });
    return {
      values,
      lr: values.narrow(0, 0, 1),
      steps: values.narrow(0, 1, 1),
      one: Tensor.ones([1], { dtype, device }),
      written: g.lr!,
    };
  }

  /** Writes each group's lr to the device where it changed (a launch, ordered before the step's). */
  private writeLr(): void {
    this.deviceHyper.forEach((h, i) => {
      const lr = this.groups[i]!.lr!;
      if (h === undefined || h.written === lr) return;
      h.lr.fill(lr);
      h.written = lr;
    });
  }

  protected override liveHyper(): readonly string[] {
    return this.capturable ? ["lr"] : [];
  }

  protected override loaded(): void {
    this.deviceHyper.forEach((h, i) => {
      if (h === undefined) return;
      h.steps.fill(this.counters.step!);
      h.lr.fill(this.groups[i]!.lr!);
      h.written = this.groups[i]!.lr!;
    });
  }

  override dispose(): void {
    for (const h of this.deviceHyper) for (const t of [h?.lr, h?.steps, h?.values, h?.one]) t?.dispose();
    super.dispose();
  }

  get betas(): readonly [number, number] {
    return [this.groups[0]!.beta1!, this.groups[0]!.beta2!];
  }

  get eps(): number {
    return this.groups[0]!.eps!;
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.counters.step!;
  }

  protected update(fn: string, capture: Capture | undefined, units: readonly UpdateUnit[]): void {
    if (this.capturable) return this.updateOnDevice(fn, capture, units);
    if (capture !== undefined) {
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `${fn}: inside a captured step (compileStep) the step count and lr must live on the device: make the ${this.kind} ` +
          "with { capturable: true }",
      );
    }
    const step = this.counters.step! + 1;
    for (const { group, target, grad, state } of units) {
      const { lr, beta1, beta2, eps, weightDecay } = this.groups[group]! as Record<string, number>;
      if (weightDecay) native.run(AXPY, fn, [target, target], 0, [-lr! * weightDecay]);
      native.run(ADAM_STEP, fn, [target, grad, state.get("exp_avg"), state.get("exp_avg_sq")], 0, [lr!, beta1!, beta2!, eps!, step]);
    }
    this.counters.step = step;
  }

  /**
   * The capturable update: lr written where it changed (before every replay when captured), then one launch per
   * parameter (or flat buffer) and the step counts advanced on the device.
   */
  private updateOnDevice(fn: string, capture: Capture | undefined, units: readonly UpdateUnit[]): void {
    if (capture === undefined) this.writeLr();
    for (const { group, target, grad, state } of units) {
      const h = this.deviceHyper[group];
      if (h === undefined) continue;
      const { beta1, beta2, eps, weightDecay } = this.groups[group]! as Record<string, number>;
      native.run(ADAM_STEP_CAPTURABLE, fn, [target, grad, state.get("exp_avg"), state.get("exp_avg_sq"), h.values], 0, [
        beta1!, beta2!, eps!, weightDecay ?? 0,
      ]);
    }
    for (const h of this.deviceHyper) if (h !== undefined) native.run(AXPY, fn, [h.steps, h.one], 0, [1]);
    if (capture === undefined) {
      this.counters.step = this.counters.step! + 1;
      return;
    }
    capture.beforeReplay(() => {
      for (const g of this.groups) this.checkHyper(fn, g);
      this.writeLr();
      this.counters.step = this.counters.step! + 1;
    });
  }

  protected override checkHyper(fn: string, hyper: Hyper): void {
    super.checkHyper(fn, hyper);
    const wd = hyper.weightDecay;
    if (wd !== undefined && !(Number.isFinite(wd) && wd >= 0)) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: 'weightDecay' must be a finite number ≥ 0, got ${wd}`);
    }
  }

  protected override checkCounters(fn: string, counters: Hyper): void {
    if (!Number.isSafeInteger(counters.step) || counters.step! < 0) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state's step must be a count of steps, got ${counters.step}`);
    }
  }
}

/** torch.optim.Adam (no weight decay, no AMSGrad). */
export class Adam extends AdamBase {
  constructor(params: Parameters<AdamOptions>, options: AdamOptions = {}) {
    super("Adam", params, options, undefined);
  }
}

/** Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW (weightDecay 0.01 by default). */
export class AdamW extends AdamBase {
  constructor(params: Parameters<AdamWOptions>, options: AdamWOptions = {}) {
    super("AdamW", params, options, 0.01);
  }

  get weightDecay(): number {
    return this.groups[0]!.weightDecay!;
  }
}
