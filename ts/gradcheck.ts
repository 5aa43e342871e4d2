/**
 * Finite-difference check of lltmBackward, as the tutorial's grad_check.py:
 * in float64, the loss sum(newH * gradH) + sum(newCell * gradCell) is
 * differentiated numerically by central differences for every element of
 * every input, and compared with the analytic gradients.
 */
import type { DeviceLike } from "./device.ts";
import { LLTMLayer } from "./module.ts";
import { lltmBackward, lltmForward } from "./ops/lltm.ts";
import { relativeError } from "./reference.ts";
import { Tensor } from "./tensor/index.ts";

export interface GradcheckOptions {
  batch?: number;
  features?: number;
  state?: number;
  device?: DeviceLike;
  seed?: number;
  /** Step of the central difference. */
  eps?: number;
}

export interface GradcheckResult {
  /** Relative error (Frobenius norm) of each gradient against the numerical one. */
  errors: Record<"input" | "weights" | "bias" | "oldH" | "oldCell", number>;
  maxError: number;
}

export function gradcheck(options: GradcheckOptions = {}): GradcheckResult {
  const B = options.batch ?? 3, F = options.features ?? 4, S = options.state ?? 5;
  const device = options.device ?? "cpu", seed = options.seed ?? 0, eps = options.eps ?? 1e-6;
  const opts = (k: number) => ({ dtype: "float64" as const, seed: seed * 16 + k });
  const hosts = {
    input: Tensor.randn([B, F], opts(1)),
    weights: Tensor.randn([3 * S, S + F], opts(2)),
    bias: Tensor.randn([3 * S], opts(3)),
    oldH: Tensor.randn([B, S], opts(4)),
    oldCell: Tensor.randn([B, S], opts(5)),
  };
  const names = Object.keys(hosts) as (keyof typeof hosts)[];
  const values = Object.fromEntries(names.map((n) => [n, hosts[n].toTypedArray() as Float64Array])) as Record<
    keyof typeof hosts,
    Float64Array
  >;
  for (const t of Object.values(hosts)) t.dispose();
  using gradH = Tensor.randn([B, S], { ...opts(6), device });
  using gradCell = Tensor.randn([B, S], { ...opts(7), device });
  const gh = gradH.toTypedArray(), gc = gradCell.toTypedArray();
  const shapes = { input: [B, F], weights: [3 * S, S + F], bias: [3 * S], oldH: [B, S], oldCell: [B, S] };

  const upload = () => names.map((n) => Tensor.fromTypedArray(values[n], shapes[n], { device }));
  const loss = (): number => {
    const args = upload();
    try {
      using out = lltmForward(args[0]!, args[1]!, args[2]!, args[3]!, args[4]!);
      const h = out.newH.toTypedArray(), c = out.newCell.toTypedArray();
      let sum = 0;
      for (let i = 0; i < h.length; i++) sum += h[i]! * gh[i]! + c[i]! * gc[i]!;
      return sum;
    } finally {
      for (const t of args) t.dispose();
    }
  };

  const args = upload();
  let analytic: Record<keyof typeof hosts, Float64Array>;
  try {
    using fw = lltmForward(args[0]!, args[1]!, args[2]!, args[3]!, args[4]!);
    using g = lltmBackward(gradH, gradCell, fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, args[1]!);
    analytic = {
      input: g.dInput.toTypedArray() as Float64Array,
      weights: g.dWeights.toTypedArray() as Float64Array,
      bias: g.dBias.toTypedArray() as Float64Array,
      oldH: g.dOldH.toTypedArray() as Float64Array,
      oldCell: g.dOldCell.toTypedArray() as Float64Array,
    };
  } finally {
    for (const t of args) t.dispose();
  }

  const errors = compareWithCentralDifferences(values, analytic, loss, eps);
  return { errors, maxError: Math.max(...Object.values(errors)) };
}

export interface SequenceGradcheckOptions extends GradcheckOptions {
  /** Time steps. */
  steps?: number;
}

