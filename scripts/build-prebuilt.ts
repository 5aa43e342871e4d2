/**
 * Builds the prebuilt libraries of the per-platform packages and checks that
 * they run elsewhere: every CPU kernel variant with the load-time choice (no
 * -march=native), libstdc++ linked in and hidden, so that each library needs
 * nothing but glibc and libgcc_s (GCC's unwinder, present wherever glibc is),
 * and no glibc newer than glibcFloor (fails otherwise); prints what each needs.
 * Run it before `npm pack` of the package.
 *
 * Without --cuda: packages/linux-<arch>-gnu/liblltm.so, CPU only; for
 * arm64 on an x64 machine it cross-compiles with Debian's aarch64 toolchain
 * (apt-get install g++-aarch64-linux-gnu; cmake/toolchains/aarch64-linux-gnu.cmake).
 * With --cuda (x64 only): packages/linux-x64-gnu-cuda, the same liblltm with
 * liblltm_cuda beside it, compiled for every GPU architecture the CUDA
 * toolkit supports (`nvcc --list-gpu-code`: machine code for each, PTX for the
 * newest too), the CUDA runtime linked in statically: at run time it needs the
 * driver's libcuda.so.1 alone (which the runtime opens itself), and cuBLAS
 * only when present (cuda/ opens it at run time). It exports lltm_backend_v1
 * alone. --archs (or LLTM_CUDA_ARCHS), e.g. 90 or 75,90, builds fewer
 * architectures (the last with PTX), for a quick check of the script.
 *
 * usage: bun scripts/build-prebuilt.ts [--arch x64|arm64] [--cuda] [--archs LIST] [--out DIR]
 *   --arch ARCH  the package's processor (default: this machine's)
 *   --out DIR    where to put the libraries (default: packages/linux-<arch>-gnu, or packages/linux-x64-gnu-cuda)
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const usage = "usage: bun scripts/build-prebuilt.ts [--arch x64|arm64] [--cuda] [--archs LIST] [--out DIR]";
const root = fileURLToPath(new URL("..", import.meta.url));

function fail(message: string): never {
  console.error(`build-prebuilt: ${message}`);
  process.exit(1);
}

let options: { arch?: string; out?: string; cuda?: boolean; archs?: string; help?: boolean };
try {
  options = parseArgs({
    options: {
      arch: { type: "string" },
      out: { type: "string" },
      cuda: { type: "boolean" },
      archs: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  }).values;
} catch (e) {
  fail(`${(e as Error).message}\n${usage}`);
}
if (options.help) {
  console.log(usage);
  process.exit(0);
}
// Per package processor: the dynamic linker its ELF names, and the cross
// toolchain (CMake toolchain file, binutils prefix) that builds it on x64.
const targets = {
  x64: { loader: "ld-linux-x86-64.so.2", cross: undefined },
  arm64: {
    loader: "ld-linux-aarch64.so.1",
    cross: { toolchain: `${root}cmake/toolchains/aarch64-linux-gnu.cmake`, binutils: "aarch64-linux-gnu-" },
  },
} as const;
type Arch = keyof typeof targets;
const arch = options.arch ?? process.arch;
if (!(arch in targets)) fail(`--arch ${arch}: expected one of ${Object.keys(targets).join(", ")}\n${usage}`);
const target = targets[arch as Arch];
if (process.platform !== "linux") fail(`the packages are built on linux; this is ${process.platform}`);
const cross = arch === process.arch ? undefined : target.cross;
if (arch !== process.arch && (cross === undefined || process.arch !== "x64"))
  fail(`cannot build for ${arch} on ${process.arch}: only arm64 on x64 is cross-compiled`);
const cuda = options.cuda === true;
if (cuda && arch !== "x64") fail(`--cuda builds the x64 package only\n${usage}`);
const archList = options.archs ?? process.env.LLTM_CUDA_ARCHS;
if (archList !== undefined && !cuda) fail(`--archs is for --cuda builds\n${usage}`);
const out = options.out ?? `${root}packages/linux-${arch}-gnu${cuda ? "-cuda" : ""}`;
if (cross && spawnSync(`${cross.binutils}g++`, ["--version"]).status !== 0)
  fail(`${cross.binutils}g++ is missing: install Debian's cross toolchain (apt-get install g++-aarch64-linux-gnu)`);

// The oldest glibc the prebuilt library loads on, as the packages' READMEs and
// lltm's promise; cmake/portable.cmake and csrc/portable/glibc_compat.* bind
// the symbols that newer glibc versions raised to their older versions (the
// architecture's first: 2.2.5 on x86-64, 2.17 on aarch64). 2.18 is where
// __cxa_thread_atexit_impl (thread_local destructors) appeared, on both. A
// build that needs anything newer fails here, naming the symbols.
const glibcFloor = [2, 18] as const;
const buildDir = `${root}build-prebuilt${arch === "x64" ? "" : `-${arch}`}${cuda ? "-cuda" : ""}`;
const readelf = `${cross?.binutils ?? ""}readelf`;
const objdump = `${cross?.binutils ?? ""}objdump`;

function run(cmd: string, argv: string[]): string {
  console.log(`$ ${cmd} ${argv.join(" ")}`);
  const r = spawnSync(cmd, argv, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 28 });
  if (r.error) fail(`${cmd} could not run (${r.error.message}); install CMake >= 3.24, a C++17 compiler${cuda ? ", the CUDA toolkit" : ""} and binutils`);
  if (r.status !== 0) {
    process.stdout.write(r.stdout ?? "");
    fail(`${cmd} exited with ${r.status ?? r.signal}`);
  }
  return r.stdout;
}

/**
 * CMAKE_CUDA_ARCHITECTURES: machine code for each architecture, and PTX for
 * the last (newest) too, which a later GPU's driver compiles for itself.
 */
