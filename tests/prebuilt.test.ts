/**
 * The prebuilt CPU library's packages (packages/linux-x64-gnu and
 * linux-arm64-gnu): their metadata agrees with lltm's optionalDependencies,
 * and the loader finds this machine's one's library in
 * an installed layout (npm's flat node_modules and pnpm's nested one) before
 * lib/, while LLTM_LIBRARY_PATH still overrides it. The layouts are made in a
 * temporary folder from ts/ and the library this suite runs on.
 */
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { backendInfo } from "../ts/index.ts";
import { runChild } from "./child.ts";
import { assert, assertEquals, test } from "./harness.ts";

const root = decodeURIComponent(new URL("../", import.meta.url).pathname);
const json = (path: string) => JSON.parse(readFileSync(join(root, path), "utf8"));

// The packages by the processor npm and process.arch name.
const packages = { x64: "linux-x64-gnu", arm64: "linux-arm64-gnu" } as const;

for (const [cpu, folder] of Object.entries(packages)) {
  test(`the ${folder} package is an optional dependency of lltm, for Linux ${cpu} glibc only, carrying liblltm.so`, () => {
    const main = json("package.json"), platform = json(`packages/${folder}/package.json`);
    assertEquals(platform.name, `@lltm/${folder}`);
    assertEquals(main.optionalDependencies?.[platform.name], platform.version, "lltm's optionalDependencies");
    assertEquals(platform.version, main.version, "the versions move together");
    assertEquals([platform.os, platform.cpu, platform.libc], [["linux"], [cpu], ["glibc"]]);
    assertEquals(platform.files, ["liblltm.so"]);
  });
}

// Node does not strip types under node_modules, so the layout's TypeScript runs under Bun and Deno only.
const isNode = typeof (globalThis as { Bun?: unknown; Deno?: unknown }).Bun === "undefined" &&
  typeof (globalThis as { Deno?: unknown }).Deno === "undefined";
const folder = process.platform === "linux" ? packages[process.arch as keyof typeof packages] : undefined;
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
