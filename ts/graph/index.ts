/** Captured training steps: compileStep, and the capture state the ops and optimizers consult. */
export { activeCapture, type Capture, refuseUnderCapture } from "./capture.ts";
export { type CompiledStep, compileStep, type CompileStepOptions, type StepOutput } from "./compile_step.ts";
