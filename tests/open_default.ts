/** Child of library_file.test.ts: opens the default library, makes a tensor, prints the ABI version (run with Deno's --allow-ffi only). */
import { backendInfo, Tensor } from "../ts/index.ts";

using t = Tensor.ones([2]);
console.log(t.toTypedArray().length === 2 ? backendInfo().abiVersion : "wrong tensor");
