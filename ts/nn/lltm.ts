/**
 * The LLTM as modules, as torch.nn.LSTMCell and torch.nn.LSTM: LLTMCell runs
 * one step; LLTM runs whole sequences on the sequence engine: every layer and
 * direction in one native call each way (lltmStacked) where there is no
 * dropout between layers and the parameters lie in a fused optimizer's
 * buffer, else one native call per layer and direction each way (the second
 * direction on the reversed sequence), with dropout between layers, on the
 * tape. Per-sample lengths act as PyTorch's
 * packed sequences: outputs past a sample's length are 0, its final state is
 * that at its own last step, and the reverse direction reverses each sample
 * within its own length.
 */
import { layersLieFlat, lltmCell, lltmSequence, lltmStacked } from "../autograd/functions/lltm.ts";
import { cat } from "../autograd/functions/elementwise.ts";
import { isGradEnabled, withGradMode } from "../autograd/grad_mode.ts";
import { stack } from "../autograd/functions/stack.ts";
import { isHalf } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { Random } from "../random.ts";
import { Tensor } from "../tensor/index.ts";
import { ModuleList } from "./containers.ts";
import { Dropout } from "./dropout.ts";
import { checkSizes, type ParameterOptions, type Placement, placement, uniform } from "./init.ts";
import { Module } from "./module.ts";
import { reverseTime } from "./reverse.ts";

/** An LLTM state: h and c. */
export interface LLTMState {
  h: Tensor;
  c: Tensor;
}

const shapeOf = (t: Tensor) => `[${t.shape.join(", ")}]`;

export class LLTMCell extends Module {
  readonly inputFeatures: number;
  readonly stateSize: number;

  /** weights [3S, S+F] and bias [3S] uniform in ±1/√S (the tutorial's reset_parameters). */
  constructor(inputFeatures: number, stateSize: number, options: ParameterOptions = {}) {
    super("LLTMCell");
    checkSizes("LLTMCell", { inputFeatures, stateSize });
    this.inputFeatures = inputFeatures;
    this.stateSize = stateSize;
    const at = placement("LLTMCell", options);
    const rng = new Random(options.seed ?? 0);
    const bound = 1 / Math.sqrt(stateSize);
    this.registerParameter("weights", uniform("LLTMCell", [3 * stateSize, stateSize + inputFeatures], bound, rng, at));
    this.registerParameter("bias", uniform("LLTMCell", [3 * stateSize], bound, rng, at));
  }

  get weights(): Tensor {
    return this.parameter("weights");
  }

  get bias(): Tensor {
    return this.parameter("bias");
  }

  /** Zero state [B, S] each. */
  initialState(batch: number): LLTMState {
    const o = { dtype: this.weights.dtype, device: this.weights.device };
    return { h: Tensor.zeros([batch, this.stateSize], o), c: Tensor.zeros([batch, this.stateSize], o) };
  }

  /** One step: input [B, inputFeatures] and state ([B, S] each; zeros when omitted) -> the new state. */
  forward(input: Tensor, state?: LLTMState): LLTMState {
    const fn = "LLTMCell.forward";
    this.assertLive(fn);
    input.assertLive(`${fn}: the input`);
    if (input.ndim !== 2 || input.shape[1] !== this.inputFeatures) {
      throw new LLTMError(
        "SHAPE_MISMATCH",
        `${fn}: the input has shape ${shapeOf(input)}; it must be [B, ${this.inputFeatures}] (this LLTMCell's inputFeatures is ${this.inputFeatures})`,
      );
    }
    const B = input.shape[0]!;
    if (state !== undefined) {
      for (const [name, t] of [["h", state.h], ["c", state.c]] as const) {
        t.assertLive(`${fn}: state.${name}`);
        if (t.ndim !== 2 || t.shape[0] !== B || t.shape[1] !== this.stateSize) {
          throw new LLTMError("SHAPE_MISMATCH", `${fn}: state.${name} has shape ${shapeOf(t)}; it must be [${B}, ${this.stateSize}] (the input's batch, stateSize)`);
        }
      }
      return lltmCell(input, this.weights, this.bias, state.h, state.c);
    }
    const zero = this.initialState(B);
    try {
      return lltmCell(input, this.weights, this.bias, zero.h, zero.c);
    } finally {
      zero.h.dispose();
      zero.c.dispose();
    }
  }
}

