/**
 * The LLTM module: weights [3S, S+F] and bias [3S] initialised uniformly in
 * ±1/√S (as the tutorial's reset_parameters), gradients that accumulate until
 * zeroGrad(), one step at a time (forward) or over a sequence with
 * backpropagation through time (sequence). Everything stays on the module's
 * device between steps.
 */
import { isOneStep } from "./autograd/functions/lltm.ts";
import { LLTMFunction } from "./autograd/lltm_function.ts";
import { loadCheckpoint, saveCheckpoint } from "./checkpoint.ts";
import { requireDevice } from "./cuda.ts";
import { Device, type DeviceLike } from "./device.ts";
import { checkDType, type DType, itemSize, valueArray } from "./dtype.ts";
import { LLTMError } from "./errors.ts";
import { lltmForward } from "./ops/lltm.ts";
import { lltmSequenceBackwardAccumulate, lltmSequenceForward } from "./ops/sequence.ts";
import { Random } from "./random.ts";
import { sameShape, Tensor } from "./tensor/index.ts";

export interface LLTMLayerOptions {
  dtype?: DType;
  device?: DeviceLike;
  /** Seed of the initialisation; the same seed gives the same weights on every device and runtime. */
  seed?: number;
}

/** A trainable tensor and its accumulated gradient. */
export interface Parameter {
  readonly name: string;
  readonly value: Tensor;
  readonly grad: Tensor;
}

export type State = readonly [h: Tensor, c: Tensor];

export interface SequenceOptions {
  /** Keep what backward needs (default true); false runs inference. */
  grad?: boolean;
  /** One native call per step instead of one for the whole sequence (default false; for comparison). */
  perStep?: boolean;
}

/** One step of the module: its outputs, and backward, which accumulates the parameters' gradients. */
export interface LLTMStep extends Disposable {
  readonly newH: Tensor;
  readonly newCell: Tensor;
  /** Returns the gradients of the input and the state, and adds those of the parameters to their grad. */
  backward(gradH: Tensor, gradCell: Tensor): { dInput: Tensor; dOldH: Tensor; dOldCell: Tensor; dispose(): void } & Disposable;
  dispose(): void;
}

/** T steps of the module over inputs [T, B, F]. */
export interface LLTMSequence extends Disposable {
  /** Every step's h, [T, B, S]. */
  readonly outputs: Tensor;
  /** The state after the last step. */
  readonly h: Tensor;
  readonly c: Tensor;
  /**
   * Backpropagation through time from gradients on every step's h ([T, B, S]; zeros when
   * omitted) and on the final state; returns the gradients of the inputs and the initial
   * state, and adds those of the parameters to their grad. Runs once.
   */
  backward(gradOutputs?: Tensor, gradState?: State): { dInputs: Tensor; dH0: Tensor; dC0: Tensor; dispose(): void } & Disposable;
  dispose(): void;
}

/** Why a sequence's backward cannot run: it ran with { grad: false }, or its backward has run or it was disposed. */
function backwardRefused(grad: boolean): LLTMError {
  return new LLTMError(
    "INVALID_ARGUMENT",
    "LLTMLayer.sequence backward: " + (grad ? "backward has already run or the sequence was disposed" : "the sequence ran with { grad: false }"),
  );
}

export class LLTMLayer implements Disposable {
  /** The parameters and their gradients, replaced together by to(). */
  private tensors: { weights: Tensor; bias: Tensor; weightsGrad: Tensor; biasGrad: Tensor };
  readonly inputFeatures: number;
  readonly stateSize: number;

