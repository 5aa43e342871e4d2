/**
 * A small language model on CUDA (embedding, two stacked LLTMs, a linear head, cross-entropy, clipping, capturable
 * AdamW under a schedule) trained eagerly and through a captured step side by side (tests/compile_step.test.ts, and
 * tests/wavefront_child.ts with the stacked layers as a wavefront).
 */
import { AdamW, clipGradNorm_, compileStep, CosineAnnealingLR, crossEntropy, Embedding, Linear, LLTM, noGrad, Tensor } from "../ts/index.ts";
import { assert, assertEquals } from "./harness.ts";

const values = (t: Tensor) => Array.from(t.toTypedArray() as ArrayLike<number>);

/** A small language model and its training step, in float64 so that captured and eager agree to rounding. */
function languageModel(seed: number, fused = false) {
  const o = { device: "cuda", dtype: "float64", seed } as const;
  const embed = new Embedding(11, 6, o), lltm = new LLTM(6, 8, { ...o, layers: 2 }), head = new Linear(8, 11, o);
  const params = [...embed.namedParameters("embed."), ...lltm.namedParameters("lltm."), ...head.namedParameters("head.")];
  const optimizer = new AdamW(params, { lr: 0.02, weightDecay: 0.1, capturable: true, fused });
  const schedule = new CosineAnnealingLR(optimizer, { tMax: 6, etaMin: 0.001 });
  const losses = Tensor.zeros([1], { device: "cuda", dtype: "float64" });
  const step = (ids: Tensor, targets: Tensor) => {
    {
      using x = embed.forward(ids);
      using out = lltm.forward(x);
      using logits = head.forward(out.output);
      using flat = logits.reshape([5 * 3, 11]);
      using flatTargets = targets.reshape([15]);
      using loss = crossEntropy(flat, flatTargets);
      loss.backward();
      noGrad(() => losses.add_(loss));
    }
    clipGradNorm_(params.map(([, t]) => t), 0.5).dispose();
    optimizer.step();
    optimizer.zeroGrad();
  };
  const dispose = () => {
    for (const m of [embed, lltm, head, optimizer, losses]) m.dispose();
  };
  return { params, optimizer, schedule, losses, step, dispose };
}

function batch(i: number): [Tensor, Tensor] {
  const ids = Int32Array.from({ length: 15 }, (_, k) => (k * 7 + i * 3) % 11);
  const targets = Int32Array.from({ length: 15 }, (_, k) => (k * 5 + i) % 11);
  return [Tensor.fromTypedArray(ids, [5, 3]), Tensor.fromTypedArray(targets, [5, 3])];
}

/**
 * Trains the model eagerly and, beside it, through compileStep (captured once, replayed), 7 steps on the same
 * batches, and checks that the loss sums and every parameter agree (float64: to rounding).
 */
export function checkCapturedTraining(fused: boolean): void {
  const eager = languageModel(1), captured = languageModel(1, fused);
  try {
    assertEquals(captured.optimizer.flatBuffers.length, fused ? 1 : 0);
    using step = compileStep(captured.step, { device: "cuda", warmup: 2 });
    for (let i = 0; i < 7; i++) {
      const [ids, targets] = batch(i);
      using devIds = ids.to("cuda"), devTargets = targets.to("cuda");
      eager.step(devIds, devTargets);
      step(ids, targets);
      eager.schedule.step();
      captured.schedule.step();
      ids.dispose();
      targets.dispose();
      const want = eager.losses.item(), got = captured.losses.item();
      assert(Math.abs(got - want) <= 1e-10 * Math.abs(want), `step ${i}: loss sum ${got} vs ${want}`);
    }
    assertEquals(step.captured, true);
    eager.params.forEach(([name, p], k) => {
      const q = captured.params[k]![1];
      const a = values(p), b = values(q);
      a.forEach((v, j) => assert(Math.abs(b[j]! - v) <= 1e-10 * Math.max(1, Math.abs(v)), `${name}[${j}]: ${b[j]} vs ${v}`));
    });
  } finally {
    eager.dispose();
    captured.dispose();
  }
}
