/**
 * Recording ops on the tape: an op whose inputs include one that requires
 * gradients, run while grad mode is on, marks its outputs with its node;
 * views and copies of the Tensor class record themselves the same way.
 */
import { LLTMError } from "../errors.ts";
import type { Tensor } from "../tensor/index.ts";
import { isGradEnabled } from "./grad_mode.ts";
import { type Edge, Node } from "./node.ts";

export { runBackward } from "./engine.ts";

/** Whether an op on `inputs` must record itself: grad mode is on and one of them requires gradients. */
export function needsRecording(inputs: readonly (Tensor | undefined)[]): boolean {
  if (!isGradEnabled()) return false;
  for (let i = 0; i < inputs.length; i++) if (inputs[i]?.requiresGrad) return true;
  return false;
}

function edgeOf(t: Tensor | undefined): Edge | undefined {
  if (t === undefined || !t.requiresGrad) return undefined;
  const fn = t.gradFn;
  if (fn === undefined) return { leaf: t };
  if (fn.released) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `${fn.name}: an input's graph has already been consumed by backward() (detach() it to use its value without gradients)`,
    );
  }
  fn.ref();
  return { node: fn, index: t.outputIndex };
}

/** Records `node` as the op that made `outputs` from `inputs` (in the order its backward uses); returns `outputs`. */
export function record<T extends readonly Tensor[]>(node: Node, inputs: readonly (Tensor | undefined)[], outputs: T): T {
  node.edges = inputs.map(edgeOf);
  node.outputs = outputs;
  for (let i = 0; i < outputs.length; i++) {
    const t = outputs[i]!;
    t.gradFn = node;
    t.outputIndex = i;
    node.ref();
  }
  return outputs;
}

/** A view or copy of one tensor: its gradient is the output's, mapped back by `backward`. */
class ViewNode extends Node {
  private readonly input: { shape: readonly number[]; dtype: Tensor["dtype"]; device: Tensor["device"] };
  private readonly map: (grad: Tensor, input: ViewNode["input"]) => Tensor;

  constructor(name: string, input: Tensor, map: (grad: Tensor, input: ViewNode["input"]) => Tensor) {
    super(name);
    this.input = { shape: input.shape, dtype: input.dtype, device: input.device };
    this.map = map;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const g = grads[0];
    return [g === undefined ? undefined : this.map(g, this.input)];
  }

  protected releaseSaved(): void {}
}

/** Records `output`, a view or copy of `input`, when `input` requires gradients; returns `output`. */
export function recordView(
  name: string, input: Tensor, output: Tensor, map: (grad: Tensor, input: { shape: readonly number[]; dtype: Tensor["dtype"]; device: Tensor["device"] }) => Tensor,
): Tensor {
  if (!input.requiresGrad || !isGradEnabled()) return output;
  record(new ViewNode(name, input, map), [input], [output]);
  return output;
}

/** Refuses an in-place change (or a broadcast) the tape cannot follow, of or from a tensor that requires gradients. */
export function refuseInPlace(name: string, ...tensors: Tensor[]): void {
  if (!isGradEnabled()) return;
  for (const t of tensors) {
    if (t.requiresGrad) {
      throw new LLTMError(
        "INVALID_ARGUMENT",
        `${name}: a tensor that requires gradients cannot take part outside the tape; run it inside noGrad(() => ...) or on detach()`,
      );
    }
  }
}

/** record() of an op with one output; returns it. */
export function recordOne(node: Node, inputs: readonly (Tensor | undefined)[], output: Tensor): Tensor {
  record(node, inputs, [output]);
  return output;
}
