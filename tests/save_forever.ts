/** Child of checkpoint.test.ts: saves a 64 MiB checkpoint to argv's path over and over, until it is killed. */
import process from "node:process";

import { saveCheckpoint, Tensor } from "../ts/index.ts";

const path = process.argv.at(-1)!;
using t = Tensor.zeros([16 * 1024 * 1024]);
for (;;) saveCheckpoint(path, { t });
