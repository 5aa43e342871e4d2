#!/usr/bin/env bash
# The package as a user gets it: pack lltm and the per-platform package of the
# prebuilt library (packages/linux-x64-gnu, built first), install the tarballs
# into a new project outside the repository, and there train a few steps from
# Bun, Deno and Node, each importing "lltm" by name; type-check a consumer file
# with no Bun, Deno or Node types; and run every ts block of the README under
# the three runtimes (load() finds the prebuilt library in use and builds
# nothing). npm, looking for the prebuilt CUDA package on the registry, skips
# it, as the optional dependency it is. Only the
# tarballs come from the repository; the runtimes come from npm, at the
# versions the repository pins.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/lltm-consumer-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tarballs" "$work/app"

cd "$repo"
pin() { node -p "require('./package.json').devDependencies['$1']"; }
tools=("bun@$(pin bun)" "deno@$(pin deno)" "node@$(pin node)" "typescript@$(pin typescript)")
npm pack --silent --pack-destination "$work/tarballs" >/dev/null
# Its last line: what the library needs (it fails above the glibc floor).
node_modules/.bin/bun scripts/build-prebuilt.ts | tail -n 1
npm pack --silent --pack-destination "$work/tarballs" ./packages/linux-x64-gnu >/dev/null
echo "consumer: packed $(cd "$work/tarballs" && echo *.tgz)"

