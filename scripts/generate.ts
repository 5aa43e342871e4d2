/**
 * Samples text from a character model checkpoint written by the main job
 * (scripts/charlm.ts), under Bun, Deno or Node:
 *
 *   bun scripts/generate.ts --checkpoint out/charlm.safetensors --prompt "And God said" --temperature 0.8
 *   deno run --allow-ffi --allow-read --allow-env scripts/generate.ts --checkpoint ...
 *   node --experimental-ffi scripts/generate.ts --checkpoint ...
 *
 * usage: generate.ts --checkpoint FILE [--prompt TEXT] [--temperature 0.8] [--length 400] [--seed 0] [--device cpu|cuda]
 */
import { cuda, type DeviceLike } from "../ts/index.ts";
import { fail, intArg, parseArgs } from "./args.ts";
import { CharLM } from "./charlm_model.ts";
import { sample } from "./charlm_sample.ts";

const usage = "usage: generate.ts --checkpoint FILE [--prompt TEXT] [--temperature 0.8] [--length 400] [--seed 0] [--device cpu|cuda]";
const argv = typeof process !== "undefined" ? process.argv.slice(2) : [];
const args = parseArgs(argv, { values: ["--checkpoint", "--prompt", "--temperature", "--length", "--seed", "--device"] }, usage);
const path = args.values.get("--checkpoint");
if (path === undefined) fail("--checkpoint is required", usage);
const temperature = Number(args.values.get("--temperature") ?? 0.8);
if (!(temperature > 0)) fail(`--temperature must be positive, got ${args.values.get("--temperature")}`, usage);
const length = intArg(args, "--length", 400, usage);
const seed = Number(args.values.get("--seed") ?? 0);
if (!Number.isSafeInteger(seed) || seed < 0) fail(`--seed must be an integer ≥ 0, got ${args.values.get("--seed")}`, usage);
const device = (args.values.get("--device") ?? (cuda.isAvailable() ? "cuda" : "cpu")) as DeviceLike;

using model = CharLM.fromCheckpoint(path, device);
console.log(sample(model, args.values.get("--prompt") ?? "And God said", length, { temperature, seed }));
