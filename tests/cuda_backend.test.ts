/**
 * liblltm_cuda through its backend table alone (tests/c/cuda_backend_test.cpp, built beside the
 * libraries into build/tests/): copies between every pair of float dtypes, fill, linear and its
 * backward, with cuBLAS and with the library's own product kernel (LLTM_CUDA_KERNELS=fused).
 * Skipped without a GPU or without the program (a build without the CUDA backend).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { assert, cudaSkipReason, test } from "./harness.ts";

const program = fileURLToPath(new URL("../build/tests/cuda_backend_test", import.meta.url));
const skip = cudaSkipReason() ||
  (existsSync(program) ? false : `${program} is not built (bun scripts/build.ts --cuda on builds it)`);

for (const kernels of ["", "fused"]) {
  test(`the CUDA backend's copies, fill and linear${kernels ? ` (LLTM_CUDA_KERNELS=${kernels})` : ""}`, () => {
    const r = spawnSync(program, [], { encoding: "utf8", env: { ...process.env, LLTM_CUDA_KERNELS: kernels } });
    assert(r.status === 0, `cuda_backend_test exited with ${r.status}:\n${r.stdout}${r.stderr}`);
  }, { skip });
}
