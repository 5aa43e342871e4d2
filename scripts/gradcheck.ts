/**
 * Checks lltmBackward against central finite differences in float64, as the
 * tutorial's grad_check.py does.
 *
 * usage: bun scripts/gradcheck.ts [--cuda] [-b 3] [-f 4] [-s 5] [--seed 0]
 */
import { gradcheck } from "../ts/index.ts";
import { intArg, parseArgs } from "./args.ts";

const usage = "usage: bun scripts/gradcheck.ts [--cuda] [-b 3] [-f 4] [-s 5] [--seed 0]";
const args = parseArgs(process.argv.slice(2), { values: ["-b", "-f", "-s", "--seed"], flags: ["--cuda"] }, usage);
const device = args.flags.has("--cuda") ? "cuda" : "cpu";
const { errors, maxError } = gradcheck({
  batch: intArg(args, "-b", 3, usage),
  features: intArg(args, "-f", 4, usage),
  state: intArg(args, "-s", 5, usage),
  seed: Number(args.values.get("--seed") ?? 0),
  device,
});
for (const [name, err] of Object.entries(errors)) console.log(`  d${name}: relative error ${err.toExponential(2)}`);
if (maxError <= 1e-6) {
  console.log(`Ok (${device}, float64, finite differences)`);
} else {
  console.log(`FAILED: relative error ${maxError} > 1e-6`);
  process.exit(1);
}