export interface LLTMOptions extends ParameterOptions {
  /** Layers stacked, each on the previous one's outputs (default 1). */
  layers?: number;
  /** A second direction over the reversed sequence; outputs [.., 2S] (default false). */
  bidirectional?: boolean;
  /** The probability of dropping an element of the outputs between layers, in training (default 0). */
  dropout?: number;
  /** Inputs and outputs as [B, T, F] rather than [T, B, F] (default false); the state stays [layers·directions, B, S]. */
  batchFirst?: boolean;
}

/**
 * What LLTM.forward returns: every step's output of the last layer, and every layer's and direction's final
 * state; disposing it disposes all three (`using out = lltm.forward(x)`).
 */
export interface LLTMOutput extends LLTMState, Disposable {
  /** [T, B, directions·S] ([B, T, directions·S] with batchFirst). */
  output: Tensor;
}

/** LLTM.forward's options. */
export interface LLTMForwardOptions {
  /**
   * Each sample's number of steps, from 1 to T (as the lengths of torch.nn.utils.rnn.pack_padded_sequence, in
   * any order): numbers, an Int32Array or an int32 tensor [B]. Default: T for every sample.
   */
  lengths?: readonly number[] | Int32Array | Tensor;
}

export class LLTM extends Module {
  readonly inputFeatures: number;
  readonly stateSize: number;
  readonly layers: number;
  readonly bidirectional: boolean;
  readonly dropout: number;
  readonly batchFirst: boolean;
  private readonly cells: ModuleList<LLTMCell>;
  private readonly reverseCells: ModuleList<LLTMCell> | undefined;
  private readonly drop: Dropout | undefined;
  /**
   * The zero state forward() starts from when given none ([layers·directions, B, S] each), kept between calls of one
   * batch size, dtype and device.
   */
  private zero: LLTMState | undefined;

  constructor(inputFeatures: number, stateSize: number, options: LLTMOptions = {}) {
    super("LLTM");
    const layers = options.layers ?? 1;
    checkSizes("LLTM", { inputFeatures, stateSize, layers });
    const dropout = options.dropout ?? 0;
    if (typeof dropout !== "number" || !(dropout >= 0 && dropout < 1)) {
      throw new LLTMError("INVALID_ARGUMENT", `LLTM: 'dropout' must be a probability in [0, 1), got ${dropout}`);
    }
    this.inputFeatures = inputFeatures;
    this.stateSize = stateSize;
    this.layers = layers;
    this.bidirectional = options.bidirectional ?? false;
    this.dropout = dropout;
    this.batchFirst = options.batchFirst ?? false;
    const at: Placement = placement("LLTM", options);
    const seed = options.seed ?? 0;
    const directions = this.directions;
    const cell = (layer: number, direction: number) =>
      new LLTMCell(layer === 0 ? inputFeatures : directions * stateSize, stateSize, { ...at, seed: seed + layer * directions + direction });
    this.cells = this.registerModule("layers", new ModuleList(Array.from({ length: layers }, (_, l) => cell(l, 0))));
    this.reverseCells = this.bidirectional
      ? this.registerModule("reverseLayers", new ModuleList(Array.from({ length: layers }, (_, l) => cell(l, 1))))
      : undefined;
    this.drop = dropout > 0 && layers > 1 ? this.registerModule("dropout", new Dropout(dropout, { seed })) : undefined;
  }

  get directions(): number {
    return this.bidirectional ? 2 : 1;
  }

  /** Zero state [layers·directions, B, S] each. */
  initialState(batch: number): LLTMState {
    const p = this.cells.at(0).weights;
    const shape = [this.layers * this.directions, batch, this.stateSize];
    return { h: Tensor.zeros(shape, { dtype: p.dtype, device: p.device }), c: Tensor.zeros(shape, { dtype: p.dtype, device: p.device }) };
  }

