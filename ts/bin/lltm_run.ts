#!/usr/bin/env node
/** lltm-run: starts a data-parallel job's processes on this node (ts/distributed/launcher.ts). */
import process from "node:process";

import { launch, launchUsage, parseLaunchArgs } from "../distributed/launcher.ts";

let options;
try {
  options = parseLaunchArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(2);
}
if (options === "help") {
  process.stdout.write(`${launchUsage}\n`);
  process.exit(0);
}
process.exit(await launch(options));