cd "$work/app"
cat > package.json <<'EOF'
{ "name": "lltm-consumer", "private": true, "type": "module" }
EOF
npm install --silent --no-audit --no-fund "$work"/tarballs/*.tgz "${tools[@]}" 2>&1 | grep -v "^npm warn" || true

# The training, as TypeScript (Bun, Deno) and as JavaScript (Node).
cat > train.ts <<'EOF'
import { Adam, backendInfo, LLTMLayer, Tensor } from "lltm";

const runtime = "Bun" in globalThis ? "Bun" : "Deno" in globalThis ? "Deno" : "Node";
const library = backendInfo().path;
if (!library.includes("@lltm/linux-x64-gnu")) throw new Error(`${runtime}: not the prebuilt library: ${library}`);
const B = 16, F = 3, S = 8;
using model = new LLTMLayer(F, S, { seed: 0 });
using optimizer = new Adam(model.parameters(), { lr: 0.05 });
using input = Tensor.randn([B, F], { seed: 1 });
const target = Tensor.rand([B, S], { seed: 2 }).toTypedArray();
using gradCell = Tensor.zeros([B, S]);
const losses: number[] = [];
for (let step = 0; step < 25; step++) {
  const [h0, c0] = model.initialState(B);
  using out = model.forward(input, [h0, c0]);
  const h = out.newH.toTypedArray();
  const grad = new Float32Array(B * S);
  let loss = 0;
  for (let i = 0; i < h.length; i++) {
    loss += (h[i]! - target[i]!) ** 2 / h.length;
    grad[i] = (2 * (h[i]! - target[i]!)) / h.length;
  }
  using gradH = Tensor.fromTypedArray(grad, [B, S]);
  model.zeroGrad();
  using grads = out.backward(gradH, gradCell);
  optimizer.step();
  h0.dispose();
  c0.dispose();
  losses.push(loss);
}
const first = losses[0]!, last = losses[losses.length - 1]!;
console.log(`${runtime}: loss ${first.toFixed(4)} -> ${last.toFixed(4)} in ${losses.length} steps, with ${library}`);
if (!(last < 0.5 * first)) throw new Error(`${runtime}: the loss did not fall`);
EOF
cat > train.mjs <<'EOF'
import { Adam, backendInfo, LLTMLayer, Tensor } from "lltm";

const library = backendInfo().path;
if (!library.includes("@lltm/linux-x64-gnu")) throw new Error(`Node: not the prebuilt library: ${library}`);
const B = 16, F = 3, S = 8;
const model = new LLTMLayer(F, S, { seed: 0 });
const optimizer = new Adam(model.parameters(), { lr: 0.05 });
const input = Tensor.randn([B, F], { seed: 1 });
const target = Tensor.rand([B, S], { seed: 2 }).toTypedArray();
const gradCell = Tensor.zeros([B, S]);
const losses = [];
for (let step = 0; step < 25; step++) {
  const [h0, c0] = model.initialState(B);
  const out = model.forward(input, [h0, c0]);
  const h = out.newH.toTypedArray();
  const grad = new Float32Array(B * S);
  let loss = 0;
  for (let i = 0; i < h.length; i++) {
    loss += (h[i] - target[i]) ** 2 / h.length;
    grad[i] = (2 * (h[i] - target[i])) / h.length;
  }
  const gradH = Tensor.fromTypedArray(grad, [B, S]);
  model.zeroGrad();
  out.backward(gradH, gradCell).dispose();
  optimizer.step();
  for (const t of [gradH, out, h0, c0]) t.dispose();
  losses.push(loss);
}
for (const t of [gradCell, input, optimizer, model]) t.dispose();
const first = losses[0], last = losses[losses.length - 1];
console.log(`Node: loss ${first.toFixed(4)} -> ${last.toFixed(4)} in ${losses.length} steps, with ${library}`);
if (!(last < 0.5 * first)) throw new Error("Node: the loss did not fall");
EOF

# What a TypeScript user writes, checked with no runtime's types at all.
cat > consumer.ts <<'EOF'
import { backendInfo, type DType, LLTMError, LLTMLayer, lltmBackward, lltmForward, load, type LoadResult, Tensor } from "lltm";

export async function demo(dtype: DType): Promise<number[]> {
  const built: LoadResult = await load({ cuda: false, progress: false });
  const input = Tensor.randn([2, 3], { dtype, seed: 1 });
  const model = new LLTMLayer(3, 4, { dtype });
  const [h, c] = model.initialState(2);
  const out = lltmForward(input, model.weights, model.bias, h, c);
  const grads = lltmBackward(out.newH, out.newCell, out.newCell, out.inputGate, out.outputGate, out.candidateCell,
    out.X, out.gateWeights, model.weights);
  const shape: readonly number[] = grads.dWeights.shape;
  if (!(built.path && backendInfo().cpu)) throw new LLTMError("BACKEND_UNAVAILABLE", "no CPU backend");
  return [...shape];
}
EOF
cat > tsconfig.json <<'EOF'
{
  "compilerOptions": {
    "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
    "lib": ["ES2022", "ESNext.Disposable"], "types": [],
    "strict": true, "noEmit": true, "skipLibCheck": false
  },
  "files": ["consumer.ts"]
}
EOF

export LLTM_CACHE_DIR="$work/cache"
node_modules/.bin/bun train.ts
node_modules/.bin/deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env train.ts
node_modules/.bin/node --disable-warning=ExperimentalWarning train.mjs
node_modules/.bin/tsc -p tsconfig.json
echo "consumer: tsc --noEmit of a consumer file with no runtime types: ok"

# Every ts block of the README, as the package ships it, under each runtime.
node -e '
  const fs = require("node:fs");
  const text = fs.readFileSync("node_modules/lltm/README.md", "utf8");
  const blocks = [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  if (blocks.length === 0) throw new Error("the README has no ts block");
  blocks.forEach((code, i) => fs.writeFileSync(`readme-${i + 1}.ts`, code));
'
quietly() { "$@" > run.log 2>&1 || { cat run.log; echo "consumer: failed: $*"; exit 1; }; }
for block in readme-*.ts; do
  quietly node_modules/.bin/bun "$block"
  quietly node_modules/.bin/deno run --allow-ffi --allow-read --allow-write --allow-run --allow-env --allow-sys "$block"
  quietly node_modules/.bin/node --disable-warning=ExperimentalWarning "$block"
  echo "consumer: README block $block ran under Bun, Deno and Node"
done

# On a Node without node:ffi (the machine's own Node, when older than 26), the
# first use of the library says what is needed.
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 26 ]; then
  message="$(node -e 'import("lltm").then((m) => m.Tensor.zeros([1])).catch((e) => console.log(e.code, e.message))')"
  case "$message" in
    "LIBRARY_UNAVAILABLE lltm needs Node >= 26"*) echo "consumer: Node $(node --version): $message" ;;
    *) echo "consumer: Node $(node --version) gave: $message"; exit 1 ;;
  esac
fi
