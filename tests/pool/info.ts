/** Prints backendInfo()'s CPU thread count and its source as JSON (for tests/pool.test.ts). */
import { backendInfo } from "../../ts/index.ts";

const { threads, threadsSource } = backendInfo();
console.log(JSON.stringify({ threads, threadsSource }));
