/** Prints the CPU kernels this process chose (or the library's refusal) as JSON; tests/isa.test.ts runs it. */
import { backendInfo } from "../ts/index.ts";

try {
  console.log(JSON.stringify({ cpuKernels: backendInfo().cpuKernels }));
} catch (e) {
  console.log(JSON.stringify({ error: (e as Error).message }));
}
