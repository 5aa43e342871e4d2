/**
 * The main job's character model (embedding, two LLTM layers, linear head,
 * cross-entropy) against PyTorch with the same weights, exchanged through
 * safetensors: logits, loss and every parameter's gradient, in float64 and
 * float32 (scripts/charlm_interop.ts and scripts/torch_charlm_check.py). Where
 * PyTorch is not installed, the same model against its float64 TypeScript
 * reference (tests/charlm_reference.ts): the logits and loss, and the
 * gradients against the reference's central differences.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

import fc from "fast-check";

import { crossEntropy, relativeError, Tensor } from "../ts/index.ts";
import { interopTolerance, writeCharLMInterop } from "../scripts/charlm_interop.ts";
import { CharLM } from "../scripts/charlm_model.ts";
import { charLMReference, type Parameters } from "./charlm_reference.ts";
import { assert, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

// The first Python that has PyTorch and safetensors (the one on the PATH may be a virtual environment without them).
const candidates = ["python3", "/usr/bin/python3"];
const python = candidates.find((p) => spawnSync(p, ["-c", "import torch, safetensors"], { encoding: "utf8" }).status === 0);
const torchSkip = python !== undefined ? false : `PyTorch comparison: none of ${candidates.join(", ")} can import torch and safetensors`;
const dir = tempDir("lltm-charlm-torch-");

test("the char LM's logits, loss and gradients match PyTorch's LLTM model with the same weights (float64, float32)", () => {
  for (const dtype of ["float64", "float32"] as const) writeCharLMInterop(dir, dtype);
  const check = fileURLToPath(new URL("../scripts/torch_charlm_check.py", import.meta.url));
  const r = spawnSync(python!, [check, dir], { encoding: "utf8", timeout: 120_000 });
  const results = r.stdout.trim().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as {
    dtype: "float64" | "float32"; max_error: number; worst: string; errors: Record<string, number>;
  });
  assert(results.length === 2, `torch_charlm_check.py printed ${results.length} results (status ${r.status}): ${r.stdout}${r.stderr}`);
  for (const result of results) {
    // The logits, the loss, and the gradients of all 7 parameters (embedding, 2 per LLTM layer, 2 of the head).
    assert(Object.keys(result.errors).length === 2 + 7, `${result.dtype}: compared ${Object.keys(result.errors).join(", ")}`);
    assert(
      result.max_error <= interopTolerance[result.dtype],
      `${result.dtype}: ${result.worst} differs from PyTorch's by ${result.max_error} (tolerance ${interopTolerance[result.dtype]})`,
    );
  }
  assert(r.status === 0, `torch_charlm_check.py exited with ${r.status}: ${r.stderr}`);
}, { skip: torchSkip });

const sizes = fc.record({
  vocabulary: fc.integer({ min: 2, max: 7 }),
  embedding: fc.integer({ min: 1, max: 4 }),
  stateSize: fc.integer({ min: 1, max: 5 }),
  layers: fc.integer({ min: 1, max: 3 }),
  T: fc.integer({ min: 1, max: 4 }),
  B: fc.integer({ min: 1, max: 3 }),
  seed: fc.integer({ min: 0, max: 1000 }),
});

test("the char LM matches its float64 TypeScript reference: logits, loss, and gradients against central differences", () => {
  fc.assert(
    fc.property(sizes, ({ vocabulary: V, embedding, stateSize, layers, T, B, seed }) => {
      const config = { vocabulary: "abcdefg".slice(0, V), embedding, stateSize, layers, dropout: 0 };
      using model = new CharLM(config, { seed }).to("float64");
      const ids = Int32Array.from({ length: T * B }, (_, i) => (i * 5 + seed) % V);
      const targets = Int32Array.from({ length: T * B }, (_, i) => (i * 3 + seed + 1) % V);
      using x = Tensor.fromTypedArray(ids, [T, B]);
      using y = Tensor.fromTypedArray(targets, [T * B]);
      const { logits, state } = model.forward(x);
      state.h.dispose();
      state.c.dispose();
      using flat = logits.reshape([T * B, V]);
      const logitValues = logits.toTypedArray();
      logits.dispose();
      using loss = crossEntropy(flat, y);
      loss.backward();

      const params: Parameters = {};
      for (const [name, p] of model.namedParameters()) params[name] = Float64Array.from(p.toTypedArray());
      const shape = { vocabulary: V, embedding, stateSize, layers };
      const reference = charLMReference(params, shape, ids, targets, T, B);
      assert(relativeError(logitValues, reference.logits) <= 1e-12, `logits: ${relativeError(logitValues, reference.logits)}`);
      assert(Math.abs(loss.item() - reference.loss) <= 1e-12 * Math.abs(reference.loss), `loss ${loss.item()} vs ${reference.loss}`);

      const eps = 1e-6;
      for (const [name, p] of model.namedParameters()) {
        const values = params[name]!;
        const numeric = values.map((v, i) => {
          values[i] = v + eps;
          const up = charLMReference(params, shape, ids, targets, T, B).loss;
          values[i] = v - eps;
          const down = charLMReference(params, shape, ids, targets, T, B).loss;
          values[i] = v;
          return (up - down) / (2 * eps);
        });
        const analytic = p.grad!.toTypedArray();
        // Central differences are exact to eps² ≈ 1e-12 in the loss's curvature, plus the loss's rounding / eps ≈ 1e-10.
        const scale = Math.max(1e-3, ...numeric.map(Math.abs));
        const worst = Math.max(...analytic.map((g, i) => Math.abs(g - numeric[i]!) / scale));
        assert(worst <= 1e-6, `${name}: gradient differs from central differences by ${worst} (relative to ${scale})`);
      }
    }),
    { numRuns: 12 },
  );
});