function cudaArchitectures(): string {
  const listed = archList !== undefined
    ? archList.split(/[,;\s]+/).filter((a) => a !== "")
    : [...run("nvcc", ["--list-gpu-code"]).matchAll(/^sm_(\d+)$/gm)].map((m) => m[1]!);
  const archs = [...new Set(listed)].sort((a, b) => Number(a) - Number(b));
  if (archs.length === 0 || archs.some((a) => !/^\d+$/.test(a))) fail(`the architectures must be numbers such as 75,90; got ${archList ?? "none from nvcc"}`);
  return archs.map((a, i) => (i === archs.length - 1 ? a : `${a}-real`)).join(";");
}

const libraries = cuda ? ["liblltm.so", "liblltm_cuda.so"] : ["liblltm.so"];
for (const name of libraries) rmSync(`${out}/${name}`, { force: true }); // always link anew, so that the checks below see this build's files
const ninja = spawnSync("ninja", ["--version"]).status === 0;
const architectures = cuda ? cudaArchitectures() : undefined;
process.stdout.write(run("cmake", [
  "-S", root, "-B", buildDir,
  ...(ninja ? ["-G", "Ninja"] : []),
  "-DCMAKE_BUILD_TYPE=Release",
  `-DLLTM_CUDA=${cuda ? "ON" : "OFF"}`,
  ...(architectures ? [`-DCMAKE_CUDA_ARCHITECTURES=${architectures}`, "-DLLTM_CUBLAS=DYNAMIC"] : []),
  "-DLLTM_NATIVE_ARCH=OFF",
  "-DLLTM_PORTABLE=ON",
  `-DLLTM_OUTPUT_DIR=${out}`,
  ...(cross ? [`-DCMAKE_TOOLCHAIN_FILE=${cross.toolchain}`] : []),
]));
process.stdout.write(run("cmake", ["--build", buildDir, "--parallel"]));
for (const name of libraries) if (!existsSync(`${out}/${name}`)) fail(`the build did not write ${out}/${name}`);

// What the dynamic linker must find on the user's machine: the C library's parts and GCC's unwinder only
// (the CUDA runtime opens the driver's libcuda.so.1 itself, as cuda/ opens cuBLAS).
const allowed = new Set([
  "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", target.loader, "libgcc_s.so.1",
]);

type Version = readonly number[];
const compare = (a: Version, b: Version) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
};

