/**
 * The native-call layer, as the rest of lltm sees it: the ops of the C ABI
 * (run through lltm_run), memory and device calls, the C constants, and the
 * loader. Nothing outside ts/native/ opens the library, holds its handle or
 * writes a descriptor (tests/layers.test.ts).
 */
export {
  alloc, allocPinned, bufferBytes, captureBegin, captureEnd, cudaDeviceCount, elementBytes, type Float32MatmulPrecision,
  float32MatmulPrecision, free, freePinned, graphDestroy, graphReplay, type LibraryInfo, libraryInfo, memoryStat, type NativeTensor,
  read, resetPeakMemory, run, runCount, runInto, setFloat32MatmulPrecision, synchronize, type ThreadsSource, write,
} from "./calls.ts";
export { newDescribableId, overlaps } from "./descriptor.ts";
export {
  defaultLibraryPath, environment, isBun, libraryFile, libraryInUse, loadLibrary, type NativeLibrary, prebuiltCudaLibrary,
  prebuiltPackages, prepareBinding, useLibrary,
} from "./library.ts";
export { hasCudaPlugin, libraryFilesProblem } from "./library_file.ts";
export {
  type Collective, NCCL_UNIQUE_ID_BYTES, ncclCommDestroy, ncclCommError, ncclCommInit, ncclJoin, ncclRun, ncclUniqueId, ncclVersion,
  reduceOpCode,
} from "./nccl.ts";
export { op, type Op, type OpName, type SlotSpec } from "./op.ts";
export { type ArgumentNames } from "./status.ts";
