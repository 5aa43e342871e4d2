/**
 * The four dtypes through the Tensor API: every factory makes each of them
 * (the half types rounded from float32 values, as PyTorch converts), to() and
 * cast() convert between every pair on the device, copyFrom and add_ accept
 * mixed storage, half tensors print their values, checkpoints keep BF16 and
 * F16 bit for bit, and the LLTM module trains in bfloat16.
 */
import { join } from "node:path";

import { Adam, dtypes, type FloatDType, floatDTypes as floats, LLTMLayer, loadCheckpoint, saveCheckpoint, Tensor } from "../ts/index.ts";
import { assert, assertEquals, assertThrowsLLTM, test } from "./harness.ts";
import { bfloat16, decode, encode, float16 } from "./half_reference.ts";
import { tempDir } from "./temp_dir.ts";

const formats = { bfloat16, float16 } as const;

/** `v` as `dtype` holds it: float64 as it is, float32 rounded, a half type rounded from float32. */
function rounded(v: number, dtype: FloatDType): number {
  if (dtype === "float64") return v;
  const f = Math.fround(v);
  return dtype === "float32" ? f : decode(formats[dtype], encode(formats[dtype], f));
}

const dir = tempDir("lltm-dtypes-");

test("dtypes lists the five, and a bad dtype is refused naming them", () => {
  assertEquals([...dtypes].sort(), ["bfloat16", "float16", "float32", "float64", "int32"]);
  assertThrowsLLTM(() => Tensor.zeros([2], { dtype: "int8" as FloatDType }), "INVALID_DTYPE", /"float32", "float64", "bfloat16", "float16", "int32", got "int8"/);
});

test("every factory makes every dtype, with values rounded as the dtype holds them", () => {
  const values = [1 / 3, -2.5, 1e5, 7e-6, 65519, 300.7];
  for (const dtype of floats) {
    const expected = values.map((v) => rounded(v, dtype));
    using a = Tensor.fromArray([values.slice(0, 3), values.slice(3)], { dtype });
    assertEquals(a.dtype, dtype);
    assertEquals(a.toArray(), [expected.slice(0, 3), expected.slice(3)], `fromArray ${dtype}`);
    using b = Tensor.fromTypedArray(Float64Array.from(values), [2, 3], { dtype });
    assertEquals([...b.toTypedArray()], expected, `fromTypedArray ${dtype}`);
    using f = Tensor.full([2, 2], 1 / 3, { dtype });
    assertEquals([...f.toTypedArray()], new Array(4).fill(rounded(1 / 3, dtype)), `full ${dtype}`);
    using z = Tensor.zeros([3], { dtype }), o = Tensor.ones([3], { dtype });
    assertEquals([...z.toTypedArray(), ...o.toTypedArray()], [0, 0, 0, 1, 1, 1], `zeros and ones ${dtype}`);
    using r = Tensor.randn([50], { dtype, seed: 3 }), r64 = Tensor.randn([50], { dtype: "float64", seed: 3 });
    assertEquals([...r.toTypedArray()], [...r64.toTypedArray()].map((v) => rounded(v, dtype)), `randn ${dtype}`);
    using u = Tensor.rand([50], { dtype, seed: 4, low: -2, high: 2 });
    assert(u.toTypedArray().every((v) => v >= -2 && v <= 2), `rand ${dtype}`);
    assertEquals(u.itemSize, dtype === "float64" ? 8 : dtype === "float32" ? 4 : 2, `itemSize ${dtype}`);
  }
});

test("to(dtype) and cast convert between every pair, and to the same dtype give the tensor itself", () => {
  using src = Tensor.fromArray([[0.1, -1234.5678, 3e-5], [70000, -0, 2 ** -20]], { dtype: "float64" });
  const original = [...src.toTypedArray()];
  for (const from of floats) {
    using a = src.cast(from);
    for (const to of floats) {
      using b = a.to(to);
      assertEquals(b.dtype, to);
      const expected = original.map((v) => rounded(rounded(v, from), to));
      // Converting a float64 straight to a half type rounds once, not through float32.
      const direct = from === "float64" && to !== "float64" && to !== "float32"
        ? original.map((v) => decode(formats[to], encode(formats[to], v)))
        : expected;
      assertEquals([...b.toTypedArray()], direct, `${from} -> ${to}`);
      if (from === to) assertEquals(b.dataAddress, a.dataAddress, `${from}.to(${from}) is the same memory`);
    }
  }
  using t = src.transpose();
  using c = t.cast("bfloat16");
  assert(c.isContiguous(), "a cast is contiguous");
  assertEquals([...c.toTypedArray()], [0.1, 70000, -1234.5678, -0, 3e-5, 2 ** -20].map((v) => decode(bfloat16, encode(bfloat16, v))));
});