  /**
   * Runs the whole sequence x ([T, B, inputFeatures], or [B, T, inputFeatures] with batchFirst) from `state`
   * ([layers·directions, B, S] each; zeros when omitted), as torch.nn.LSTM: returns every step's output of the
   * last layer and each layer's final state, on the tape. With `lengths`, sample b runs lengths[b] steps: its
   * outputs after them are 0 and its final state is that after its own last step (the reverse direction's:
   * after the sample's first step, having run over it from its own last).
   */
  forward(x: Tensor, state?: LLTMState, options: LLTMForwardOptions = {}): LLTMOutput {
    const fn = "LLTM.forward";
    this.assertLive(fn);
    if (!(x instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the input must be a Tensor`);
    x.assertLive(`${fn}: the input`);
    const layout = this.batchFirst ? "[B, T, F]" : "[T, B, F]";
    if (x.ndim !== 3) {
      throw new LLTMError("SHAPE_MISMATCH", `${fn}: the input has shape ${shapeOf(x)}; it must be ${layout} with F = ${this.inputFeatures}`);
    }
    if (x.shape[2] !== this.inputFeatures) {
      throw new LLTMError(
        "SHAPE_MISMATCH",
        `${fn}: the input has ${x.shape[2]} features (shape ${shapeOf(x)}, read as ${layout}), but this LLTM's inputFeatures is ${this.inputFeatures}`,
      );
    }
    const batchDim = this.batchFirst ? 0 : 1;
    const B = x.shape[batchDim]!, T = x.shape[1 - batchDim]!;
    if (state !== undefined) this.checkState(fn, x, B, batchDim, state);
    const lengthValues = options.lengths === undefined ? undefined : checkLengths(fn, options.lengths, T, B);
    if (this.stacksInOneCall()) return this.forwardStacked(x, B, state, lengthValues);
    const device = this.cells.at(0).weights.device;
    const owned: Tensor[] = [];
    try {
      const lengths = lengthValues && own(owned, Tensor.fromTypedArray(lengthValues, [B], { dtype: "int32", device }));
      let input = this.batchFirst ? own(owned, x.transpose(0, 1)) : x;
      const lastH: Tensor[] = [], lastC: Tensor[] = [];
      const zero = state === undefined ? this.zeroLayerState(B) : undefined;
      if (zero !== undefined) owned.push(zero.h, zero.c);
      const initial = (k: number): LLTMState => {
        if (zero !== undefined) return zero;
        return { h: own(owned, select(state!.h, k)), c: own(owned, select(state!.c, k)) };
      };
      for (let l = 0; l < this.layers; l++) {
        if (l > 0 && this.drop !== undefined) input = own(owned, this.drop.forward(input));
        const k = l * this.directions;
        const forward = this.cells.at(l);
        const s0 = initial(k);
        const out = lltmSequence(input, forward.weights, forward.bias, s0.h, s0.c, lengths);
        lastH.push(own(owned, out.h));
        lastC.push(own(owned, out.c));
        let output = own(owned, out.output);
        if (this.reverseCells !== undefined) {
          const backward = this.reverseCells.at(l);
          const s1 = initial(k + 1);
          const reversed = own(owned, reverseTime(input, lengths));
          const back = lltmSequence(reversed, backward.weights, backward.bias, s1.h, s1.c, lengths);
          lastH.push(own(owned, back.h));
          lastC.push(own(owned, back.c));
          own(owned, back.output);
          const unreversed = own(owned, reverseTime(back.output, lengths));
          output = own(owned, cat(output, unreversed, -1));
        }
        input = output;
      }
      // The last layer's output is returned, not freed (as a time-major view of it with batchFirst), and so are
      // the final states, for the result to stack when they are first read.
      for (const t of [input, ...lastH, ...lastC]) owned.splice(owned.indexOf(t), 1);
      let output = input;
      if (this.batchFirst) {
        output = input.transpose(0, 1);
        input.dispose();
      }
      return lazyFinalStates(output, lastH, lastC);
    } finally {
      // What the tape records it keeps (and backward() frees); the rest goes now.
      for (const t of owned) t.dispose();
    }
  }

