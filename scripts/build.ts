/**
 * Builds lib/liblltm (and lib/liblltm_cuda when a CUDA toolkit is found) with CMake.
 *
 * usage: bun scripts/build.ts [--cuda auto|gpu|on|off] [--debug] [--if-needed] [--clean]
 *   --cuda auto  the CUDA backend wherever nvcc is found, GPU or not (the default: tests and CI keep it compiling)
 *   --cuda gpu   only where this machine also has an NVIDIA GPU to run it (`npm start`)
 *   --if-needed  only configure when build/ has not been configured with this --cuda (the build itself is incremental)
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";

import { gpuPresent } from "../ts/gpu.ts";
import { fail, parseArgs } from "./args.ts";
import { writeAbi } from "./gen-abi.ts";

const usage = "usage: bun scripts/build.ts [--cuda auto|gpu|on|off] [--debug] [--if-needed] [--clean]";
const args = parseArgs(process.argv.slice(2), { values: ["--cuda"], flags: ["--debug", "--if-needed", "--clean"] }, usage);
const asked = (args.values.get("--cuda") ?? process.env.LLTM_CUDA ?? "auto").toUpperCase();
if (!["AUTO", "GPU", "ON", "OFF"].includes(asked)) fail(`--cuda must be auto, gpu, on or off, got ${asked.toLowerCase()}`, usage);
const cuda = asked !== "GPU" ? asked : gpuPresent() ? "AUTO" : "OFF";
if (asked === "GPU" && cuda === "OFF") console.log("build: no NVIDIA GPU here, so no CUDA backend (--cuda auto builds it wherever nvcc is)");
const root = new URL("..", import.meta.url).pathname;
const buildDir = `${root}build`;
const cache = `${buildDir}/CMakeCache.txt`;

function run(cmd: string, argv: string[]): void {
  console.log(`$ ${cmd} ${argv.join(" ")}`);
  const r = spawnSync(cmd, argv, { stdio: "inherit", cwd: root });
  if (r.error) fail(`${cmd} could not run (${r.error.message}); install CMake >= 3.24 and a C++17 compiler`, usage);
  if (r.status !== 0) process.exit(r.status ?? 1);
}

/** The LLTM_CUDA that build/ was configured with, if it was. */
function configuredCuda(): string | undefined {
  if (!existsSync(cache)) return undefined;
  return /^LLTM_CUDA:STRING=(.*)$/m.exec(readFileSync(cache, "utf8"))?.[1];
}

writeAbi();
if (args.flags.has("--clean")) rmSync(buildDir, { recursive: true, force: true });
const ninja = spawnSync("ninja", ["--version"]).status === 0;
if (!args.flags.has("--if-needed") || configuredCuda() !== cuda) {
  run("cmake", [
    "-S", root, "-B", buildDir,
    ...(ninja ? ["-G", "Ninja"] : []),
    `-DCMAKE_BUILD_TYPE=${args.flags.has("--debug") ? "Debug" : "Release"}`,
    `-DLLTM_CUDA=${cuda}`,
  ]);
}
run("cmake", ["--build", buildDir, "--parallel"]);
