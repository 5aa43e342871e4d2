/**
 * compileStep(fn): a training step whose per-call host cost is one graph
 * launch. On a CUDA device the first calls run fn as it is (warm-up: the
 * gradients, the optimizer's state and the memory pool's blocks are made
 * there), the next one runs it once more while the library records every
 * launch into a CUDA graph on the device's stream, and from then on each
 * call copies its inputs into the tensors the graph reads and replays the
 * graph, optimizer update included; the outputs are the same tensors at
 * every replay (each call returns new references to them). From the first
 * call, fn is given the step's own input tensors on the device, into which
 * each call's inputs (on the device or the host) are copied, so that warm-up
 * and capture see the same memory. An input in pinned host memory
 * (`pinMemory`) is copied without waiting, as torch's
 * copy_(…, non_blocking=True): it may be disposed at once, but must not be
 * written until the step has run. On the CPU, where a launch costs nothing
 * to save, every call runs fn on the inputs as given.
 *
 * What fn may do: anything that stays on the device. What it may not: read
 * the device to the host (item(), toTypedArray(), a copy to the CPU), copy
 * from the host, or depend on host state that changes between calls
 * (dropout's host-drawn mask, multinomial's generator); those are refused
 * while capturing. Hyperparameters an optimizer bakes into its launches must
 * not change after the capture (refused at the next call); Adam and AdamW
 * made with { capturable: true } read lr and the step count on the device,
 * so that schedules work.
 */
import { Device, type DeviceLike } from "../device.ts";
import { LLTMError } from "../errors.ts";
import * as native from "../native/index.ts";
import { sameShape, Tensor } from "../tensor/index.ts";
import { type Capture, withCapture } from "./capture.ts";

/** What a step may return: nothing, a tensor, or an array or record of tensors. */
export type StepOutput = void | Tensor | readonly Tensor[] | Readonly<Record<string, Tensor>>;

export interface CompileStepOptions {
  /** The device the step runs on (default: that of its first CUDA input; the CPU when none is on CUDA). */
  device?: DeviceLike;
  /** Calls run as they are before the capture (default 2: the first makes gradients and state, the second fills the pool). */
  warmup?: number;
  /** false: every call runs fn (for comparison, or to debug the step); default true. */
  enabled?: boolean;
}

export interface CompiledStep<A extends readonly Tensor[], R extends StepOutput> extends Disposable {
  (...inputs: A): R;
  /** Whether the step has been captured (calls now replay it). */
  readonly captured: boolean;
  /** Frees the graph, its inputs and outputs; the memory it kept goes back to the pool. */
  dispose(): void;
}

const FN = "compileStep";

function deviceOf(inputs: readonly Tensor[]): Device | undefined {
  return inputs.find((t) => t.device.kind === "cuda")?.device;
}

function tensorsOf(out: StepOutput): Tensor[] {
  if (out === undefined) return [];
  if (out instanceof Tensor) return [out];
  if (Array.isArray(out)) return [...out];
  return Object.values(out as Record<string, Tensor>);
}

/** New references to a step's outputs, in its shape. */
function retained<R extends StepOutput>(out: R): R {
  if (out === undefined) return out;
  if (out instanceof Tensor) return out.retain() as R;
  if (Array.isArray(out)) return out.map((t: Tensor) => t.retain()) as unknown as R;
  return Object.fromEntries(Object.entries(out as Record<string, Tensor>).map(([k, t]) => [k, t.retain()])) as R;
}

