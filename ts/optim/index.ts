/** Optimizers (SGD, Adam, AdamW) over parameter groups, and learning-rate schedules. */
export { Adam, type AdamOptions, AdamW, type AdamWOptions } from "./adam.ts";
export {
  type MasterWeightsOption, Optimizer, type OptimizerState, type ParameterGroup, type ParameterLike, type Parameters,
} from "./optimizer.ts";
export { CosineAnnealingLR, LambdaLR, LRScheduler, StepLR } from "./schedulers.ts";
export { SGD, type SGDOptions } from "./sgd.ts";
