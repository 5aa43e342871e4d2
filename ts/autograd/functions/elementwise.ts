/**
 * Elementwise ops and reductions on the tape (the ADD, MUL, SCALE, SUM and
 * SOFTMAX ops): add, sub, mul, scale, sum, mean and softmax over the last
 * dimension, each with its backward through the same ops.
 */
import { LLTMError } from "../../errors.ts";
import * as native from "../../native/index.ts";
import { checkCommon } from "../../ops/lltm.ts";
import { sameShape, Tensor } from "../../tensor/index.ts";
import { withGradMode } from "../grad_mode.ts";
import { Node } from "../node.ts";
import { needsRecording, recordOne } from "../record.ts";

const ADD = native.op("ADD"), MUL = native.op("MUL"), SCALE = native.op("SCALE"), SUM = native.op("SUM");
const SOFTMAX = native.op("SOFTMAX"), SOFTMAX_BACKWARD = native.op("SOFTMAX_BACKWARD");

function emptyLike(t: Tensor): Tensor {
  return Tensor.empty(t.shape, { dtype: t.dtype, device: t.device });
}

/** Runs `o` into a fresh `out` (the first slot), freeing it if the op refuses. */
function into(out: Tensor, o: native.Op, fn: string, ins: readonly Tensor[], scalars?: readonly number[]): Tensor {
  try {
    native.run(o, fn, [out, ...ins], 0, scalars);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

function scaled(g: Tensor, alpha: number): Tensor {
  return alpha === 1 ? g.retain() : into(emptyLike(g), SCALE, "backward (scale)", [g], [alpha]);
}

function checkPair(fn: string, a: Tensor, b: Tensor): void {
  checkCommon(fn, ["a", "b"], [a, b]);
  if (!sameShape(a.shape, b.shape)) {
    throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'a' has shape [${a.shape.join(", ")}] but 'b' [${b.shape.join(", ")}]; expected equal shapes`);
  }
}

class AddNode extends Node {
  private readonly alpha: number;

  constructor(alpha: number) {
    super("add");
    this.alpha = alpha;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const g = grads[0]!;
    return [this.needs(0) ? g.retain() : undefined, this.needs(1) ? scaled(g, this.alpha) : undefined];
  }

  protected releaseSaved(): void {}
}

/** a + alpha·b, elementwise over equal shapes. */
export function add(a: Tensor, b: Tensor, alpha = 1): Tensor {
  checkPair("add", a, b);
  const out = withGradMode(false, () => into(emptyLike(a), ADD, "add", [a, b], [alpha]));
  return needsRecording([a, b]) ? recordOne(new AddNode(alpha), [a, b], out) : out;
}

/** a − b, elementwise over equal shapes. */
export function sub(a: Tensor, b: Tensor): Tensor {
  return add(a, b, -1);
}

class MulNode extends Node {
  private saved: { a: Tensor; b: Tensor } | undefined;

  constructor(a: Tensor, b: Tensor) {
    super("mul");
    this.saved = { a: a.retain(), b: b.retain() };
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const g = grads[0]!, { a, b } = this.saved!;
    return [
      this.needs(0) ? into(emptyLike(g), MUL, "backward (mul)", [g, b]) : undefined,
      this.needs(1) ? into(emptyLike(g), MUL, "backward (mul)", [g, a]) : undefined,
    ];
  }

  protected releaseSaved(): void {
    this.saved?.a.dispose();
    this.saved?.b.dispose();
    this.saved = undefined;
  }
}

/** a·b, elementwise over equal shapes. */
export function mul(a: Tensor, b: Tensor): Tensor {
  checkPair("mul", a, b);
  const out = withGradMode(false, () => into(emptyLike(a), MUL, "mul", [a, b]));
  return needsRecording([a, b]) ? recordOne(new MulNode(a, b), [a, b], out) : out;
}

class ScaleNode extends Node {
  private readonly alpha: number;

  constructor(alpha: number) {
    super("scale");
    this.alpha = alpha;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    return [scaled(grads[0]!, this.alpha)];
  }

  protected releaseSaved(): void {}
}

/** alpha·x. */
export function scale(x: Tensor, alpha: number): Tensor {
  checkCommon("scale", ["x"], [x]);
  if (typeof alpha !== "number") throw new LLTMError("INVALID_ARGUMENT", `scale: 'alpha' must be a number, got ${typeof alpha}`);
  const out = withGradMode(false, () => into(emptyLike(x), SCALE, "scale", [x], [alpha]));
  return needsRecording([x]) ? recordOne(new ScaleNode(alpha), [x], out) : out;
}

class SumNode extends Node {
  private readonly shape: readonly number[];
  private readonly factor: number;

  constructor(x: Tensor, factor: number) {
    super("sum");
    this.shape = x.shape;
    this.factor = factor;
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const g = grads[0]!;
    // Every element's gradient is the total's times the factor: the [1] gradient broadcast by a stride-0 view.
    using spread = g.expand(this.shape);
    return [into(Tensor.empty(this.shape, { dtype: g.dtype, device: g.device }), SCALE, "backward (sum)", [spread], [this.factor])];
  }

  protected releaseSaved(): void {}
}

function reduce(fn: string, x: Tensor, factor: number): Tensor {
  checkCommon(fn, ["x"], [x]);
  const out = withGradMode(false, () => {
    const o = Tensor.empty([1], { dtype: x.dtype, device: x.device });
    try {
      native.run(SUM, fn, [x, o], 0, [factor]);
    } catch (e) {
      o.dispose();
      throw e;
    }
    return o;
  });
  return needsRecording([x]) ? recordOne(new SumNode(x, factor), [x], out) : out;
}

/** The sum of every element, [1]. */
export function sum(x: Tensor): Tensor {
  return reduce("sum", x, 1);
}

/** The mean of every element, [1]. */
export function mean(x: Tensor): Tensor {
  return reduce("mean", x, 1 / x.numel);
}

class SoftmaxNode extends Node {
  private y: Tensor | undefined;

  constructor(y: Tensor) {
    super("softmax");
    this.y = y.retain();
  }

  backward(grads: readonly (Tensor | undefined)[]): (Tensor | undefined)[] {
    const y = this.y!, g = grads[0]!;
    const d = emptyLike(y);
    try {
      native.run(SOFTMAX_BACKWARD, "backward (softmax)", [y, g, d]);
    } catch (e) {
      d.dispose();
      throw e;
    }
    return [d];
  }

  protected releaseSaved(): void {
    this.y?.dispose();
    this.y = undefined;
  }
}

/** Softmax over each row of x [N, V]. */
export function softmax(x: Tensor): Tensor {
  const fn = "softmax";
  checkCommon(fn, ["x"], [x]);
  if (x.ndim !== 2) throw new LLTMError("SHAPE_MISMATCH", `${fn}: 'x' must be [N, V], got [${x.shape.join(", ")}]`);
  const y = withGradMode(false, () => {
    const o = emptyLike(x);
    try {
      native.run(SOFTMAX, fn, [x, o]);
    } catch (e) {
      o.dispose();
      throw e;
    }
    return o;
  });
  return needsRecording([x]) ? recordOne(new SoftmaxNode(y), [x], y) : y;
}