  constructor(inputFeatures: number, stateSize: number, options: LLTMLayerOptions = {}) {
    if (!Number.isSafeInteger(inputFeatures) || inputFeatures < 1 || !Number.isSafeInteger(stateSize) || stateSize < 1) {
      throw new LLTMError("INVALID_ARGUMENT", `LLTMLayer: inputFeatures and stateSize must be positive integers, got ${inputFeatures} and ${stateSize}`);
    }
    this.inputFeatures = inputFeatures;
    this.stateSize = stateSize;
    const dtype = checkDType(options.dtype ?? "float32", "LLTMLayer: dtype");
    const device = Device.of(options.device ?? "cpu");
    requireDevice(device, "new LLTM");
    const weightsShape = [3 * stateSize, stateSize + inputFeatures];
    const elements = weightsShape[0]! * weightsShape[1]!;
    if (elements * itemSize(dtype) > Number.MAX_SAFE_INTEGER) {
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `LLTMLayer: weights of shape [${weightsShape.join(", ")}] (3S, S+F) for inputFeatures ${inputFeatures} and stateSize ` +
          `${stateSize} would take ${elements * itemSize(dtype)} bytes, more than a tensor can have`,
      );
    }
    const rng = new Random(options.seed ?? 0);
    const bound = 1 / Math.sqrt(stateSize);
    const uniform = (shape: number[]) => {
      const values = valueArray(dtype, shape.reduce((a, b) => a * b));
      for (let i = 0; i < values.length; i++) values[i] = -bound + 2 * bound * rng.uniform();
      return Tensor.fromTypedArray(values, shape, { dtype, device });
    };
    const weights = uniform(weightsShape);
    const bias = uniform([3 * stateSize]);
    this.tensors = {
      weights, bias,
      weightsGrad: Tensor.zeros(weights.shape, { dtype, device }),
      biasGrad: Tensor.zeros(bias.shape, { dtype, device }),
    };
  }

  get weights(): Tensor {
    return this.tensors.weights;
  }

  get bias(): Tensor {
    return this.tensors.bias;
  }

  get weightsGrad(): Tensor {
    return this.tensors.weightsGrad;
  }

  get biasGrad(): Tensor {
    return this.tensors.biasGrad;
  }

  get dtype(): DType {
    return this.weights.dtype;
  }

  get device(): Device {
    return this.weights.device;
  }

  parameters(): Parameter[] {
    return [
      { name: "weights", value: this.weights, grad: this.weightsGrad },
      { name: "bias", value: this.bias, grad: this.biasGrad },
    ];
  }

  private gradients(): { dWeights: Tensor; dBias: Tensor } {
    return { dWeights: this.weightsGrad, dBias: this.biasGrad };
  }

  zeroGrad(): void {
    this.weightsGrad.fill(0);
    this.biasGrad.fill(0);
  }

  /** Zero state [B, S] for a batch of B, on the module's device. */
  initialState(batch: number): State {
    const o = { dtype: this.dtype, device: this.device };
    return [Tensor.zeros([batch, this.stateSize], o), Tensor.zeros([batch, this.stateSize], o)];
  }

  /** One step: input [B, F] and state ([B, S], [B, S]). */
  forward(input: Tensor, [h, c]: State): LLTMStep {
    this.assertLive("LLTMLayer.forward");
    // The width is checked here, so that a wrong one blames the input rather than the weights it does not fit.
    if (input instanceof Tensor && !input.disposed && (input.ndim !== 2 || input.shape[1] !== this.inputFeatures)) {
      throw new LLTMError(
        "SHAPE_MISMATCH",
        `LLTMLayer.forward: the input has shape [${input.shape.join(", ")}]; it must be [B, ${this.inputFeatures}] ` +
          `(this LLTMLayer's inputFeatures is ${this.inputFeatures})`,
      );
    }
    const fn = LLTMFunction.forward(input, this.weights, this.bias, h, c);
    const accumulate = (gradH: Tensor, gradCell: Tensor) => fn.backward(gradH, gradCell, this.gradients());
    const dispose = () => fn.dispose();
    return { newH: fn.newH, newCell: fn.newCell, backward: accumulate, dispose, [Symbol.dispose]: dispose };
  }

  /**
   * T steps over inputs [T, B, F] from state ([B, S], [B, S]), in one native
   * call (lltm_sequence_forward). With { grad: false } nothing is kept for a
   * backward pass (inference: less memory, and backward throws); with
   * { perStep: true } the steps run one native call each, as ABI version 1 did
   * (for comparison).
   */
  sequence(inputs: Tensor, state: State, options: SequenceOptions = {}): LLTMSequence {
    this.assertLive("LLTMLayer.sequence");
    if (inputs.ndim !== 3 || inputs.shape[2] !== this.inputFeatures) {
      throw new LLTMError(
        "SHAPE_MISMATCH",
        `LLTMLayer.sequence: 'inputs' must have shape [T, B, ${this.inputFeatures}], got [${inputs.shape.join(", ")}] ` +
          `(this LLTMLayer's inputFeatures is ${this.inputFeatures})`,
      );
    }
    if (options.perStep) return this.sequenceByStep(inputs, state);
    const [h0, c0] = state;
    const grad = options.grad ?? true;
    if (isOneStep(inputs, this.weights, this.bias, h0, c0)) return this.oneStep(inputs, state, grad);
    const fw = lltmSequenceForward(inputs, this.weights, this.bias, h0, c0, { training: grad });
    // References (not copies) of what backward reads besides the reserve, as the step's autograd keeps them.
    let saved = grad
      ? { reserve: fw.reserve!, inputs: inputs.retain(), weights: this.weights.retain(), h0: h0.retain() }
      : undefined;
    const release = () => {
      if (!saved) return;
      for (const t of [saved.reserve, saved.inputs, saved.weights, saved.h0]) t.dispose();
      saved = undefined;
    };
    const backward = (gradOutputs?: Tensor, gradState?: State) => {
      if (!saved) {
        throw backwardRefused(grad);
      }
      const into = this.gradients();
      const g = lltmSequenceBackwardAccumulate(
        gradOutputs, gradState?.[0], gradState?.[1], saved.reserve, saved.inputs, saved.weights, saved.h0,
        into.dWeights, into.dBias,
      );
      release();
      return { dInputs: g.dInputs, dH0: g.dH0, dC0: g.dC0, dispose: g.dispose, [Symbol.dispose]: g.dispose };
    };
    const dispose = () => {
      release();
      for (const t of [fw.outputs, fw.lastH, fw.lastCell]) t.dispose();
    };
    return { outputs: fw.outputs, h: fw.lastH, c: fw.lastCell, backward, dispose, [Symbol.dispose]: dispose };
  }

  /**
   * A one-step sequence() as the cell: the step's kernels, one native call each way (on CUDA one launch,
   * where the sequence engine runs a product, its recurrence, and in the backward its products); its
   * outputs are h viewed as [1, B, S]. With { grad: false } only h and c are kept.
   */
  private oneStep(inputs: Tensor, [h0, c0]: State, grad: boolean): LLTMSequence {
    const [, B, F] = inputs.shape as [number, number, number];
    const S = this.stateSize;
    using x = inputs.reshape([B, F]);
    let fn: LLTMFunction | undefined;
    let h: Tensor, c: Tensor;
    if (grad) {
      fn = LLTMFunction.forward(x, this.weights, this.bias, h0, c0);
      h = fn.newH;
      c = fn.newCell;
    } else {
      const f = lltmForward(x, this.weights, this.bias, h0, c0);
      for (const t of [f.inputGate, f.outputGate, f.candidateCell, f.X, f.gateWeights]) t.dispose();
      h = f.newH;
      c = f.newCell;
    }
    const outputs = h.reshape([1, B, S]);
    const o = { dtype: this.dtype, device: this.device };
    const backward = (gradOutputs?: Tensor, gradState?: State) => {
      if (fn === undefined) {
        throw backwardRefused(grad);
      }
      if (gradOutputs && !sameShape(gradOutputs.shape, [1, B, S])) {
        throw new LLTMError("SHAPE_MISMATCH", `LLTMLayer.sequence backward: 'gradOutputs' must have shape [1, ${B}, ${S}], got [${gradOutputs.shape.join(", ")}]`);
      }
      const badState = gradState?.find((g) => !sameShape(g.shape, [B, S]));
      if (badState) {
        throw new LLTMError("SHAPE_MISMATCH", `LLTMLayer.sequence backward: 'gradState' must hold two [${B}, ${S}] tensors, got [${badState.shape.join(", ")}]`);
      }
      // h_1's gradient: the outputs' and the final state's, whichever are given (zeros for neither); the
      // kernel adds the outputs' where both are.
      using fromOutputs = gradOutputs?.reshape([B, S]);
      const fromState = gradState?.[0];
      using zeroH = fromState ?? fromOutputs ? undefined : Tensor.zeros([B, S], o);
      using zeroCell = gradState ? undefined : Tensor.zeros([B, S], o);
      const gradH = (fromState ?? fromOutputs ?? zeroH)!, gradCell = (gradState?.[1] ?? zeroCell)!;
      const g = fn.backward(gradH, gradCell, this.gradients(), { gradOutput: fromState ? fromOutputs : undefined });
      fn = undefined;
      const dInputs = g.dInput.reshape([1, B, F]);
      g.dInput.dispose();
      const dispose = () => [dInputs, g.dOldH, g.dOldCell].forEach((t) => t.dispose());
      return { dInputs, dH0: g.dOldH, dC0: g.dOldCell, dispose, [Symbol.dispose]: dispose };
    };
    const dispose = () => {
      fn?.dispose();
      fn = undefined;
      for (const t of [outputs, h, c]) t.dispose();
    };
    return { outputs, h, c, backward, dispose, [Symbol.dispose]: dispose };
  }

  /** sequence() one native call per step, with backpropagation through time one step at a time. */
  private sequenceByStep(inputs: Tensor, [h0, c0]: State): LLTMSequence {
    const [T, B] = [inputs.shape[0]!, inputs.shape[1]!];
    const S = this.stateSize, F = this.inputFeatures;
    const o = { dtype: this.dtype, device: this.device };
    const outputs = Tensor.empty([T, B, S], o);
    const steps: LLTMFunction[] = [];
    let h = h0, c = c0;
    for (let t = 0; t < T; t++) {
      using x = stepOf(inputs, t, [B, F]);
      const fn = LLTMFunction.forward(x, this.weights, this.bias, h, c);
      steps.push(fn);
      using slot = stepOf(outputs, t, [B, S]);
      slot.copyFrom(fn.newH);
      h = fn.newH;
      c = fn.newCell;
    }
    const disposeAll = () => {
      outputs.dispose();
      for (const fn of steps) fn.dispose();
    };
    const backward = (gradOutputs?: Tensor, gradState?: State) => {
      if (gradOutputs && !sameShape(gradOutputs.shape, [T, B, S])) {
        throw new LLTMError("SHAPE_MISMATCH", `LLTMLayer.sequence backward: 'gradOutputs' must have shape [${T}, ${B}, ${S}], got [${gradOutputs.shape.join(", ")}]`);
      }
      const dInputs = Tensor.empty([T, B, F], o);
      // The carried gradients are the previous step's outputs (ours to change), so
      // a step costs one backward, one add and one copy on the device.
      let carryH = gradState ? gradState[0].clone() : Tensor.zeros([B, S], o);
      let carryC = gradState ? gradState[1].clone() : Tensor.zeros([B, S], o);
      const into = this.gradients();
      for (let t = T - 1; t >= 0; t--) {
        if (gradOutputs) {
          using g = stepOf(gradOutputs, t, [B, S]);
          carryH.add_(g);
        }
        const grads = steps[t]!.backward(carryH, carryC, into);
        {
          using slot = stepOf(dInputs, t, [B, F]);
          slot.copyFrom(grads.dInput);
        }
        grads.dInput.dispose();
        carryH.dispose();
        carryC.dispose();
        carryH = grads.dOldH;
        carryC = grads.dOldCell;
      }
      const result = { dInputs, dH0: carryH, dC0: carryC };
      const dispose = () => [dInputs, carryH, carryC].forEach((t) => t.dispose());
      return { ...result, dispose, [Symbol.dispose]: dispose };
    };
    return { outputs, h, c, backward, dispose: disposeAll, [Symbol.dispose]: disposeAll };
  }

  /** Writes the parameters to a safetensors file ("weights", "bias"), as PyTorch's LLTM names them. */
  save(path: string): void {
    saveCheckpoint(path, { weights: this.weights, bias: this.bias }, {
      format: "lltm", input_features: String(this.inputFeatures), state_size: String(this.stateSize),
    });
  }

  /** Loads parameters saved by save() (or by PyTorch's safetensors) after checking names, shapes and dtype. */
  load(path: string): void {
    const { tensors } = loadCheckpoint(path, { device: this.device });
    try {
      for (const p of this.parameters()) {
        const t = tensors[p.name];
        if (!t) throw new LLTMError("INVALID_ARGUMENT", `LLTMLayer.load: ${path} has no tensor '${p.name}'`);
        if (t.dtype !== p.value.dtype) {
          throw new LLTMError("INVALID_DTYPE", `LLTMLayer.load: ${path}: '${p.name}' is ${t.dtype}, the module is ${p.value.dtype}`);
        }
        if (!sameShape(t.shape, p.value.shape)) {
          throw new LLTMError(
            "SHAPE_MISMATCH",
            `LLTMLayer.load: ${path}: '${p.name}' has shape [${t.shape.join(", ")}], the module needs [${p.value.shape.join(", ")}]`,
          );
        }
      }
      this.weights.copyFrom(tensors.weights!);
      this.bias.copyFrom(tensors.bias!);
    } finally {
      for (const t of Object.values(tensors)) t.dispose();
    }
  }

  /**
   * Moves the parameters and their gradients to `device`, in place (as
   * PyTorch's Module.to); returns this module. Optimizers made before hold the
   * old tensors, so make them after moving. On failure the module is unchanged.
   */
  to(device: DeviceLike): this {
    const target = Device.of(device);
    if (target === this.device) return this;
    requireDevice(target, "LLTMLayer.to");
    const old = this.tensors;
    const moved: Tensor[] = [];
    try {
      for (const t of [old.weights, old.bias, old.weightsGrad, old.biasGrad]) moved.push(t.to(target));
    } catch (e) {
      for (const t of moved) t.dispose();
      throw e;
    }
    const [weights, bias, weightsGrad, biasGrad] = moved as [Tensor, Tensor, Tensor, Tensor];
    this.tensors = { weights, bias, weightsGrad, biasGrad };
    for (const t of [old.weights, old.bias, old.weightsGrad, old.biasGrad]) t.dispose();
    return this;
  }

  /** A copy of the module on `device` (parameters; gradients start at zero). */
  copyTo(device: DeviceLike): LLTMLayer {
    const copy = new LLTMLayer(this.inputFeatures, this.stateSize, { dtype: this.dtype, device });
    try {
      copy.weights.copyFrom(this.weights);
      copy.bias.copyFrom(this.bias);
    } catch (e) {
      copy.dispose();
      throw e;
    }
    return copy;
  }

  dispose(): void {
    const t = this.tensors;
    for (const x of [t.weights, t.bias, t.weightsGrad, t.biasGrad]) x.dispose();
  }

  /** Throws when the module has been disposed, naming `fn`. */
  private assertLive(fn: string): void {
    if (this.tensors.weights.disposed) throw new LLTMError("DISPOSED", `${fn}: this LLTMLayer has been disposed`);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** Step t of a [T, ...] tensor as a tensor of `shape` (a view when the step is contiguous). */
function stepOf(t: Tensor, step: number, shape: number[]): Tensor {
  using slice = t.narrow(0, step, 1);
  return slice.reshape(shape);
}
