/**
 * Compares the native op with the float64 TypeScript reference, as the
 * tutorial's check.py compares its implementations, in float32 and float64.
 *
 * usage: bun scripts/check.ts forward backward [--cuda] [-v] [-b 3] [-f 17] [-s 5]
 */
import { lltmBackward, referenceBackward, referenceForward, relativeError, Tensor } from "../ts/index.ts";
import { intArg, parseArgs } from "./args.ts";
import { forward, workload } from "./workload.ts";

const usage = "usage: bun scripts/check.ts forward backward [--cuda] [-v] [-b 3] [-f 17] [-s 5]";
const args = parseArgs(process.argv.slice(2), { values: ["-b", "-f", "-s"], flags: ["--cuda", "-v"], positionals: true }, usage);
const passes = args.positional.length ? args.positional : ["forward", "backward"];
const sizes = { batch: intArg(args, "-b", 3, usage), features: intArg(args, "-f", 17, usage), state: intArg(args, "-s", 5, usage) };
const device = args.flags.has("--cuda") ? "cuda" : "cpu";
const verbose = args.flags.has("-v");
const tolerance = { float32: 1e-5, float64: 1e-12 };

let failed = false;
for (const dtype of ["float32", "float64"] as const) {
  using w = workload(sizes, dtype, device);
  using fw = forward(w);
  const report = (pass: string, errors: [string, number][]) => {
    const worst = Math.max(...errors.map(([, e]) => e));
    const ok = worst <= tolerance[dtype];
    failed ||= !ok;
    console.log(`${pass} ${dtype}: reference vs. ${device}: max relative error ${worst.toExponential(2)} ... ${ok ? "Ok" : "FAILED"}`);
    if (verbose) for (const [name, e] of errors) console.log(`    ${name}: ${e.toExponential(2)}`);
  };
  if (passes.includes("forward")) {
    const ref = referenceForward(w.input, w.weights, w.bias, w.oldH, w.oldCell);
    const names = ["newH", "newCell", "inputGate", "outputGate", "candidateCell", "X", "gateWeights"] as const;
    report("Forward", names.map((n) => [n, relativeError(fw[n].toTypedArray(), ref[n].data)]));
  }
  if (passes.includes("backward")) {
    using gradH = Tensor.randn(fw.newH.shape, { dtype, device, seed: 6 });
    using gradCell = Tensor.randn(fw.newCell.shape, { dtype, device, seed: 7 });
    const saved = [fw.newCell, fw.inputGate, fw.outputGate, fw.candidateCell, fw.X, fw.gateWeights, w.weights] as const;
    using g = lltmBackward(gradH, gradCell, ...saved);
    const ref = referenceBackward(gradH, gradCell, ...saved);
    const names = ["dOldH", "dInput", "dWeights", "dBias", "dOldCell"] as const;
    report("Backward", names.map((n) => [n, relativeError(g[n].toTypedArray(), ref[n].data)]));
  }
}
process.exit(failed ? 1 : 0);