test("copyFrom converts, and add_ accepts mixed storage that the library accepts", () => {
  using dst = Tensor.zeros([2, 2], { dtype: "bfloat16" });
  using src = Tensor.fromArray([[1.01, 2.02], [3.03, 4.04]], { dtype: "float32" });
  dst.copyFrom(src);
  assertEquals([...dst.toTypedArray()], [...src.toTypedArray()].map((v) => rounded(v, "bfloat16")));
  using acc = Tensor.zeros([2, 2], { dtype: "float32" });
  acc.add_(dst).add_(src, -1);
  const expected = [...src.toTypedArray()].map((v) => Math.fround(rounded(v, "bfloat16") - v));
  assertEquals([...acc.toTypedArray()], expected);
  using wide = Tensor.zeros([2, 2], { dtype: "float64" });
  assertThrowsLLTM(() => wide.add_(src), "INVALID_DTYPE", /^add_: /);
});

test("a half tensor prints its values", () => {
  using t = Tensor.fromArray([[1, 2.5], [-3, 0.1]], { dtype: "bfloat16" });
  assertEquals(String((t as unknown as Record<symbol, () => string>)[Symbol.for("nodejs.util.inspect.custom")]!()), "Tensor(bfloat16, cpu, [2, 2])\n[[1., 2.5],\n [-3., 0.1001]]");
  using h = Tensor.fromArray([0.1], { dtype: "float16" });
  assertEquals(String((h as unknown as Record<symbol, () => string>)[Symbol.for("nodejs.util.inspect.custom")]!()), "Tensor(float16, cpu, [1]) [0.099976]");
});

test("checkpoints keep BF16 and F16 tensors bit for bit", () => {
  const path = join(dir, "halves.safetensors");
  using b = Tensor.randn([3, 4], { dtype: "bfloat16", seed: 1 });
  using h = Tensor.randn([5], { dtype: "float16", seed: 2 });
  saveCheckpoint(path, { b, h });
  const { tensors } = loadCheckpoint(path);
  try {
    assertEquals(tensors.b!.dtype, "bfloat16");
    assertEquals(tensors.h!.dtype, "float16");
    assertEquals([...tensors.b!.toTypedArray({ raw: true })], [...b.toTypedArray({ raw: true })]);
    assertEquals([...tensors.h!.toTypedArray({ raw: true })], [...h.toTypedArray({ raw: true })]);
  } finally {
    for (const t of Object.values(tensors)) t.dispose();
  }
});

test("the LLTM module runs a training step in bfloat16 and float16, and saves and loads its parameters", () => {
  for (const dtype of ["bfloat16", "float16"] as const) {
    using model = new LLTMLayer(3, 4, { dtype, seed: 1 });
    assertEquals(model.weights.dtype, dtype);
    using x = Tensor.randn([2, 3], { dtype, seed: 2 });
    using h = Tensor.zeros([2, 4], { dtype }), c = Tensor.zeros([2, 4], { dtype });
    using opt = new Adam(model.parameters(), { lr: 1e-2 });
    const before = [...model.weights.toTypedArray()];
    {
      using step = model.forward(x, [h, c]);
      using gh = Tensor.ones([2, 4], { dtype }), gc = Tensor.zeros([2, 4], { dtype });
      using grads = step.backward(gh, gc);
    }
    opt.step();
    assert(model.weights.toTypedArray().some((v, i) => v !== before[i]), `${dtype}: the weights moved`);
    const path = join(dir, `model-${dtype}.safetensors`);
    model.save(path);
    using copy = new LLTMLayer(3, 4, { dtype, seed: 9 });
    copy.load(path);
    assertEquals([...copy.weights.toTypedArray({ raw: true })], [...model.weights.toTypedArray({ raw: true })]);
  }
});
