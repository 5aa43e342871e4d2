/**
 * Builds the prebuilt CPU library of the per-platform package,
 * packages/linux-x64-gnu/liblltm.so, and checks that it runs elsewhere: CPU
 * only, every kernel variant with the load-time choice (no -march=native),
 * libstdc++ linked in, so that it needs nothing but glibc and libgcc_s (GCC's
 * unwinder, present wherever glibc is); prints the newest glibc symbol
 * version it needs. Run it before `npm pack` of that package.
 *
 * usage: bun scripts/build-prebuilt.ts [--out DIR]
 *   --out DIR  where to put liblltm.so (default: packages/linux-x64-gnu)
 */
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const usage = "usage: bun scripts/build-prebuilt.ts [--out DIR]";
const root = fileURLToPath(new URL("..", import.meta.url));

function fail(message: string): never {
  console.error(`build-prebuilt: ${message}`);
  process.exit(1);
}

let options: { out?: string; help?: boolean };
try {
  options = parseArgs({ options: { out: { type: "string" }, help: { type: "boolean", short: "h" } }, strict: true }).values;
} catch (e) {
  fail(`${(e as Error).message}\n${usage}`);
}
if (options.help) {
  console.log(usage);
  process.exit(0);
}
if (process.platform !== "linux" || process.arch !== "x64") fail(`this package is for linux x64; this is ${process.platform} ${process.arch}`);
const out = options.out ?? `${root}packages/linux-x64-gnu`;
const buildDir = `${root}build-prebuilt`;

function run(cmd: string, argv: string[]): string {
  console.log(`$ ${cmd} ${argv.join(" ")}`);
  const r = spawnSync(cmd, argv, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (r.error) fail(`${cmd} could not run (${r.error.message}); install CMake >= 3.24, a C++17 compiler and binutils`);
  if (r.status !== 0) fail(`${cmd} exited with ${r.status ?? r.signal}`);
  return r.stdout;
}

const library = `${out}/liblltm.so`;
rmSync(library, { force: true }); // always link anew, so that the checks below see this build's file
const ninja = spawnSync("ninja", ["--version"]).status === 0;
process.stdout.write(run("cmake", [
  "-S", root, "-B", buildDir,
  ...(ninja ? ["-G", "Ninja"] : []),
  "-DCMAKE_BUILD_TYPE=Release",
  "-DLLTM_CUDA=OFF",
  "-DLLTM_NATIVE_ARCH=OFF",
  "-DLLTM_PORTABLE=ON",
  `-DLLTM_OUTPUT_DIR=${out}`,
]));
process.stdout.write(run("cmake", ["--build", buildDir, "--parallel"]));
if (!existsSync(library)) fail(`the build did not write ${library}`);

// What the dynamic linker must find on the user's machine: the C library's parts and GCC's unwinder only.
const allowed = new Set(["libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "ld-linux-x86-64.so.2", "libgcc_s.so.1"]);
const needed = [...run("readelf", ["-d", "-W", library]).matchAll(/\(NEEDED\)\s+Shared library: \[(.+?)\]/g)].map((m) => m[1]!);
const foreign = needed.filter((n) => !allowed.has(n));
if (foreign.length > 0) fail(`${library} needs ${foreign.join(", ")}, beyond glibc and libgcc_s`);
const versions = [...run("readelf", ["-V", "-W", library]).matchAll(/Name: (GLIBC_[0-9.]+)/g)].map((m) => m[1]!);
const cxx = [...run("readelf", ["-V", "-W", library]).matchAll(/Name: ((?:GLIBCXX|CXXABI)_[0-9.]+)/g)].map((m) => m[1]!);
if (cxx.length > 0) fail(`${library} still needs ${cxx.join(", ")} from the C++ runtime`);
const newest = versions.map((v) => v.slice(6).split(".").map(Number)).sort((a, b) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}).at(-1);
console.log(`${library}: needs ${needed.join(", ")}; glibc >= ${newest?.join(".") ?? "any"}`);
