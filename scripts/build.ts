/**
 * Builds lib/liblltm (and lib/liblltm_cuda when a CUDA toolkit is found) with CMake.
 *
 * usage: bun scripts/build.ts [--cuda auto|on|off] [--debug] [--if-needed] [--clean]
 *   --if-needed  only configure when build/ has not been configured (the build itself is incremental)
 */
import { existsSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";

import { fail, parseArgs } from "./args.ts";
import { writeAbi } from "./gen-abi.ts";

const usage = "usage: bun scripts/build.ts [--cuda auto|on|off] [--debug] [--if-needed] [--clean]";
const args = parseArgs(process.argv.slice(2), { values: ["--cuda"], flags: ["--debug", "--if-needed", "--clean"] }, usage);
const cuda = (args.values.get("--cuda") ?? process.env.LLTM_CUDA ?? "auto").toUpperCase();
if (!["AUTO", "ON", "OFF"].includes(cuda)) fail(`--cuda must be auto, on or off, got ${cuda}`, usage);
const root = new URL("..", import.meta.url).pathname;
const buildDir = `${root}build`;

function run(cmd: string, argv: string[]): void {
  console.log(`$ ${cmd} ${argv.join(" ")}`);
  const r = spawnSync(cmd, argv, { stdio: "inherit", cwd: root });
  if (r.error) fail(`${cmd} could not run (${r.error.message}); install CMake >= 3.24 and a C++17 compiler`, usage);
  if (r.status !== 0) process.exit(r.status ?? 1);
}

writeAbi();
if (args.flags.has("--clean")) rmSync(buildDir, { recursive: true, force: true });
const ninja = spawnSync("ninja", ["--version"]).status === 0;
if (!args.flags.has("--if-needed") || !existsSync(`${buildDir}/CMakeCache.txt`)) {
  run("cmake", [
    "-S", root, "-B", buildDir,
    ...(ninja ? ["-G", "Ninja"] : []),
    `-DCMAKE_BUILD_TYPE=${args.flags.has("--debug") ? "Debug" : "Release"}`,
    `-DLLTM_CUDA=${cuda}`,
  ]);
}
run("cmake", ["--build", buildDir, "--parallel"]);
