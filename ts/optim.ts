/**
 * Optimizers that update parameters in place on their device through the
 * native library: SGD with momentum and Adam, with torch.optim's formulas
 * (see lltm_sgd_step and lltm_adam_step in csrc/lltm.h).
 */
import { LLTMError } from "./errors.ts";
import type { Parameter } from "./module.ts";
import * as native from "./native/index.ts";
import { Tensor } from "./tensor.ts";

function checkParameters(name: string, params: readonly Parameter[]): void {
  if (params.length === 0) throw new LLTMError("INVALID_ARGUMENT", `${name}: no parameters to optimise`);
  for (const p of params) {
    if (!p.value.isContiguous() || !p.grad.isContiguous()) {
      throw new LLTMError("INVALID_ARGUMENT", `${name}: parameter '${p.name}' and its gradient must be contiguous`);
    }
  }
}

function buffers(params: readonly Parameter[]): Tensor[] {
  return params.map((p) => Tensor.zeros(p.value.shape, { dtype: p.value.dtype, device: p.value.device }));
}

export interface SGDOptions {
  lr: number;
  momentum?: number;
}

export class SGD implements Disposable {
  private readonly momentumBuffers: Tensor[] | undefined;
  readonly lr: number;
  readonly momentum: number;
  private readonly params: readonly Parameter[];

  constructor(params: readonly Parameter[], options: SGDOptions) {
    checkParameters("SGD", params);
    this.params = params;
    this.lr = options.lr;
    this.momentum = options.momentum ?? 0;
    this.momentumBuffers = this.momentum === 0 ? undefined : buffers(params);
  }

  /** param -= lr * (momentum buffer or gradient), for every parameter. */
  step(): void {
    this.params.forEach((p, i) => {
      native.sgdStep("SGD.step", p.value, p.grad, this.momentumBuffers?.[i], this.lr, this.momentum);
    });
  }

  dispose(): void {
    for (const b of this.momentumBuffers ?? []) b.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

export interface AdamOptions {
  lr?: number;
  betas?: readonly [number, number];
  eps?: number;
}

export class Adam implements Disposable {
  private readonly expAvg: Tensor[];
  private readonly expAvgSq: Tensor[];
  private steps = 0;
  readonly lr: number;
  readonly betas: readonly [number, number];
  readonly eps: number;
  private readonly params: readonly Parameter[];

  constructor(params: readonly Parameter[], options: AdamOptions = {}) {
    checkParameters("Adam", params);
    this.params = params;
    this.lr = options.lr ?? 1e-3;
    this.betas = options.betas ?? [0.9, 0.999];
    this.eps = options.eps ?? 1e-8;
    this.expAvg = buffers(params);
    this.expAvgSq = buffers(params);
  }

  step(): void {
    this.steps++;
    this.params.forEach((p, i) => {
      native.adamStep(
        "Adam.step", p.value, p.grad, this.expAvg[i]!, this.expAvgSq[i]!, this.lr, this.betas[0], this.betas[1], this.eps,
        this.steps,
      );
    });
  }

  dispose(): void {
    for (const b of [...this.expAvg, ...this.expAvgSq]) b.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
