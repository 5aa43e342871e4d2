/**
 * lltm: the LLTM recurrent cell on native CPU and CUDA kernels, for Bun and Deno.
 *
 * The native library is opened on first use (see native/library.ts for where
 * it is looked for, and jit.ts for building it on demand); under Deno that
 * needs --allow-ffi (and --allow-env=LLTM_LIBRARY_PATH to honour the override).
 */
import { type LibraryInfo, libraryInfo, prepareBinding } from "./native/index.ts";

await prepareBinding();

export {
  type Checkpoint, decodeCheckpoint, type LoadCheckpointOptions, loadCheckpoint, saveCheckpoint, type SkippedTensor,
} from "./checkpoint.ts";
export { cuda } from "./cuda.ts";
export { memoryStats, type MemoryStats, resetPeakMemoryStats } from "./memory.ts";
export { type CompiledStep, compileStep, type CompileStepOptions, type StepOutput } from "./graph/index.ts";
export { Device, type DeviceKind, type DeviceLike } from "./device.ts";
export { type DType, dtypes, type FloatDType, floatDTypes } from "./dtype.ts";
export { LLTMError, type LLTMErrorCode, Status, type StatusName } from "./errors.ts";
export { load, type LoadOptions, type LoadResult } from "./jit.ts";
export { type LibraryInfo, loadLibrary, type NativeLibrary } from "./native/index.ts";
export {
  type LLTMBackwardOptions, type LLTMBackwardResult, lltmBackward, lltmBackwardAccumulate, type LLTMForwardResult, lltmForward,
  type LLTMStateGradients,
} from "./ops/lltm.ts";
export { linearBackward, type LinearBackwardOptions, type LinearGradients } from "./ops/linear.ts";
export { argmax } from "./ops/argmax.ts";
export { crossEntropyBackward, type CrossEntropyOptions, type Reduction } from "./ops/cross_entropy.ts";
export { embeddingBackward } from "./ops/embedding.ts";
export { gatherBackward } from "./ops/gather.ts";
export { reverseSteps } from "./ops/reverse_steps.ts";
export { mseLossBackward } from "./ops/mse_loss.ts";
export { mulBackward, type MulGradients } from "./ops/mul.ts";
export { Generator, multinomial } from "./ops/multinomial.ts";
export { softmaxBackward } from "./ops/softmax.ts";
export { sumBackward } from "./ops/sum.ts";
export {
  add, cat, crossEntropy, embedding, gather, type GradientTarget, isGradEnabled, linear, lltmCell, LLTMFunction, lltmSequence, mean,
  mseLoss, mul, noGrad, scale, type SequenceOutputs, softmax, stack, sub, sum,
} from "./autograd/index.ts";
export {
  type LLTMSequenceBackwardResult, lltmSequenceBackward, lltmSequenceBackwardAccumulate, type LLTMSequenceForwardResult,
  lltmSequenceForward, type LLTMSequenceStateGradients, type SequenceBackwardOptions, type SequenceForwardOptions,
} from "./ops/sequence.ts";
export {
  type LLTMStackedBackwardResult, lltmStackedBackward, lltmStackedForward, type StackedBackwardOptions,
  type StackedForwardOptions,
} from "./ops/stacked.ts";
export {
  type Matrix, referenceBackward, referenceBackwardMatrices, referenceForward, referenceForwardMatrices,
  relativeError, type ReferenceBackward, type ReferenceForward, toMatrix,
} from "./reference.ts";
export {
  gradcheck, type GradcheckOptions, type GradcheckResult, sequenceGradcheck, type SequenceGradcheckOptions,
  type SequenceGradcheckResult,
} from "./gradcheck.ts";
export {
  LLTMLayer, type LLTMLayerOptions, type LLTMSequence, type LLTMStep, type Parameter, type SequenceOptions, type State,
} from "./module.ts";
export {
  clipGradNorm_, Dropout, Embedding, Linear, type LinearOptions, LLTM, LLTMCell, type LLTMForwardOptions, type LLTMOptions, type LLTMOutput, type LLTMState,
  type LoadStateDictOptions, Module, ModuleList, type ParameterOptions, Sequential, type TensorModule,
} from "./nn/index.ts";
export {
  Adam, type AdamOptions, AdamW, type AdamWOptions, CosineAnnealingLR, LambdaLR, LRScheduler, type MasterWeightsOption, Optimizer,
  type OptimizerState,
  type ParameterGroup, type ParameterLike, type Parameters, SGD, type SGDOptions, StepLR,
} from "./optim/index.ts";
export {
  type Float32MatmulPrecision, float32MatmulPrecisions, getFloat32MatmulPrecision, setFloat32MatmulPrecision,
} from "./matmul_precision.ts";
export { GradScaler, type GradScalerOptions, type GradScalerState } from "./amp/index.ts";
export { unscaleCheck_ } from "./ops/unscale_check.ts";
export * as distributed from "./distributed/index.ts";
export {
  DistributedDataParallel, type DistributedDataParallelOptions, DistributedSampler, type DistributedSamplerOptions,
} from "./distributed/index.ts";
export { nativeMemory, type NativeMemoryStats } from "./native_memory.ts";
export { Random } from "./random.ts";
export { type CopyOptions, type NestedArray, type RandomOptions, Tensor, type TensorOptions, type ToTypedArrayOptions } from "./tensor/index.ts";

/**
 * The native library's facts: its path, C ABI version, the backends this build and machine have, and the CPU
 * kernels chosen when it loaded (`cpuKernels`: "avx512", "avx2", "baseline", or "native" for a -march=native build),
 * and the CPU backend's thread count (`threads`) with where it came from (`threadsSource`: "environment" for
 * LLTM_NUM_THREADS, "affinity" for the process's CPU affinity mask, "cgroup" for a container's CPU quota, "hardware").
 * Throws the library's reason when LLTM_CPU_KERNELS forces kernels this machine cannot run.
 */
export function backendInfo(): LibraryInfo {
  return libraryInfo();
}
