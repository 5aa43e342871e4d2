/**
 * Writes a checkpoint of a seeded LLTM and, beside it, inputs and this
 * library's outputs for them, so that scripts/torch_interop.py can check that
 * PyTorch's safetensors reads the checkpoint and PyTorch's LLTM gives the same outputs.
 *
 * usage: bun scripts/interop.ts [--device cpu|cuda] [--out out]
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";

import { type DeviceLike, LLTM, saveCheckpoint, Tensor } from "../ts/index.ts";
import { parseArgs } from "./args.ts";

const usage = "usage: bun scripts/interop.ts [--device cpu|cuda] [--out out]";
const args = parseArgs(process.argv.slice(2), { values: ["--device", "--out"] }, usage);
const device = (args.values.get("--device") ?? "cpu") as DeviceLike;
const out = args.values.get("--out") ?? "out";
mkdirSync(out, { recursive: true });

const B = 5, F = 7, S = 11;
using model = new LLTM(F, S, { dtype: "float64", device, seed: 42 });
model.save(join(out, "interop_model.safetensors"));
using input = Tensor.randn([B, F], { dtype: "float64", device, seed: 1 });
using h = Tensor.randn([B, S], { dtype: "float64", device, seed: 2 });
using c = Tensor.randn([B, S], { dtype: "float64", device, seed: 3 });
using step = model.forward(input, [h, c]);
saveCheckpoint(join(out, "interop_io.safetensors"), { input, old_h: h, old_cell: c, new_h: step.newH, new_cell: step.newCell });
console.log(`wrote ${join(out, "interop_model.safetensors")} and ${join(out, "interop_io.safetensors")}`);
