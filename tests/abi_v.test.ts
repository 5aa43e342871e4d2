/**
 * The entry points that take their arguments in memory (lltm_forward_v,
 * lltm_backward_ex_v, lltm_alloc_v, lltm_sequence_reserve_bytes_v,
 * lltm_sequence_forward_v, lltm_sequence_backward_v): every forward,
 * backward, allocation and sequence call of the suite goes through them; here,
 * their own refusals and agreement with the plain forms (whose refusals
 * tests/sequence_errors.test.ts and tests/c/abi_fuzz.c check through both).
 */
import { lltmSequenceBackward, lltmSequenceForward, Tensor } from "../ts/index.ts";
import { Status } from "../ts/native/constants.ts";
import { DescriptorBlock } from "../ts/native/descriptor.ts";
import { native } from "../ts/native/library.ts";
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

test("the sequence calls' in-memory forms refuse null blocks by name, and clear the bytes answered", () => {
  const lib = native();
  using block = new DescriptorBlock(0, 3, 5);
  block.word(4, 77);
  for (const [sizes, codes] of [[0, block.codes], [block.words64, 0]] as const) {
    assertEquals(lib.lltm_sequence_reserve_bytes_v(sizes, codes, block.words64 + 32), Status.NULL_POINTER);
    assertEquals(lib.lltm_last_error(), "lltm_sequence_reserve_bytes_v: 'sizes' or 'codes' is a null pointer");
    assertEquals(block.readWord(4), 0, "bytes cleared");
  }
  assertEquals(lib.lltm_sequence_reserve_bytes_v(0, 0, 0), Status.NULL_POINTER);
  const nonzero = block.words64;
  for (const [tensors, reserve, codes] of [[0, nonzero, nonzero], [nonzero, 0, nonzero], [nonzero, nonzero, 0]] as const) {
    assertEquals(lib.lltm_sequence_forward_v(tensors, reserve, codes), Status.NULL_POINTER);
    assertEquals(lib.lltm_last_error(), "lltm_sequence_forward_v: 'tensors', 'reserve' or 'codes' is a null pointer");
    assertEquals(lib.lltm_sequence_backward_v(tensors, reserve, codes), Status.NULL_POINTER);
    assertEquals(lib.lltm_last_error(), "lltm_sequence_backward_v: 'tensors', 'reserve' or 'codes' is a null pointer");
  }
});

test("the sequence calls' in-memory forms compute what the plain forms do, bit for bit", () => {
  const T = 3, B = 2, F = 3, S = 5, o = { dtype: "float64" as const };
  using inputs = Tensor.randn([T, B, F], { ...o, seed: 11 });
  using weights = Tensor.randn([3 * S, S + F], { ...o, seed: 12 });
  using bias = Tensor.randn([3 * S], { ...o, seed: 13 });
  using h0 = Tensor.randn([B, S], { ...o, seed: 14 });
  using c0 = Tensor.randn([B, S], { ...o, seed: 15 });
  using gradLastCell = Tensor.randn([B, S], { ...o, seed: 16 });
  // Through the ops (the _v forms)...
  using fw = lltmSequenceForward(inputs, weights, bias, h0, c0);
  using bw = lltmSequenceBackward(undefined, undefined, gradLastCell, fw.reserve!, inputs, weights, h0);
  // ... and through the plain entry points.
  const lib = native();
  const out = new Uint32Array(2);
  assertEquals(lib.lltm_sequence_reserve_bytes(T, B, F, S, 1, 0, 0, out), Status.OK);
  const bytes = out[0]!;
  assertEquals(bytes, fw.reserve!.numel * 8);
  using reserve = Tensor.zeros([bytes / 8], o);
  const fOuts = [[T, B, S], [B, S], [B, S]].map((s) => Tensor.zeros(s, o));
  const bOuts = [[T, B, F], [3 * S, S + F], [3 * S], [B, S], [B, S]].map((s) => Tensor.zeros(s, o));
  try {
    using f = new DescriptorBlock(8);
    const fs = [inputs, weights, bias, h0, c0, ...fOuts].map((t, i) => f.write(i, t));
    assertEquals(lib.lltm_sequence_forward(fs[0]!, fs[1]!, fs[2]!, fs[3]!, fs[4]!, fs[5]!, fs[6]!, fs[7]!, reserve.dataAddress, bytes, 1, 1, 0, 0), Status.OK);
    using b = new DescriptorBlock(9);
    const bs = [gradLastCell, inputs, weights, h0, ...bOuts].map((t, i) => b.write(i, t));
    assertEquals(
      lib.lltm_sequence_backward(0, 0, bs[0]!, reserve.dataAddress, bytes, bs[1]!, bs[2]!, bs[3]!, bs[4]!, bs[5]!, bs[6]!, bs[7]!, bs[8]!, 0, 1, 0, 0),
      Status.OK,
    );
    const same = (a: Tensor, b: Tensor, what: string) => assertEquals([...a.toTypedArray()], [...b.toTypedArray()], what);
    [fw.outputs, fw.lastH, fw.lastCell].forEach((t, i) => same(t, fOuts[i]!, `forward output ${i}`));
    [bw.dInputs, bw.dWeights, bw.dBias, bw.dH0, bw.dC0].forEach((t, i) => same(t, bOuts[i]!, `backward output ${i}`));
  } finally {
    for (const t of [...fOuts, ...bOuts]) t.dispose();
  }
});
