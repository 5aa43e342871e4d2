/**
 * int32 tensors (the INDEX type of csrc/lltm_ops.def): made from Int32Array
 * and integer arrays, read back, printed, copied, moved, saved in
 * checkpoints as I32; the op table's checks refuse a float tensor in an
 * index slot and an int32 one in a float slot, naming the argument.
 */
import { cat, embedding, loadCheckpoint, saveCheckpoint, softmax, Tensor } from "../ts/index.ts";
import { formatTensor } from "../ts/inspect.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";
import { ints, testOnDevices } from "./op_helpers.ts";
import { tempDir } from "./temp_dir.ts";

test("int32 tensors from Int32Array and from integer arrays, read back as Int32Array", () => {
  using a = ints([3, -1, 2147483647, -2147483648], [2, 2]);
  assertEquals(a.dtype, "int32");
  const back = a.toTypedArray();
  assert(back instanceof Int32Array, "an Int32Array");
  assertEquals([...back], [3, -1, 2147483647, -2147483648]);
  using b = Tensor.fromArray([[1, 2], [3, 4]], { dtype: "int32" });
  assertEquals(b.toArray(), [[1, 2], [3, 4]]);
  assertThrowsLLTM(() => Tensor.fromArray([1.5], { dtype: "int32" }), "INVALID_ARGUMENT", /int32.*integers.*got 1\.5/);
  assertThrowsLLTM(() => Tensor.fromArray([2 ** 31], { dtype: "int32" }), "INVALID_ARGUMENT", /got 2147483648/);
  assertThrowsLLTM(() => Tensor.fromTypedArray(new Float32Array(2), undefined, { dtype: "int32" }), "INVALID_DTYPE", /Int32Array/);
  assertThrowsLLTM(() => Tensor.fromTypedArray(new Int32Array(2), undefined, { dtype: "float32" }), "INVALID_DTYPE", /Int32Array/);
  assertThrowsLLTM(() => Tensor.randn([2], { dtype: "int32" }), "INVALID_DTYPE", /float type/);
});

testOnDevices("int32 tensors are filled with integers only", (device) => {
  using z = Tensor.zeros([2, 2], { dtype: "int32", device });
  assertEquals(z.toArray(), [[0, 0], [0, 0]]);
  using f = Tensor.full([3], -7, { dtype: "int32", device });
  assertEquals([...f.toTypedArray()], [-7, -7, -7]);
  assertThrowsLLTM(() => f.fill(0.5), "INVALID_ARGUMENT", /^fill: 'value' must be an integer .* when the tensor is int32, got 0\.5/);
  assertThrowsLLTM(() => f.fill(2 ** 31), "INVALID_ARGUMENT", /^fill: 'value' must be an integer/);
  assertEquals([...f.toTypedArray()], [-7, -7, -7]);
});

test("int32 tensors print as integers", () => {
  using a = ints([7, 0, -3]);
  assertEquals(formatTensor(a), "Tensor(int32, cpu, [3]) [7, 0, -3]");
});

test("int32 tensors copy, clone strided views and join with cat", () => {
  using a = ints([0, 1, 2, 3, 4, 5], [2, 3]);
  using t = a.transpose();
  using c = t.contiguous();
  assertEquals([...c.toTypedArray()], [0, 3, 1, 4, 2, 5]);
  using j = cat(a, a, 1);
  assertEquals(j.toArray(), [[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]]);
  using f = Tensor.zeros([2, 3]);
  assertThrowsLLTM(() => cat(a, f), "INVALID_DTYPE", /cat: 'b' has dtype float32 but 'a' has dtype int32/);
  assertThrowsLLTM(() => a.cast("float32"), "INVALID_DTYPE", /int32/);
});

test("checkpoints keep int32 tensors as I32", () => {
  const dir = tempDir("lltm-int32-");
  const path = `${dir}/ids.safetensors`;
  using ids = ints([5, 4, 3, 2, 1], [5]);
  saveCheckpoint(path, { ids });
  const loaded = loadCheckpoint(path);
  using back = loaded.tensors.ids!;
  assertEquals(back.dtype, "int32");
  assertEquals([...back.toTypedArray()], [5, 4, 3, 2, 1]);
});

testOnDevices("the op table refuses a float tensor in an index slot and an int32 one in a float slot, by name", (device) => {
  using w = Tensor.zeros([4, 2], { device });
  using fids = Tensor.zeros([3], { device });
  assertThrowsLLTM(() => embedding(w, fids), "INVALID_DTYPE", /^embedding: 'ids' has dtype float32; expected int32/);
  using ids = ints([1, 2], undefined, device);
  assertThrowsLLTM(() => embedding(ids, ids), "INVALID_DTYPE", /^embedding: 'weight' has dtype int32, which is not a float type/);
  assertThrowsLLTM(() => softmax(ids), "INVALID_DTYPE", /^softmax: 'x' has dtype int32/);
  using moved = ids.to("cpu");
  assertEquals([...moved.toTypedArray()], [1, 2]);
});
