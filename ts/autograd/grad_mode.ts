/**
 * Whether ops record themselves on the tape: on by default; off inside
 * noGrad(fn) (inference, evaluation, an optimizer's update) and while the
 * engine runs a backward pass (a gradient is not itself differentiated).
 */
let enabled = true;

export function isGradEnabled(): boolean {
  return enabled;
}

/** Runs `fn` with recording set to `on`, restoring the previous mode however `fn` ends. */
export function withGradMode<T>(on: boolean, fn: () => T): T {
  const previous = enabled;
  enabled = on;
  try {
    return fn();
  } finally {
    enabled = previous;
  }
}

/** Runs `fn` with no op recorded on the tape (as torch.no_grad): its results never require gradients. */
export function noGrad<T>(fn: () => T): T {
  return withGradMode(false, fn);
}
