/**
 * The lltm_nccl_* entry points of the C ABI refuse bad arguments by name
 * with their status, before the CUDA backend or NCCL sees them (a null or
 * stale communicator, an unknown collective, tensors that are not on a CUDA
 * device, a rank outside the world), on every build and machine; where no
 * NCCL can be used, lltm_nccl_version says why.
 */
import { backendInfo, Tensor } from "../ts/index.ts";
import { CALL_BYTES, headerConstants as h, layoutConstants, Status } from "../ts/native/constants.ts";
import { Descriptors, hostBlock } from "../ts/native/descriptor.ts";
import { native } from "../ts/native/library.ts";
import { assert, assertEquals, test } from "./harness.ts";

const word = (field: string) => layoutConstants[`offsetof(lltm_call, ${field})` as keyof typeof layoutConstants] / 4;

/** An lltm_call of two tensors on `device` (kind, index), with scalars[0] = `scalar`. */
function callOf(input: Tensor, output: Tensor, kind: number, index: number, scalar: number): number {
  const { address, words } = hostBlock(CALL_BYTES, "test call block");
  const tensors = new Descriptors(words, word("tensors"), address + word("tensors") * 4, 2);
  tensors.write(0, input);
  tensors.write(1, output);
  words[word("device_kind")] = kind;
  words[word("device_index")] = index;
  words[word("given")] = 3;
  new Float64Array(words.buffer, words.byteOffset, CALL_BYTES / 8)[layoutConstants["offsetof(lltm_call, scalars)"] / 8] = scalar;
  return address;
}

function expectRefusal(status: number, code: keyof typeof Status, pattern: RegExp): void {
  const message = native().lltm_last_error();
  assertEquals(status, Status[code], message);
  assert(pattern.test(message), message);
}

test("lltm_nccl_run and lltm_nccl_comm_*: null and unknown arguments refused by name, before any backend", () => {
  const lib = native();
  using a = Tensor.zeros([4]);
  using b = Tensor.zeros([4]);
  const onCpu = callOf(a, b, h.LLTM_CPU, 0, 0);
  const fakeComm = 4096;
  expectRefusal(lib.lltm_nccl_run(0, h.LLTM_ALL_REDUCE, onCpu), "NULL_POINTER", /^lltm_nccl_run: 'comm' is a null pointer/);
  expectRefusal(lib.lltm_nccl_run(fakeComm, h.LLTM_ALL_REDUCE, 0), "NULL_POINTER", /^lltm_nccl_run: 'call' is a null pointer/);
  expectRefusal(lib.lltm_nccl_run(fakeComm, 7, onCpu), "INVALID_ARGUMENT", /^lltm_nccl_run: collective 7 is not an lltm_collective/);
  expectRefusal(lib.lltm_nccl_run(fakeComm, h.LLTM_BROADCAST, onCpu), "INVALID_DEVICE", /^lltm_nccl_run: NCCL collectives take CUDA tensors/);
  expectRefusal(lib.lltm_nccl_comm_destroy(0, 0), "NULL_POINTER", /^lltm_nccl_comm_destroy: 'comm' is a null pointer/);
  expectRefusal(lib.lltm_nccl_comm_error(0), "NULL_POINTER", /^lltm_nccl_comm_error: 'comm' is a null pointer/);
  expectRefusal(lib.lltm_nccl_join(0), "NULL_POINTER", /^lltm_nccl_join: 'comm' is a null pointer/);
  const handle = new Uint32Array(2).fill(7);
  const id = new Uint8Array(h.LLTM_NCCL_UNIQUE_ID_BYTES);
  expectRefusal(lib.lltm_nccl_comm_init(handle, id, 0, 0, 0), "INVALID_ARGUMENT", /'world_size' must be at least 1, got 0/);
  assertEquals([...handle], [0, 0], "the handle is cleared on failure");
  expectRefusal(lib.lltm_nccl_comm_init(handle, id, 2, 2, 0), "INVALID_ARGUMENT", /'rank' must be in \[0, 2\), got 2/);
  lib.lltm_free(onCpu, h.LLTM_CPU, 0);
});

test("lltm_nccl_version: NCCL's version code, or why NCCL cannot be used here", () => {
  const version = new Int32Array(1);
  const status = native().lltm_nccl_version(version);
  if (status === Status.OK) assert(version[0]! >= h.LLTM_NCCL_MIN_VERSION, `version ${version[0]}`);
  else expectRefusal(status, "BACKEND_UNAVAILABLE", /^lltm_nccl_version: (NCCL needs the CUDA backend|.*libnccl\.so\.2)/);
});

test("lltm_nccl_run on CUDA tensors: a communicator that was never made is refused, not followed", () => {
  using a = Tensor.zeros([4], { device: "cuda:0" });
  using b = Tensor.zeros([8], { device: "cuda:0" });
  const call = callOf(a, b, h.LLTM_CUDA, 0, h.LLTM_REDUCE_SUM);
  // The backend checks the handle against the communicators it made before anything else (NCCL is not even opened).
  expectRefusal(native().lltm_nccl_run(4096, h.LLTM_ALL_REDUCE, call), "INVALID_ARGUMENT", /^lltm_nccl_run: 'comm' is not a live communicator/);
  native().lltm_free(call, h.LLTM_CPU, 0);
}, { skip: backendInfo().cuda ? false : "CUDA tests: no CUDA backend or no GPU on this machine" });
