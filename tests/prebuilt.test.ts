/**
 * The prebuilt libraries' packages (packages/linux-x64-gnu,
 * linux-arm64-gnu and linux-x64-gnu-cuda): their metadata agrees with lltm's
 * optionalDependencies, and the loader finds this machine's CPU library in an
 * installed layout (npm's flat node_modules and pnpm's nested one) before
 * lib/, while LLTM_LIBRARY_PATH still overrides it; the CUDA package is taken
 * where a GPU is present, and by load({ cuda: true }) anywhere. The layouts are made in a
 * temporary folder from ts/ and the library this suite runs on.
*/
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { backendInfo } from "../ts/index.ts";
import { gpuDevicePresent } from "../ts/gpu.ts";
import { runChild } from "./child.ts";
import { assert, assertEquals, test } from "./harness.ts";

const root = decodeURIComponent(new URL("../", import.meta.url).pathname);
const json = (path: string) => JSON.parse(readFileSync(join(root, path), "utf8"));

// The packages with the processor npm and process.arch name, and the files each carries.
const packages = [
  ["linux-x64-gnu", "x64", ["liblltm.so"]],
  ["linux-arm64-gnu", "arm64", ["liblltm.so"]],
  ["linux-x64-gnu-cuda", "x64", ["liblltm.so", "liblltm_cuda.so"]],
] as const;

for (const [folder, cpu, files] of packages) {
  test(`the ${folder} package is an optional dependency of lltm, for Linux ${cpu} glibc only, carrying ${files.join(" and ")}`, () => {
    const main = json("package.json"), platform = json(`packages/${folder}/package.json`);
    assertEquals(platform.name, `@lltm/${folder}`);
    assertEquals(main.optionalDependencies?.[platform.name], platform.version, "lltm's optionalDependencies");
    assertEquals(platform.version, main.version, "the versions move together");
    assertEquals([platform.os, platform.cpu, platform.libc], [["linux"], [cpu], ["glibc"]]);
    assertEquals(platform.files, files);
  });
}

// Node does not strip types under node_modules, so the layout's TypeScript runs under Bun and Deno only.
const isNode = typeof (globalThis as { Bun?: unknown; Deno?: unknown }).Bun === "undefined" &&
  typeof (globalThis as { Deno?: unknown }).Deno === "undefined";
// This machine's CPU package.
const folder = process.platform === "linux"
  ? packages.find(([name, cpu]) => cpu === process.arch && !name.endsWith("-cuda"))?.[0]
  : undefined;
const skip = isNode ? "installed layouts: Node runs no TypeScript from node_modules"
  : folder !== undefined ? false : "the prebuilt packages are for Linux x64 and arm64";

test("the loader takes the installed prebuilt library before lib/, and LLTM_LIBRARY_PATH before both", () => {
  const dir = mkdtempSync(join(tmpdir(), "lltm-prebuilt-"));
  try {
    const library = backendInfo().path;
    // npm and Bun: node_modules/lltm beside node_modules/@lltm/<folder>; pnpm: both inside .pnpm/<lltm>/node_modules.
    for (const modules of ["node_modules", "node_modules/.pnpm/lltm@0.1.0/node_modules"]) {
      const pkg = join(dir, modules, "lltm"), prebuilt = join(dir, modules, "@lltm", folder!);
      mkdirSync(prebuilt, { recursive: true });
      cpSync(join(root, "ts"), join(pkg, "ts"), { recursive: true });
      copyFileSync(join(root, "package.json"), join(pkg, "package.json"));
      copyFileSync(library, join(prebuilt, "liblltm.so"));
      const main = join(dir, "main.ts");
      writeFileSync(main, `import { backendInfo } from ${JSON.stringify(join(pkg, "ts", "index.ts"))};\nconsole.log(backendInfo().path);\n`);
      const found = runChild(main, [], { env: { LLTM_LIBRARY_PATH: "" } });
      assert(found.status === 0, `${modules}: ${found.stdout}${found.stderr}`);
      assertEquals(found.stdout.trim(), join(prebuilt, "liblltm.so"), `${modules}: the library opened`);
      const overridden = runChild(main, [], { env: { LLTM_LIBRARY_PATH: library } });
      assertEquals(overridden.stdout.trim(), library, `${modules}: with LLTM_LIBRARY_PATH`);
      rmSync(join(dir, "node_modules"), { recursive: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, { skip });

test("with both prebuilt packages, the loader takes the CUDA one only where a GPU is present, and load({ cuda: true }) switches to it without building", () => {
  const dir = mkdtempSync(join(tmpdir(), "lltm-prebuilt-cuda-"));
  try {
    const library = backendInfo().path;
    // lltm outside node_modules (Node strips types only there), the packages in node_modules above it.
    const pkg = join(dir, "lltm"), cpu = join(dir, "node_modules", "@lltm", "linux-x64-gnu");
    const cuda = join(dir, "node_modules", "@lltm", "linux-x64-gnu-cuda");
    for (const folder of [cpu, cuda]) {
      mkdirSync(folder, { recursive: true });
      copyFileSync(library, join(folder, "liblltm.so"));
    }
    // The CUDA backend's file: the choice reads only that it is there (a complete library, which the loader
    // checks), and nothing here runs CUDA, so the suite's liblltm stands in where no liblltm_cuda was built.
    const backend = join(library, "..", "liblltm_cuda.so");
    copyFileSync(existsSync(backend) ? backend : library, join(cuda, "liblltm_cuda.so"));
    cpSync(join(root, "ts"), join(pkg, "ts"), { recursive: true });
    copyFileSync(join(root, "package.json"), join(pkg, "package.json"));
    const main = join(dir, "main.ts"), cache = join(dir, "cache");
    writeFileSync(
      main,
      `import { backendInfo, load } from ${JSON.stringify(join(pkg, "ts", "index.ts"))};
import { gpuDevicePresent } from ${JSON.stringify(join(pkg, "ts", "gpu.ts"))};
const first = backendInfo().path;
const result = await load({ cuda: true, cacheDir: ${JSON.stringify(cache)}, progress: false });
console.log(JSON.stringify({ gpu: gpuDevicePresent(), first, result, after: backendInfo().path }));
`,
    );
    const r = runChild(main, [], { env: { LLTM_LIBRARY_PATH: "" } });
    assert(r.status === 0, `${r.stdout}${r.stderr}`);
    const report = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    // The child's own probe: its permissions (Deno's child runs with --allow-all) decide what it may see of the driver.
    if (gpuDevicePresent()) assert(report.gpu, "a GPU this process sees is seen by the child");
    assertEquals(report.first, join(report.gpu ? cuda : cpu, "liblltm.so"), "the library opened first");
    assertEquals(report.result, { path: join(cuda, "liblltm.so"), rebuilt: false, inUse: true, buildDir: "", log: "" });
    assertEquals(report.after, join(cuda, "liblltm.so"), "backendInfo() after load({ cuda: true })");
    assert(!existsSync(cache), "nothing was built");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, { skip: process.platform === "linux" && process.arch === "x64" ? false : "the CUDA package is for Linux x64" });
