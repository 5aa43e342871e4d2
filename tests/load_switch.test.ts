/**
 * load() takes effect: with the prebuilt CPU library in use (an installed
 * layout: this suite's liblltm as node_modules/@lltm/linux-x64-gnu, with no
 * CUDA backend beside it), `await load({ cuda: true })` takes the library
 * with the CUDA backend from its build cache and the process switches to it,
 * which backendInfo() then names; once a tensor exists, load() refuses before
 * building and says what to do instead; and asked for nothing the library in
 * use lacks, it returns that library without building. Each case runs in a
 * child process, since switching libraries is for the whole process.
 *
 * The cache is seeded with this suite's own build of the CUDA backend (as a
 * finished build of these sources leaves it), so that the suite compiles the
 * CUDA backend once; that load() builds what its cache lacks is
 * tests/jit.test.ts's.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { backendInfo } from "../ts/index.ts";
import { buildFolder } from "../ts/jit.ts";
import { runChild } from "./child.ts";
import { assert, assertEquals, test } from "./harness.ts";
import { tempDir } from "./temp_dir.ts";

const root = decodeURIComponent(new URL("../", import.meta.url).pathname);
const scratch = tempDir("lltm-load-switch-");
const linuxX64 = process.platform === "linux" && process.arch === "x64";
const cudaBackend = join(backendInfo().path, "..", "liblltm_cuda.so");

/**
 * lltm copied outside node_modules (Node strips types only there) above the
 * prebuilt package's folder, where the loader looks for it; a child script
 * that reports, as JSON, what the library in use is before and after load().
 */
function installedLayout(): { script: string; prebuilt: string } {
  const dir = join(scratch, `layout-${readdirSync(scratch).length}`);
  const pkg = join(dir, "lltm"), prebuilt = join(dir, "node_modules", "@lltm", "linux-x64-gnu", "liblltm.so");
  mkdirSync(join(dir, "node_modules", "@lltm", "linux-x64-gnu"), { recursive: true });
  cpSync(join(root, "ts"), join(pkg, "ts"), { recursive: true });
  copyFileSync(join(root, "package.json"), join(pkg, "package.json"));
  copyFileSync(backendInfo().path, prebuilt);
  const script = join(dir, "main.ts");
  writeFileSync(
    script,
    `import { backendInfo, load, Tensor } from ${JSON.stringify(join(pkg, "ts", "index.ts"))};
const env = process.env;
const before = backendInfo().path;
if (env.MAKE_TENSOR_FIRST) Tensor.zeros([2]).dispose();
try {
  const result = await load({ cuda: env.LOAD_CUDA === "1", cacheDir: env.CACHE_DIR, sourceDir: env.SOURCE_DIR, progress: false });
  const sum = Tensor.ones([3]).toArray();
  console.log(JSON.stringify({ before, result, after: backendInfo().path, cpuWorks: sum }));
} catch (e) {
  console.log(JSON.stringify({ before, error: { code: (e as { code?: string }).code, message: (e as Error).message } }));
}
`,
  );
  return { script, prebuilt };
}

interface Report {
  before: string;
  result?: { path: string; rebuilt: boolean; inUse: boolean };
  after?: string;
  cpuWorks?: number[];
  error?: { code: string; message: string };
}

function run(script: string, env: Record<string, string>): Report {
  // Not LLTM_LIBRARY_PATH: the child must find the installed prebuilt library by itself.
  const r = runChild(script, [], { env: { LLTM_LIBRARY_PATH: "", ...env }, timeoutMs: 570_000 });
  assert(r.status === 0, `the child failed: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Report;
}

const layoutSkip = linuxX64 ? false : "the prebuilt package is for Linux x64";

test("load({ cuda: true }) with the prebuilt CPU library in use switches the process to the cached CUDA build", () => {
  const { script, prebuilt } = installedLayout();
  const cacheDir = join(scratch, `cuda-cache-${readdirSync(scratch).length}`);
  const folder = buildFolder({ cuda: true, cacheDir, sourceDir: root });
  mkdirSync(join(folder.library, ".."), { recursive: true });
  copyFileSync(backendInfo().path, folder.library);
  copyFileSync(cudaBackend, join(folder.library, "..", "liblltm_cuda.so"));
  writeFileSync(folder.stamp, folder.sources);
  const report = run(script, { LOAD_CUDA: "1", CACHE_DIR: cacheDir, SOURCE_DIR: root });
  assertEquals(report.error, undefined, "load() succeeds");
  assertEquals(report.before, prebuilt, "the prebuilt library was in use first");
  const built = report.result!.path;
  assert(built.startsWith(cacheDir), `the built library is in the cache: ${built}`);
  assert(existsSync(join(built, "..", "liblltm_cuda.so")), "with the CUDA backend beside it");
  assertEquals(report.result!.inUse, true, "load() reports the built library in use");
  assertEquals(report.after, built, "backendInfo() names the built library");
  assertEquals(report.result!.rebuilt, false, "from the cache, compiling nothing");
  assertEquals(report.cpuWorks, [1, 1, 1], "and calls go to it");
}, { skip: layoutSkip || (existsSync(cudaBackend) ? false : "this suite's library was built without the CUDA backend") });

test("once a tensor exists, load({ cuda: true }) refuses before building and says what to do", () => {
  const { script, prebuilt } = installedLayout();
  const cacheDir = join(scratch, "never-built");
  const report = run(script, { LOAD_CUDA: "1", CACHE_DIR: cacheDir, SOURCE_DIR: root, MAKE_TENSOR_FIRST: "1" });
  assertEquals(report.error?.code, "BACKEND_UNAVAILABLE");
  const message = report.error!.message;
  for (const part of [prebuilt, "has no CUDA backend", "tensors were already made", "before making any tensor", "LLTM_LIBRARY_PATH"]) {
    assert(message.includes(part), `the message says ${JSON.stringify(part)}: ${message}`);
  }
  assert(!existsSync(cacheDir), "nothing was built");
}, { skip: layoutSkip });

test("load() asked for nothing the library in use lacks returns it at once, building nothing", () => {
  const { script, prebuilt } = installedLayout();
  const cacheDir = join(scratch, "not-needed");
  const report = run(script, { LOAD_CUDA: "0", CACHE_DIR: cacheDir, SOURCE_DIR: root });
  assertEquals(report.result, { path: prebuilt, rebuilt: false, inUse: true, buildDir: "", log: "" } as Report["result"]);
  assertEquals(report.after, prebuilt);
  assert(!existsSync(cacheDir), "nothing was built");
}, { skip: layoutSkip });
