/**
 * The entry points that take their arguments in memory (lltm_forward_v,
 * lltm_backward_ex_v, lltm_alloc_v): every forward, backward and allocation of
 * the suite goes through them; here, their own refusals.
 */
import { Status } from "../ts/native/constants.ts";
import { native } from "../ts/native/library.ts";
import "../ts/index.ts";
import { assertEquals, test } from "./harness.ts";

test("the in-memory entry points refuse null argument blocks by name", () => {
  const lib = native();
  assertEquals(lib.lltm_forward_v(0, 0), Status.NULL_POINTER);
  assertEquals(lib.lltm_last_error(), "lltm_forward_v: 'tensors' or 'codes' is a null pointer");
  assertEquals(lib.lltm_backward_ex_v(0, 0), Status.NULL_POINTER);
  assertEquals(lib.lltm_last_error(), "lltm_backward_ex_v: 'tensors' or 'codes' is a null pointer");
});

test("lltm_alloc_v allocates as lltm_alloc does, and refuses a bad device by lltm_alloc's rules", () => {
  const lib = native();
  const out = new Uint32Array(2);
  assertEquals(lib.lltm_alloc_v(64, new Int32Array([0, 0]), out), Status.OK);
  const address = out[0]! + out[1]! * 4294967296;
  assertEquals(address % 64, 0, "64-byte aligned");
  assertEquals(lib.lltm_free(address, 0, 0), Status.OK);
  out.fill(7);
  assertEquals(lib.lltm_alloc_v(64, new Int32Array([9, 0]), out), Status.INVALID_DEVICE);
  assertEquals([...out], [0, 0], "out is cleared on failure");
});
