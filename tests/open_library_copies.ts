/**
 * Child of library_file.test.ts: opens every file named on the command line
 * with loadLibrary and prints, per file, the LLTMError code it gave or "opened".
 * A file that slipped past the checks could kill this process (SIGBUS), never the test runner.
 */
import process from "node:process";

import { LLTMError, loadLibrary } from "../ts/index.ts";

const results: Record<string, string> = {};
for (const path of process.argv.slice(2)) {
  try {
    await loadLibrary(path);
    results[path] = "opened";
  } catch (e) {
    results[path] = e instanceof LLTMError ? `${e.code}: ${e.message.split("\n")[0]}` : `not an LLTMError: ${e}`;
  }
}
console.log(JSON.stringify(results));
