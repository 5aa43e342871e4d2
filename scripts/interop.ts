/**
 * Writes a checkpoint of a seeded LLTM and, beside it, inputs and this
 * library's outputs for them, so that scripts/torch_interop.py can check that
 * PyTorch's safetensors reads the checkpoint and PyTorch's LLTM gives the same
 * outputs; and bfloat16 and float16 tensors with their values in float32, for
 * PyTorch to read. With --read, checks instead the bfloat16 and float16
 * tensors that torch_interop.py wrote (torch_half.safetensors) against their
 * float32 values, bit for bit. It also writes the main job's character model
 * with a batch and lltm's results for it (scripts/charlm_interop.ts), which
 * torch_interop.py checks with scripts/torch_charlm_check.py.
 *
 * usage: bun scripts/interop.ts [--device cpu|cuda] [--out out] [--read]
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";

import { type DeviceLike, LLTMLayer, loadCheckpoint, saveCheckpoint, Tensor } from "../ts/index.ts";
import { parseArgs } from "./args.ts";
import { writeCharLMInterop } from "./charlm_interop.ts";

const usage = "usage: bun scripts/interop.ts [--device cpu|cuda] [--out out] [--read]";
const args = parseArgs(process.argv.slice(2), { values: ["--device", "--out"], flags: ["--read"] }, usage);
const device = (args.values.get("--device") ?? "cpu") as DeviceLike;
const out = args.values.get("--out") ?? "out";
const halves = ["bfloat16", "float16"] as const;

if (args.flags.has("--read")) {
  const path = join(out, "torch_half.safetensors");
  const { tensors } = loadCheckpoint(path, { device });
  let failed = false;
  for (const dtype of halves) {
    const half = tensors[dtype], values = tensors[`${dtype}_values`];
    if (half?.dtype !== dtype || values?.dtype !== "float32") throw new Error(`${path}: '${dtype}' is ${half?.dtype}, '${dtype}_values' ${values?.dtype}`);
    const a = half.toTypedArray(), b = values.toTypedArray();
    const differ = a.findIndex((v, i) => !Object.is(v, b[i]));
    console.log(`${dtype} from PyTorch: ${a.length} values, ${differ < 0 ? "all equal to PyTorch's float32 values" : `element ${differ} is ${a[differ]}, PyTorch says ${b[differ]}`}`);
    failed ||= differ >= 0;
  }
  for (const t of Object.values(tensors)) t.dispose();
  process.exit(failed ? 1 : 0);
}

mkdirSync(out, { recursive: true });
const B = 5, F = 7, S = 11;
using model = new LLTMLayer(F, S, { dtype: "float64", device, seed: 42 });
model.save(join(out, "interop_model.safetensors"));
using input = Tensor.randn([B, F], { dtype: "float64", device, seed: 1 });
using h = Tensor.randn([B, S], { dtype: "float64", device, seed: 2 });
using c = Tensor.randn([B, S], { dtype: "float64", device, seed: 3 });
using step = model.forward(input, [h, c]);
saveCheckpoint(join(out, "interop_io.safetensors"), { input, old_h: h, old_cell: c, new_h: step.newH, new_cell: step.newCell });

// Values over many binades, subnormals and the largest finite ones included.
using wide = Tensor.fromArray([[1, -2.5, 1e-3, 3e4, 65504, 1e-6], [1e-40, -7.5e-8, 0.1, 1 / 3, -0, 123.456]], { device });
const half: Record<string, Tensor> = {};
for (const dtype of halves) {
  half[dtype] = wide.cast(dtype);
  half[`${dtype}_values`] = half[dtype]!.cast("float32");
}
saveCheckpoint(join(out, "interop_half.safetensors"), half);
for (const t of Object.values(half)) t.dispose();
const charlm = (["float64", "float32"] as const).flatMap((dtype) => Object.values(writeCharLMInterop(out, dtype, device)));
console.log(`wrote ${[...["interop_model", "interop_io", "interop_half"].map((n) => join(out, `${n}.safetensors`)), ...charlm].join(", ")}`);
