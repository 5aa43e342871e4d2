#!/usr/bin/env bash
# The prebuilt CUDA package as a GPU user gets it, on a machine with an NVIDIA
# GPU and the CUDA toolkit (for the build only): builds both prebuilt packages
# (scripts/build-prebuilt.ts, the CUDA one for every architecture), packs them
# and lltm, installs the tarballs into a new project outside the repository,
# and there, with no nvcc, CMake or CUDA toolkit on PATH or LD_LIBRARY_PATH
# (env -i, a PATH of the JavaScript runtimes alone):
#   (a) trains an LLTM on the adding problem on the GPU (`new LLTM(..., { device: "cuda" })`);
#   (b) runs the suite's CUDA tests against the installed package's library;
# each twice: with the toolkit's cuBLAS named by LLTM_CUBLAS_LIBRARY, then
# with none, printing which GEMM path the backend took (backendInfo().cudaBlas).
# Offline: the tarballs are unpacked into node_modules as npm lays them out.
# On the GPU host of ../shared/gpu: bash .gpu/run.sh 'bash scripts/gpu-check-prebuilt.sh'
# usage: bash scripts/gpu-check-prebuilt.sh [--archs LIST] (e.g. --archs 90, a quicker build)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/lltm-gpu-check-XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$repo"
bun="$(command -v bun || echo "$repo/node_modules/.bin/bun")"
"$bun" --version >/dev/null || { echo "gpu-check: Bun is needed (bash .gpu/run.sh puts it on PATH)"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader

# 1. The packages, checked by the script that builds them.
archs=()
[ "${1:-}" = "--archs" ] && archs=(--archs "$2")
"$bun" scripts/build-prebuilt.ts | tail -n 1
"$bun" scripts/build-prebuilt.ts --cuda "${archs[@]}" | tail -n 3
du -sh packages/linux-x64-gnu-cuda

# 2. The tarballs: npm's where npm is, else Bun's (without dist/, built by tsc
# in prepack; Bun runs the package's TypeScript sources, its "bun" export).
mkdir -p "$work/tarballs"
pack() {
  if command -v npm >/dev/null 2>&1; then npm pack --silent --pack-destination "$work/tarballs" "$1" >/dev/null
  else (cd "$1" && "$bun" pm pack --ignore-scripts --quiet --destination "$work/tarballs" >/dev/null); fi
}
for dir in . packages/linux-x64-gnu packages/linux-x64-gnu-cuda; do pack "$dir"; done
ls -l "$work/tarballs"

# 3. A new project with the three packages in node_modules, as npm installs them.
app="$work/app"
mkdir -p "$app/node_modules"
echo '{ "name": "lltm-gpu-check", "private": true, "type": "module" }' > "$app/package.json"
for tarball in "$work"/tarballs/*.tgz; do
  unpacked="$(mktemp -d "$work/unpack-XXXXXX")"
  tar -xzf "$tarball" -C "$unpacked"
  name="$("$bun" -e "console.log(JSON.parse(require('fs').readFileSync('$unpacked/package/package.json', 'utf8')).name)")"
  mkdir -p "$app/node_modules/$(dirname "$name")"
  mv "$unpacked/package" "$app/node_modules/$name"
done

# The runtimes alone on PATH; nothing of the toolkit anywhere the process looks.
mkdir -p "$work/bin" "$work/home"
for runtime in bun node deno; do
  found="$(command -v "$runtime" || true)"
  [ -n "$found" ] && ln -s "$found" "$work/bin/$runtime"
done
bare() { env -i HOME="$work/home" PATH="$work/bin" LLTM_CACHE_DIR="$work/cache" "$@"; }
bare "$work/bin/bun" -e '
  for (const tool of ["nvcc", "cmake"]) if (Bun.which(tool)) throw new Error(`gpu-check: ${tool} is visible: ${Bun.which(tool)}`);
  console.log("gpu-check: no nvcc or cmake on PATH, LD_LIBRARY_PATH unset");'

# The toolkit's cuBLAS, for the run that uses it.
cublas="$(ls /usr/local/cuda/lib64/libcublas.so.[0-9]* 2>/dev/null | head -n 1 || true)"
[ -n "$cublas" ] || { echo "gpu-check: the toolkit has no libcublas.so.N in /usr/local/cuda/lib64"; exit 1; }

cat > "$app/adding.ts" <<'EOF'
// The adding problem on the device named by CHECK_DEVICE (default cuda), from the installed package.
import { Adam, backendInfo, LLTMLayer, Tensor } from "lltm";

const device = (process.env.CHECK_DEVICE ?? "cuda") as "cuda" | "cpu";
const steps = Number(process.env.CHECK_STEPS ?? 600);
const info = backendInfo();
console.log(`library ${info.path}; CUDA devices ${info.cudaDevices}`);
const T = 20, B = 64, F = 2, S = 32;
let seed = 12345;
const uniform = () => { // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
function batch(n: number) {
  const inputs = new Float32Array(T * n * F), targets = new Float64Array(n), half = T / 2;
  for (let b = 0; b < n; b++) {
    const first = Math.floor(uniform() * half), second = half + Math.floor(uniform() * half);
    for (let t = 0; t < T; t++) {
      const v = uniform(), marked = t === first || t === second;
      inputs[(t * n + b) * F] = v;
      inputs[(t * n + b) * F + 1] = marked ? 1 : 0;
      if (marked) targets[b]! += v / 2;
    }
  }
  return { inputs, targets };
}
const mse = (hT: Float32Array | Float64Array, targets: Float64Array, grad?: Float32Array) => {
  let sum = 0;
  for (let b = 0; b < targets.length; b++) {
    const d = hT[b * S]! - targets[b]!;
    sum += d * d;
    if (grad) grad[b * S] = (2 * d) / targets.length;
  }
  return sum / targets.length;
};
using model = new LLTMLayer(F, S, { device, seed: 0 });
using optimizer = new Adam(model.parameters(), { lr: 0.01 });
const heldOut = batch(1024);
const mean = heldOut.targets.reduce((a, b) => a + b, 0) / 1024;
const baseline = heldOut.targets.reduce((a, t) => a + (t - mean) ** 2, 0) / 1024;
const evaluate = () => {
  using xs = Tensor.fromTypedArray(heldOut.inputs, [T, 1024, F], { device });
  const [h0, c0] = model.initialState(1024);
  using seq = model.sequence(xs, [h0, c0], { grad: false });
  const value = mse(seq.h.toTypedArray(), heldOut.targets);
  h0.dispose();
  c0.dispose();
  return value;
};
const before = evaluate();
const [h0, c0] = model.initialState(B);
using zeros = Tensor.zeros([B, S], { device });
const start = performance.now();
for (let step = 1; step <= steps; step++) {
  const { inputs, targets } = batch(B);
  using xs = Tensor.fromTypedArray(inputs, [T, B, F], { device });
  using seq = model.sequence(xs, [h0, c0]);
  const grad = new Float32Array(B * S);
  mse(seq.h.toTypedArray(), targets, grad);
  using gradH = Tensor.fromTypedArray(grad, [B, S], { device });
  model.zeroGrad();
  using grads = seq.backward(undefined, [gradH, zeros]);
  optimizer.step();
}
const after = evaluate();
console.log(`adding problem on ${model.weights.device}: held-out loss ${before.toFixed(4)} -> ${after.toFixed(4)} in ${steps} steps ` +
  `(${((performance.now() - start) / 1000).toFixed(1)} s); the best memoryless prediction's ${baseline.toFixed(4)}`);
if (!(after < 0.5 * baseline)) throw new Error("the model did not learn to remember (held-out loss not below half the baseline's)");
EOF

cat > "$app/backend.ts" <<'EOF'
import { backendInfo } from "lltm";

const info = backendInfo(), expected = process.env.EXPECTED_BLAS;
console.log(`gpu-check: ${info.path}: ${info.cudaDevices} CUDA device(s), GEMM path ${info.cudaBlas}`);
if (!info.path.includes("/@lltm/linux-x64-gnu-cuda/")) throw new Error("gpu-check: not the prebuilt CUDA package's library");
if (!info.cuda) throw new Error("gpu-check: the prebuilt CUDA backend sees no GPU");
if (info.cudaBlas !== expected) throw new Error(`gpu-check: expected the ${expected} GEMM path`);
EOF

# Every test file that runs on CUDA (the suite skips them without a GPU; backend.ts has made sure there is one).
mapfile -t suite < <(grep -l 'cudaSkipReason\|"cuda' tests/*.test.ts | grep -v -e jit -e load_switch -e prebuilt)
installed="$app/node_modules/@lltm/linux-x64-gnu-cuda/liblltm.so"
# Without: nothing on the paths the backend searches (env -i leaves no LD_LIBRARY_PATH, VIRTUAL_ENV or
# CONDA_PREFIX, and HOME is empty), unless the system's own search finds one, which LLTM_CUBLAS_LIBRARY=none then hides.
without=()
major="$(basename "$cublas" | sed 's/^libcublas\.so\.//')"
if ldconfig -p 2>/dev/null | grep -q "libcublas.so.$major " ||
  ls /usr/local/lib/python3*/*-packages/nvidia/{cu$major,cublas}/lib/libcublas.so.$major \
    /usr/lib/python3*/*-packages/nvidia/{cu$major,cublas}/lib/libcublas.so.$major >/dev/null 2>&1; then
  echo "gpu-check: the system itself has a libcublas.so.$major; the run without cuBLAS sets LLTM_CUBLAS_LIBRARY=none"
  without=(LLTM_CUBLAS_LIBRARY=none)
fi
for blas in cublas own; do
  with=(EXPECTED_BLAS="$blas")
  if [ "$blas" = cublas ]; then with+=(LLTM_CUBLAS_LIBRARY="$cublas"); else with+=("${without[@]}"); fi
  echo "gpu-check: --- GEMM path expected: $blas ---"
  (cd "$app" && bare "${with[@]}" "$work/bin/bun" backend.ts && bare "${with[@]}" "$work/bin/bun" adding.ts)
  # The suite, from the repository's sources, against the installed library.
  bare "${with[@]}" LLTM_LIBRARY_PATH="$installed" "$work/bin/bun" test "${suite[@]}"
done
echo "gpu-check: the prebuilt CUDA package trains and passes the CUDA tests with cuBLAS and with its own kernels"
