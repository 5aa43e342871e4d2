/** Layers as torch.nn has them: Module, Linear, Embedding, Dropout, Sequential, ModuleList, LLTMCell and LLTM. */
export { clipGradNorm_ } from "./clip_grad.ts";
export { ModuleList, Sequential, type TensorModule } from "./containers.ts";
export { Dropout } from "./dropout.ts";
export { Embedding } from "./embedding.ts";
export type { ParameterOptions } from "./init.ts";
export { Linear, type LinearOptions } from "./linear.ts";
export { LLTM, LLTMCell, type LLTMForwardOptions, type LLTMOptions, type LLTMOutput, type LLTMState } from "./lltm.ts";
export { type LoadStateDictOptions, Module } from "./module.ts";
