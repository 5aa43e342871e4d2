/** Autograd: the tape, grad mode, and the ops that record themselves on it. */
export { isGradEnabled, noGrad } from "./grad_mode.ts";
export { crossEntropy } from "./functions/cross_entropy.ts";
export { add, cat, mean, mseLoss, mul, scale, softmax, sub, sum } from "./functions/elementwise.ts";
export { embedding } from "./functions/embedding.ts";
export { gather } from "./functions/gather.ts";
export { linear } from "./functions/linear.ts";
export { lltmCell, lltmSequence, type SequenceOutputs } from "./functions/lltm.ts";
export { stack } from "./functions/stack.ts";
export { type GradientTarget, LLTMFunction } from "./lltm_function.ts";