export interface SequenceGradcheckResult {
  errors: Record<"inputs" | "weights" | "bias" | "h0" | "c0", number>;
  maxError: number;
}

/**
 * Backpropagation through time against central finite differences, in
 * float64: the loss is sum_t <h_t, gOut_t> + <h_T, gH> + <c_T, gC>.
 */
export function sequenceGradcheck(options: SequenceGradcheckOptions = {}): SequenceGradcheckResult {
  const T = options.steps ?? 8, B = options.batch ?? 2, F = options.features ?? 2, S = options.state ?? 3;
  const device = options.device ?? "cpu", seed = options.seed ?? 0, eps = options.eps ?? 1e-6;
  const o = (k: number) => ({ dtype: "float64" as const, seed: seed * 16 + k });
  const host = (shape: number[], k: number) => {
    using t = Tensor.randn(shape, o(k));
    return t.toTypedArray() as Float64Array;
  };
  const shapes = { inputs: [T, B, F], weights: [3 * S, S + F], bias: [3 * S], h0: [B, S], c0: [B, S] };
  const names = Object.keys(shapes) as (keyof typeof shapes)[];
  const values = Object.fromEntries(names.map((n, k) => [n, host(shapes[n], k + 1)])) as Record<keyof typeof shapes, Float64Array>;
  const gOut = host([T, B, S], 8), gH = host([B, S], 9), gC = host([B, S], 10);
  using module = new LLTMLayer(F, S, { dtype: "float64", device });
  const upload = (n: keyof typeof shapes) => Tensor.fromTypedArray(values[n], shapes[n], { device });

  const run = (withBackward: boolean) => {
    using w = upload("weights");
    using b = upload("bias");
    module.weights.copyFrom(w);
    module.bias.copyFrom(b);
    using inputs = upload("inputs");
    using h0 = upload("h0");
    using c0 = upload("c0");
    using seq = module.sequence(inputs, [h0, c0]);
    const out = seq.outputs.toTypedArray(), h = seq.h.toTypedArray(), c = seq.c.toTypedArray();
    let loss = 0;
    for (let i = 0; i < out.length; i++) loss += out[i]! * gOut[i]!;
    for (let i = 0; i < h.length; i++) loss += h[i]! * gH[i]! + c[i]! * gC[i]!;
    if (!withBackward) return { loss };
    module.zeroGrad();
    using go = Tensor.fromTypedArray(gOut, [T, B, S], { device });
    using gh = Tensor.fromTypedArray(gH, [B, S], { device });
    using gc = Tensor.fromTypedArray(gC, [B, S], { device });
    using g = seq.backward(go, [gh, gc]);
    const analytic = {
      inputs: g.dInputs.toTypedArray(), h0: g.dH0.toTypedArray(), c0: g.dC0.toTypedArray(),
      weights: module.weightsGrad.toTypedArray(), bias: module.biasGrad.toTypedArray(),
    };
    return { loss, analytic };
  };

  const { analytic } = run(true);
  const errors = compareWithCentralDifferences(values, analytic!, () => run(false).loss, eps);
  return { errors, maxError: Math.max(...Object.values(errors)) };
}

/**
 * For every element of every input in `values`: (loss(x + eps) - loss(x - eps)) / 2eps,
 * changing `values` in place and restoring it; returns each input's relative
 * error between `analytic` and these numerical gradients.
 */
function compareWithCentralDifferences<K extends string>(
  values: Record<K, Float64Array>, analytic: Record<K, ArrayLike<number>>, loss: () => number, eps: number,
): Record<K, number> {
  const errors = {} as Record<K, number>;
  for (const n of Object.keys(values) as K[]) {
    const v = values[n];
    const numeric = new Float64Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i]!;
      v[i] = x + eps;
      const up = loss();
      v[i] = x - eps;
      const down = loss();
      v[i] = x;
      numeric[i] = (up - down) / (2 * eps);
    }
    errors[n] = relativeError(analytic[n], numeric);
  }
  return errors;
}
