/**
 * The native-call layer, as the rest of lltm sees it: typed calls of the C
 * ABI, the C constants, and the loader. Nothing outside ts/native/ opens the
 * library, holds its handle or writes a descriptor (tests/layers.test.ts).
 */
export {
  adamStep, alloc, axpy, backward, copy, cudaDeviceCount, fill, forward, free, type LibraryInfo, libraryInfo, type NativeTensor, read,
  sequenceBackward, sequenceForward, sequenceReserveBytes, sgdStep, synchronize, type ThreadsSource, write,
} from "./calls.ts";
export { newDescribableId, overlaps } from "./descriptor.ts";
export {
  defaultLibraryPath, environment, isBun, libraryFile, libraryInUse, loadLibrary, type NativeLibrary, prebuiltCudaLibrary,
  prebuiltPackages, prepareBinding, useLibrary,
} from "./library.ts";
export { gpuDevicePresent, gpuPresent } from "./gpu.ts";
export { hasCudaPlugin, libraryFilesProblem } from "./library_file.ts";