function checkInputs(inputs: readonly unknown[], expected?: readonly Tensor[]): void {
  inputs.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${FN}: input ${i} is not a Tensor`);
    t.assertLive(`${FN}: input ${i}`);
  });
  if (expected === undefined) return;
  if (inputs.length !== expected.length) {
    throw new LLTMError("INVALID_ARGUMENT", `${FN}: the step was captured with ${expected.length} inputs, got ${inputs.length}`);
  }
  (inputs as readonly Tensor[]).forEach((t, i) => {
    const e = expected[i]!;
    if (t.dtype !== e.dtype || !sameShape(t.shape, e.shape)) {
      throw new LLTMError(
        "SHAPE_MISMATCH",
        `${FN}: input ${i} is ${t.dtype} [${t.shape.join(", ")}], the step was captured with ${e.dtype} [${e.shape.join(", ")}] ` +
          "(a captured step replays one shape; compile another step for another)",
      );
    }
  });
}

/** fn as a step captured once on its inputs' CUDA device and replayed (on the CPU: fn itself, called each time). */
export function compileStep<A extends readonly Tensor[], R extends StepOutput>(
  fn: (...inputs: A) => R,
  options: CompileStepOptions = {},
): CompiledStep<A, R> {
  if (typeof fn !== "function") throw new LLTMError("INVALID_ARGUMENT", `${FN}: 'fn' must be a function`);
  const warmup = options.warmup ?? 2;
  if (!Number.isSafeInteger(warmup) || warmup < 1) {
    throw new LLTMError("INVALID_ARGUMENT", `${FN}: 'warmup' must be an integer ≥ 1 (the step's state is made eagerly first), got ${warmup}`);
  }
  const enabled = options.enabled ?? true;
  const fixed = options.device === undefined ? undefined : Device.of(options.device);
  let calls = 0;
  let statics: { device: Device; inputs: Tensor[] } | undefined;
  let graph: { handle: number; output: R; hooks: (() => void)[] } | undefined;
  let disposed = false;

  /** The step's own inputs on `device` (made at the first call), holding this call's values. */
  function stage(device: Device, inputs: readonly Tensor[]): Tensor[] {
    statics ??= { device, inputs: inputs.map((t) => Tensor.empty(t.shape, { dtype: t.dtype, device })) };
    inputs.forEach((t, i) => {
      const s = statics!.inputs[i]!;
      if (t.dataAddress !== s.dataAddress || t.device !== s.device) s.copyFrom(t, { nonBlocking: t.isPinned() });
    });
    return statics.inputs;
  }

  function capture(device: Device, inputs: Tensor[]): R {
    const hooks: (() => void)[] = [];
    const c: Capture = { device, beforeReplay: (hook) => void hooks.push(hook) };
    native.captureBegin(FN, device);
    let output: R;
    try {
      output = withCapture(c, () => fn(...(inputs as unknown as A)));
    } catch (e) {
      try {
        native.graphDestroy(FN, native.captureEnd(FN, device), device);
      } catch {
        // The capture is over either way; the step's own error says what went wrong.
      }
      throw e;
    }
    let handle: number;
    try {
      handle = native.captureEnd(FN, device);
    } catch (e) {
      for (const t of tensorsOf(output)) t.dispose();
      throw e;
    }
    graph = { handle, output, hooks };
    return replay(device);
  }

  function replay(device: Device): R {
    const g = graph!;
    for (const hook of g.hooks) hook();
    native.graphReplay(FN, g.handle, device);
    return retained(g.output);
  }

  const step = ((...inputs: A): R => {
    if (disposed) throw new LLTMError("DISPOSED", `${FN}: the compiled step has been disposed`);
    checkInputs(inputs, statics?.inputs);
    const device = statics?.device ?? fixed ?? deviceOf(inputs);
    if (device === undefined || device.kind !== "cuda") return fn(...inputs);
    const staged = stage(device, inputs);
    if (graph !== undefined) return replay(device);
    if (!enabled || calls++ < warmup) return fn(...(staged as unknown as A));
    return capture(device, staged);
  }) as CompiledStep<A, R>;

  Object.defineProperty(step, "captured", { get: () => graph !== undefined });
  step.dispose = () => {
    if (disposed) return;
    disposed = true;
    const g = graph, st = statics;
    graph = undefined;
    statics = undefined;
    if (g !== undefined) {
      native.graphDestroy(FN, g.handle, st!.device);
      for (const t of tensorsOf(g.output)) t.dispose();
    }
    for (const t of st?.inputs ?? []) t.dispose();
  };
  step[Symbol.dispose] = step.dispose;
  return step;
}