  /**
   * Whether forward runs every layer and direction in one native call each way (lltmStacked): more than one
   * layer or direction, no dropout between the layers (none asked for, or in evaluation), and the parameters where
   * that call reads them in place (a fused optimizer's buffer), so that it copies none of them; not for half types
   * on the CPU, whose bfloat16 kernels (AVX512_BF16) run the sequence ops, not the stacked ones.
   */
  private stacksInOneCall(): boolean {
    const p = this.cells.at(0).weights;
    if (this.layers * this.directions === 1 || (this.drop !== undefined && this.training)) return false;
    if (isHalf(p.dtype) && p.device.kind === "cpu") return false;
    return layersLieFlat(this.layerParameters());
  }

  /** Every layer's parameters, the first direction's layers and then the second's (as the stacked ops lay them). */
  private layerParameters(): { weights: Tensor; bias: Tensor }[] {
    const cells = this.reverseCells === undefined ? [this.cells] : [this.cells, this.reverseCells];
    return cells.flatMap((list) => Array.from({ length: this.layers }, (_, l) => ({ weights: list.at(l).weights, bias: list.at(l).bias })));
  }

  /** forward's stack in one native call each way: its states are [layers·directions, B, S] as the call takes them. */
  private forwardStacked(x: Tensor, B: number, state: LLTMState | undefined, lengthValues: Int32Array | undefined): LLTMOutput {
    const device = this.cells.at(0).weights.device;
    using lengths = lengthValues && Tensor.fromTypedArray(lengthValues, [B], { dtype: "int32", device });
    // A time-major view of a batch-first input, on the tape (a retained handle would not be).
    using transposed = this.batchFirst ? x.transpose(0, 1) : undefined;
    const s0 = state ?? this.zeroState(B);
    const out = lltmStacked(transposed ?? x, this.layerParameters(), s0.h, s0.c, { lengths, bidirectional: this.bidirectional });
    if (state === undefined) {
      s0.h.dispose();
      s0.c.dispose();
    }
    let output = out.output;
    if (this.batchFirst) {
      output = out.output.transpose(0, 1);
      out.output.dispose();
    }
    const { h, c } = out;
    return {
      output, h, c,
      [Symbol.dispose]() {
        for (const t of [output, h, c]) t.dispose();
      },
    };
  }

  /**
   * The zero state [layers·directions, B, S] each, as new references to the one kept: the engine only reads a start
   * state, so every call of this batch size shares it, and a captured step fills nothing for it.
   */
  private zeroState(batch: number): LLTMState {
    const p = this.cells.at(0).weights;
    const z = this.zero;
    if (z === undefined || z.h.shape[1] !== batch || z.h.dtype !== p.dtype || z.h.device !== p.device) {
      this.dropZero();
      this.zero = this.initialState(batch);
    }
    return { h: this.zero!.h.retain(), c: this.zero!.c.retain() };
  }

  /** Frees the kept zero state with the parameters. */
  override dispose(): void {
    this.dropZero();
    super.dispose();
  }

  /** A layer's zero state [B, S] each: views of the kept one's first layer, which every layer and direction shares. */
  private zeroLayerState(batch: number): LLTMState {
    const z = this.zeroState(batch);
    try {
      return { h: select(z.h, 0), c: select(z.c, 0) };
    } finally {
      z.h.dispose();
      z.c.dispose();
    }
  }

  private dropZero(): void {
    this.zero?.h.dispose();
    this.zero?.c.dispose();
    this.zero = undefined;
  }

