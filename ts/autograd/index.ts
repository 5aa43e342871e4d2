/** Autograd: the tape, grad mode, and the ops that record themselves on it. */
export { isGradEnabled, noGrad } from "./grad_mode.ts";
export { linear } from "./functions/linear.ts";
export { lltmCell, lltmSequence, type SequenceOutputs } from "./functions/lltm.ts";
export { type GradientTarget, LLTMFunction } from "./lltm_function.ts";
