/**
 * The main job's character model beside PyTorch: writes a small CharLM
 * (scripts/charlm_model.ts) as a safetensors checkpoint, a batch of ids and
 * targets, and what lltm computes for it (logits, the mean cross-entropy and
 * every parameter's gradient), for scripts/torch_charlm_check.py to load into
 * its PyTorch model (scripts/torch_lltm.py) and compare. The tolerance the
 * comparison applies travels in the file's metadata, so that it is stated
 * once, here.
 */
import { join } from "node:path";

import { crossEntropy, type DeviceLike, saveCheckpoint, Tensor } from "../ts/index.ts";
import { CharLM, type CharLMConfig, encode, vocabularyOf } from "./charlm_model.ts";

export type InteropDType = "float64" | "float32";

/**
 * The largest norm-wise relative difference, ‖lltm − torch‖ / ‖torch‖, of each compared tensor from PyTorch's
 * float64 result on the same weights: float64 agrees to rounding (the sums run in other orders over at most a
 * few hundred terms, 1e-15 each); float32 carries float32's rounding (6e-8 per operation) through T steps of
 * the recurrence, the products and the softmax, a few hundred ulps at these sizes.
 */
export const interopTolerance: Record<InteropDType, number> = { float64: 1e-10, float32: 1e-5 };

/** The model and batch compared: small enough for PyTorch's per-step Python loop, two layers as the main job. */
const text = "In the beginning God created the heaven and the earth. And the earth was without form, and void.";
const config: CharLMConfig = { vocabulary: vocabularyOf(text), embedding: 8, stateSize: 12, layers: 2, dropout: 0 };
const T = 9, B = 3;

/** Writes `<dir>/charlm_interop_<dtype>.safetensors` (model) and `..._io.safetensors` (batch, results); returns both paths. */
export function writeCharLMInterop(dir: string, dtype: InteropDType, device: DeviceLike = "cpu"): { model: string; io: string } {
  const paths = { model: join(dir, `charlm_interop_${dtype}.safetensors`), io: join(dir, `charlm_interop_${dtype}_io.safetensors`) };
  using model = new CharLM(config, { device, seed: 3 }).to(dtype);
  const ids = encode(text, config.vocabulary);
  using x = Tensor.fromTypedArray(ids.slice(0, T * B), [T, B], { device });
  using y = Tensor.fromTypedArray(ids.slice(1, T * B + 1), [T, B], { device });
  const { logits, state } = model.forward(x);
  state.h.dispose();
  state.c.dispose();
  using detached = logits.detach();
  using flat = logits.reshape([T * B, config.vocabulary.length]);
  logits.dispose();
  using flatTargets = y.reshape([T * B]);
  using loss = crossEntropy(flat, flatTargets);
  loss.backward();
  const tensors: Record<string, Tensor> = { ids: x, targets: y, logits: detached, loss };
  for (const [name, p] of model.namedParameters()) {
    if (p.grad === undefined) throw new Error(`${name} has no gradient after backward()`);
    tensors[`grad.${name}`] = p.grad;
  }
  model.save(paths.model, model.metadata());
  saveCheckpoint(paths.io, tensors, { dtype, tolerance: String(interopTolerance[dtype]) });
  return paths;
}