  private checkState(fn: string, x: Tensor, B: number, batchDim: number, state: LLTMState): void {
    const expected = [this.layers * this.directions, B, this.stateSize];
    for (const [name, t] of [["h", state.h], ["c", state.c]] as const) {
      if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: state.${name} must be a Tensor`);
      t.assertLive(`${fn}: state.${name}`);
      if (t.ndim === 3 && t.shape[1] !== B && t.shape[1] === x.shape[1 - batchDim] && t.shape[0] === expected[0] && t.shape[2] === expected[2]) {
        const hint = this.batchFirst
          ? "the input looks time-major ([T, B, F]); make the LLTM without { batchFirst: true }, or transpose(0, 1) the input"
          : "the input looks batch-first ([B, T, F]); make the LLTM with { batchFirst: true }, or transpose(0, 1) the input";
        throw new LLTMError("SHAPE_MISMATCH", `${fn}: state.${name}'s batch is ${t.shape[1]} but the input's is ${B}: ${hint}`);
      }
      if (t.ndim !== 3 || t.shape.some((n, i) => n !== expected[i])) {
        throw new LLTMError(
          "SHAPE_MISMATCH",
          `${fn}: state.${name} has shape ${shapeOf(t)}; it must be [${expected.join(", ")}] (layers·directions, the input's batch, stateSize)`,
        );
      }
    }
  }
}

/** LLTM.forward's lengths as host values, each an integer from 1 to T, one per sample. */
function checkLengths(fn: string, lengths: readonly number[] | Int32Array | Tensor, T: number, B: number): Int32Array {
  let values: ArrayLike<number>;
  if (lengths instanceof Tensor) {
    lengths.assertLive(`${fn}: lengths`);
    if (lengths.dtype !== "int32" || lengths.ndim !== 1) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: lengths must be an int32 tensor [B], got ${lengths.dtype} ${shapeOf(lengths)}`);
    }
    values = lengths.toTypedArray();
  } else if (Array.isArray(lengths) || lengths instanceof Int32Array) {
    values = lengths;
  } else {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: lengths must be an array of numbers, an Int32Array or an int32 Tensor`);
  }
  if (values.length !== B) {
    throw new LLTMError("SHAPE_MISMATCH", `${fn}: lengths has ${values.length} entries but the input's batch is ${B}`);
  }
  for (let b = 0; b < B; b++) {
    const n = values[b]!;
    if (!Number.isInteger(n) || n < 1 || n > T) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: lengths[${b}] is ${n}; expected an integer from 1 to T = ${T}`);
    }
  }
  return Int32Array.from(values);
}

/** Each layer's and direction's final state [B, S] as one [n, B, S]: for one, a view of it rather than a stacked copy. */
function finalStates(states: readonly Tensor[]): Tensor {
  return states.length === 1 ? states[0]!.reshape([1, ...states[0]!.shape]) : stack(states);
}

/**
 * LLTM.forward's result: `output`, and h and c stacked from each layer's and direction's final states when first
 * read (on the tape as the forward would have put them, whatever the grad mode then), so that a caller who never
 * reads them, as a language model's loss, pays no copies for them. Disposing it frees all of these.
 */
function lazyFinalStates(output: Tensor, lastH: readonly Tensor[], lastC: readonly Tensor[]): LLTMOutput {
  const recording = isGradEnabled();
  // Stacked, the parts go (a view of one keeps its storage), as they did when the forward stacked them.
  const made = (parts: readonly Tensor[]) => {
    const t = withGradMode(recording, () => finalStates(parts));
    for (const p of parts) p.dispose();
    return t;
  };
  let h: Tensor | undefined, c: Tensor | undefined;
  return {
    output,
    get h() {
      return h ??= made(lastH);
    },
    get c() {
      return c ??= made(lastC);
    },
    [Symbol.dispose]() {
      for (const t of [output, h, c, ...lastH, ...lastC]) t?.dispose();
    },
  };
}

/** Pushes `t` on `owned` and returns it. */
function own(owned: Tensor[], t: Tensor): Tensor {
  owned.push(t);
  return t;
}

/** Slice k of a [n, B, S] state as [B, S]. */
function select(t: Tensor, k: number): Tensor {
  using slice = t.narrow(0, k, 1);
  return slice.reshape(t.shape.slice(1));
}
