/**
 * A loop of N 1×1×1 float32 lltmForward calls, each result disposed, and
 * nothing else: the whole cost of a call (JavaScript, the runtime's FFI and
 * the C entry) for an instruction counter, which the VM's load does not move
 * as it moves the wall clock. Two runs with different N give one call's
 * instructions as the difference over the extra calls:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null bun scripts/call_cost.ts --calls 100000
 *   (then --calls 300000; the same under `deno run -A` and `node --experimental-ffi`)
 *
 * LLTM_ROOT points it at another checkout's ts/ (a previous tree) to compare.
 *
 * usage: bun scripts/call_cost.ts [--calls 100000]
 */
import { intArg, parseArgs } from "./args.ts";

const usage = "usage: bun scripts/call_cost.ts [--calls 100000]";
const args = parseArgs(process.argv.slice(2), { values: ["--calls"] }, usage);
const calls = intArg(args, "--calls", 100_000, usage);
const root = process.env.LLTM_ROOT ?? new URL("..", import.meta.url).pathname;
const { Tensor, lltmForward } = await import(`${root.replace(/\/$/, "")}/ts/index.ts`) as typeof import("../ts/index.ts");

const o = { dtype: "float32" } as const;
using x = Tensor.randn([1, 1], o), w = Tensor.randn([3, 2], o), b = Tensor.randn([3], o);
using h = Tensor.randn([1, 1], o), c = Tensor.randn([1, 1], o);
for (let i = 0; i < calls; i++) lltmForward(x, w, b, h, c).dispose();
