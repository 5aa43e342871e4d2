/**
 * Finite-difference check of lltmBackward, as the tutorial's grad_check.py:
 * in float64, the loss sum(newH * gradH) + sum(newCell * gradCell) is
 * differentiated numerically by central differences for every element of
 * every input, and compared with the analytic gradients.
 */
import type { DeviceLike } from "./device.ts";
import { lltmBackward, lltmForward } from "./ops/lltm.ts";
import { relativeError } from "./reference.ts";
import { Tensor } from "./tensor.ts";

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

  const errors = {} as GradcheckResult["errors"];
  for (const n of names) {
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
  return { errors, maxError: Math.max(...Object.values(errors)) };
}
