/** linear and its gradients in plain float64 loops: the reference of the LINEAR and LINEAR_BACKWARD ops. */
import type { Tensor } from "../ts/index.ts";

/** A tensor's values as float64, with its last dimension as the columns and the rest flattened to rows. */
function rows(t: Tensor): { data: Float64Array; rows: number; cols: number } {
  const cols = t.shape[t.ndim - 1]!;
  return { data: Float64Array.from(t.toTypedArray()), rows: t.numel / cols, cols };
}

/** y = x Wᵀ + bias over the rows of x [..., K], weight [M, K], bias [M]. */
export function referenceLinear(x: Tensor, weight: Tensor, bias?: Tensor): Float64Array {
  const X = rows(x), W = rows(weight), b = bias ? Float64Array.from(bias.toTypedArray()) : undefined;
  const N = X.rows, K = X.cols, M = W.rows;
  const y = new Float64Array(N * M);
  for (let n = 0; n < N; n++) {
    for (let m = 0; m < M; m++) {
      let sum = b ? b[m]! : 0;
      for (let k = 0; k < K; k++) sum += X.data[n * K + k]! * W.data[m * K + k]!;
      y[n * M + m] = sum;
    }
  }
  return y;
}

/** dX = gradY W, dWeight = gradYᵀ x, dBias = the column sums of gradY. */
export function referenceLinearBackward(gradY: Tensor, x: Tensor, weight: Tensor): { dX: Float64Array; dWeight: Float64Array; dBias: Float64Array } {
  const G = rows(gradY), X = rows(x), W = rows(weight);
  const N = G.rows, M = G.cols, K = X.cols;
  const dX = new Float64Array(N * K), dWeight = new Float64Array(M * K), dBias = new Float64Array(M);
  for (let n = 0; n < N; n++) {
    for (let m = 0; m < M; m++) {
      const g = G.data[n * M + m]!;
      dBias[m] = dBias[m]! + g;
      for (let k = 0; k < K; k++) {
        dX[n * K + k] = dX[n * K + k]! + g * W.data[m * K + k]!;
        dWeight[m * K + k] = dWeight[m * K + k]! + g * X.data[n * K + k]!;
      }
    }
  }
  return { dX, dWeight, dBias };
}