/** Checks one library; returns the line that says what it needs. */
function check(library: string, exports: RegExp, exportsSaid: string): string {
  const needed = [...run(readelf, ["-d", "-W", library]).matchAll(/\(NEEDED\)\s+Shared library: \[(.+?)\]/g)].map((m) => m[1]!);
  const foreign = needed.filter((n) => !allowed.has(n));
  if (foreign.length > 0) fail(`${library} needs ${foreign.join(", ")}, beyond glibc and libgcc_s`);
  // What it exports: its map's names alone (csrc/portable/*.map). The local
  // section symbols (flag "l") that aarch64's linker puts in the dynamic table are not exports.
  const exported = run(objdump, ["-T", library]).split("\n")
    .filter((line) => /^[0-9a-f]+\s/.test(line) && !/^[0-9a-f]+\s+l\s/.test(line) && !line.includes("*UND*"))
    .map((line) => line.trim().split(/\s+/).at(-1)!)
    .filter((name) => !exports.test(name));
  if (exported.length > 0) fail(`${library} exports ${exported.join(", ")}, beyond ${exportsSaid}`);
  const versionInfo = run(readelf, ["-V", "-W", library]);
  const cxx = [...versionInfo.matchAll(/Name: ((?:GLIBCXX|CXXABI)_[0-9.]+)/g)].map((m) => m[1]!);
  if (cxx.length > 0) fail(`${library} still needs ${cxx.join(", ")} from the C++ runtime`);

  // Every GLIBC_ version it needs must be a release no newer than the floor; a
  // GLIBC_PRIVATE or GLIBC_ABI_* requirement (ld.so internals, DT_RELR) ties it
  // to the build machine's glibc and fails too.
  const glibcNames = [...new Set([...versionInfo.matchAll(/Name: (GLIBC_\S+)/g)].map((m) => m[1]!))];
  const unnumbered = glibcNames.filter((n) => !/^GLIBC_[0-9]+(\.[0-9]+)+$/.test(n));
  if (unnumbered.length > 0) fail(`${library} needs ${unnumbered.join(", ")}, which only the build machine's glibc may have`);
  const versions = glibcNames.map((n) => n.slice(6).split(".").map(Number)).sort(compare);
  const newest = versions.at(-1);
  const floor = glibcFloor.join(".");
  if (newest !== undefined && compare(newest, glibcFloor) > 0) {
    const symbols = run(objdump, ["-T", library]).split("\n")
      .map((line) => /\(?GLIBC_([0-9.]+)\)?\s+(\S+)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null && compare(m[1]!.split(".").map(Number), glibcFloor) > 0)
      .map((m) => `${m[2]}@GLIBC_${m[1]}`);
    fail(`${library} needs glibc ${newest.join(".")}, newer than the floor ${floor} (scripts/build-prebuilt.ts glibcFloor): ` +
      `${symbols.join(", ")}. Bind them to an older version in csrc/portable/glibc_compat.*, or raise the floor and the READMEs with it`);
  }
  // Before 2.34 the old dlopen and pthread_create live in libdl and libpthread, not in libc.
  const moved = ["libdl.so.2", "libpthread.so.0"].filter((n) => !needed.includes(n));
  if (compare(glibcFloor, [2, 34]) < 0 && moved.length > 0) fail(`${library} does not list ${moved.join(", ")} as needed, which glibc before 2.34 requires`);
  return `${library} (${arch}): needs ${needed.join(", ")}; glibc >= ${newest?.join(".") ?? "any"} (floor ${floor}: ok)`;
}

const lines = [check(`${out}/liblltm.so`, /^lltm_/, "lltm.h's lltm_* functions")];
if (cuda) lines.push(check(`${out}/liblltm_cuda.so`, /^lltm_backend_v1$/, "lltm_backend_v1"));
if (cuda) {
  const files = readdirSync(out).map((name) => statSync(`${out}/${name}`).size);
  const megabytes = (files.reduce((a, b) => a + b, 0) / 1e6).toFixed(1);
  // cuda/CMakeLists.txt compiles the run-time cuBLAS path only against the toolkit's cuBLAS headers.
  const blas = /^LLTM_CUBLAS_HEADER:FILEPATH=.*cublas_v2\.h$/m.test(readFileSync(`${buildDir}/CMakeCache.txt`, "utf8"))
    ? "cuBLAS opened at run time where found"
    : "NO cuBLAS: the toolkit has no cublas_v2.h, so the package always uses its own kernels";
  lines.push(`${out}: ${megabytes} MB unpacked; CUDA architectures ${architectures}; ${blas}`);
}
// The last lines: what each library needs (.ci/consumer.sh prints them).
for (const line of lines) console.log(line);
