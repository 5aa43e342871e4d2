/**
 * The main job's character model (scripts/charlm_model.ts) in plain float64
 * TypeScript, from the LLTM reference's one-step formulas: the logits and the
 * mean cross-entropy for a batch, from the parameters by their names. What
 * the native model is checked against where PyTorch is not installed.
 */
import { matrix, type Matrix, referenceForwardMatrices } from "../ts/reference.ts";

export type Parameters = Record<string, Float64Array<ArrayBuffer>>;

export interface CharLMShape {
  vocabulary: number;
  embedding: number;
  stateSize: number;
  layers: number;
}

/** ids and targets [T, B] (time-major, as the model takes them) -> logits [T·B, V] and the mean cross-entropy. */
export function charLMReference(
  p: Parameters, shape: CharLMShape, ids: Int32Array, targets: Int32Array, T: number, B: number,
): { logits: Float64Array; loss: number } {
  const { vocabulary: V, embedding: E, stateSize: S, layers } = shape;
  const at = (name: string): Float64Array<ArrayBuffer> => {
    const v = p[name];
    if (v === undefined) throw new Error(`no parameter '${name}'`);
    return v;
  };
  // Each step's input, [B, F] per step, starting from the embedding's rows.
  let inputs: Matrix[] = Array.from({ length: T }, (_, t) => {
    const m = matrix(B, E);
    for (let b = 0; b < B; b++) m.data.set(at("embed.weight").subarray(ids[t * B + b]! * E, (ids[t * B + b]! + 1) * E), b * E);
    return m;
  });
  for (let l = 0; l < layers; l++) {
    const F = inputs[0]!.cols;
    const weights = matrix(3 * S, S + F, at(`lltm.layers.${l}.weights`));
    const bias = matrix(1, 3 * S, at(`lltm.layers.${l}.bias`));
    let h = matrix(B, S), c = matrix(B, S);
    inputs = inputs.map((x) => {
      const step = referenceForwardMatrices(x, weights, bias, h, c);
      h = step.newH;
      c = step.newCell;
      return h;
    });
  }
  const head = at("head.weight"), headBias = at("head.bias");
  const logits = new Float64Array(T * B * V);
  let loss = 0;
  for (let t = 0; t < T; t++) {
    for (let b = 0; b < B; b++) {
      const row = (t * B + b) * V, h = inputs[t]!.data.subarray(b * S, (b + 1) * S);
      let max = -Infinity;
      for (let v = 0; v < V; v++) {
        let sum = headBias[v]!;
        for (let k = 0; k < S; k++) sum += head[v * S + k]! * h[k]!;
        logits[row + v] = sum;
        max = Math.max(max, sum);
      }
      let z = 0;
      for (let v = 0; v < V; v++) z += Math.exp(logits[row + v]! - max);
      loss += max + Math.log(z) - logits[row + targets[t * B + b]!]!;
    }
  }
  return { logits, loss: loss / (T * B) };
}
