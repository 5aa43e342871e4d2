/**
 * The C ABI of liblltm (csrc/lltm.h), one entry per exported function, with
 * its C signature beside it. Both runtime bindings (Bun, Deno) are generated
 * from this table.
 *
 * Kinds: "ptr" is a native address held as a JS number; "buffer" is a typed
 * array whose memory the callee reads or writes during the call.
 */
export type ArgKind = "ptr" | "buffer" | "i32" | "i64" | "u32" | "u64" | "f64";
export type ReturnKind = "i32" | "u32" | "cstring";

export interface SymbolSpec {
  readonly args: readonly ArgKind[];
  readonly returns: ReturnKind;
}

const T = "ptr"; // const lltm_tensor*
const forwardArgs = [T, T, T, T, T, T, T, T, T, T, T, T, "i32", "i32", "i32"] as const;
const backwardArgs = [T, T, T, T, T, T, T, T, T, T, T, T, T, T, "i32", "i32", "i32"] as const;

export const symbols = {
  // int32_t lltm_run(int32_t op, const lltm_call* call)
  lltm_run: { args: ["i32", "ptr"], returns: "i32" },
  // int32_t lltm_buffer_bytes(int32_t op, const lltm_call* call, uint64_t* bytes)
  lltm_buffer_bytes: { args: ["i32", "ptr", "buffer"], returns: "i32" },
  // uint32_t lltm_abi_version(void)
  lltm_abi_version: { args: [], returns: "u32" },
  // uint32_t lltm_backends(void)
  lltm_backends: { args: [], returns: "u32" },
  // const char* lltm_last_error(void)
  lltm_last_error: { args: [], returns: "cstring" },
  // int32_t lltm_cuda_device_count(void)
  lltm_cuda_device_count: { args: [], returns: "i32" },
  // const char* lltm_cuda_blas(void)
  lltm_cuda_blas: { args: [], returns: "cstring" },
  // int32_t lltm_set_float32_matmul_precision(int32_t precision)
  lltm_set_float32_matmul_precision: { args: ["i32"], returns: "i32" },
  // int32_t lltm_float32_matmul_precision(void)
  lltm_float32_matmul_precision: { args: [], returns: "i32" },
  // int32_t lltm_forward(input, weights, bias, old_h, old_cell, new_h, new_cell, input_gate,
  //                      output_gate, candidate_cell, X, gate_weights, dtype, device_kind, device_index)
  lltm_forward: { args: forwardArgs, returns: "i32" },
  // int32_t lltm_backward(grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X,
  //                       gate_weights, weights, d_old_h, d_input, d_weights, d_bias, d_old_cell,
  //                       dtype, device_kind, device_index)
  lltm_backward: { args: backwardArgs, returns: "i32" },
  // int32_t lltm_backward_ex(grad_h, grad_cell, new_cell, input_gate, output_gate, candidate_cell, X,
  //                          gate_weights, weights, d_old_h, d_input, d_weights, d_bias, d_old_cell,
  //                          uint32_t flags, dtype, device_kind, device_index)
  lltm_backward_ex: { args: [T, T, T, T, T, T, T, T, T, T, T, T, T, T, "u32", "i32", "i32", "i32"], returns: "i32" },
  // int32_t lltm_alloc(uint64_t bytes, int32_t device_kind, int32_t device_index, void** out)
  lltm_alloc: { args: ["u64", "i32", "i32", "buffer"], returns: "i32" },
  // int32_t lltm_free(void* data, int32_t device_kind, int32_t device_index)
  lltm_free: { args: ["ptr", "i32", "i32"], returns: "i32" },
  // int32_t lltm_alloc_pinned(uint64_t bytes, void** out)
  lltm_alloc_pinned: { args: ["u64", "buffer"], returns: "i32" },
  // int32_t lltm_free_pinned(void* data)
  lltm_free_pinned: { args: ["ptr"], returns: "i32" },
  // int32_t lltm_copy(const lltm_tensor* dst, int32_t dst_kind, int32_t dst_index,
  //                   const lltm_tensor* src, int32_t src_kind, int32_t src_index, int32_t dtype)
  lltm_copy: { args: [T, "i32", "i32", T, "i32", "i32", "i32"], returns: "i32" },
  // int32_t lltm_fill(const lltm_tensor* dst, double value, int32_t dtype, int32_t device_kind, int32_t device_index)
  lltm_fill: { args: [T, "f64", "i32", "i32", "i32"], returns: "i32" },
  // int32_t lltm_axpy(const lltm_tensor* y, double alpha, const lltm_tensor* x, int32_t dtype,
  //                   int32_t device_kind, int32_t device_index)
  lltm_axpy: { args: [T, "f64", T, "i32", "i32", "i32"], returns: "i32" },
  // int32_t lltm_sgd_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* momentum_buffer,
  //                       double lr, double momentum, int32_t dtype, int32_t device_kind, int32_t device_index)
  lltm_sgd_step: { args: [T, T, T, "f64", "f64", "i32", "i32", "i32"], returns: "i32" },
  // int32_t lltm_adam_step(const lltm_tensor* param, const lltm_tensor* grad, const lltm_tensor* exp_avg,
  //                        const lltm_tensor* exp_avg_sq, double lr, double beta1, double beta2, double eps,
  //                        int64_t step, int32_t dtype, int32_t device_kind, int32_t device_index)
  lltm_adam_step: { args: [T, T, T, T, "f64", "f64", "f64", "f64", "i64", "i32", "i32", "i32"], returns: "i32" },
  // int32_t lltm_read(void* host_dst, const void* src, uint64_t bytes, int32_t device_kind, int32_t device_index)
  lltm_read: { args: ["buffer", "ptr", "u64", "i32", "i32"], returns: "i32" },
  // int32_t lltm_write(void* dst, const void* host_src, uint64_t bytes, int32_t device_kind, int32_t device_index)
  lltm_write: { args: ["ptr", "buffer", "u64", "i32", "i32"], returns: "i32" },
  // int32_t lltm_synchronize(int32_t device_kind, int32_t device_index)
  lltm_synchronize: { args: ["i32", "i32"], returns: "i32" },
  // int32_t lltm_memory_stat(int32_t stat, int32_t device_kind, int32_t device_index, uint64_t* out)
  lltm_memory_stat: { args: ["i32", "i32", "i32", "buffer"], returns: "i32" },
  // int32_t lltm_memory_reset_peak(int32_t device_kind, int32_t device_index)
  lltm_memory_reset_peak: { args: ["i32", "i32"], returns: "i32" },
  // int32_t lltm_capture_begin(int32_t device_kind, int32_t device_index)
  lltm_capture_begin: { args: ["i32", "i32"], returns: "i32" },
  // int32_t lltm_capture_end(int32_t device_kind, int32_t device_index, void** graph)
  lltm_capture_end: { args: ["i32", "i32", "buffer"], returns: "i32" },
  // int32_t lltm_graph_replay(void* graph, int32_t device_kind, int32_t device_index)
  lltm_graph_replay: { args: ["ptr", "i32", "i32"], returns: "i32" },
  // int32_t lltm_graph_destroy(void* graph, int32_t device_kind, int32_t device_index)
  lltm_graph_destroy: { args: ["ptr", "i32", "i32"], returns: "i32" },
  // const char* lltm_cpu_kernels(void): NULL when a forced variant cannot run
  lltm_cpu_kernels: { args: [], returns: "cstring" },
  // int32_t lltm_cpu_threads(void)
  lltm_cpu_threads: { args: [], returns: "i32" },
  // const char* lltm_cpu_threads_source(void)
  lltm_cpu_threads_source: { args: [], returns: "cstring" },
  // int32_t lltm_abi_constant(const char* name, int64_t* value)
  lltm_abi_constant: { args: ["buffer", "buffer"], returns: "i32" },
  // int32_t lltm_sequence_reserve_bytes(int64_t steps, int64_t batch, int64_t input_features, int64_t state_size,
  //                                     int32_t dtype, int32_t device_kind, int32_t device_index, uint64_t* bytes)
  lltm_sequence_reserve_bytes: { args: ["i64", "i64", "i64", "i64", "i32", "i32", "i32", "buffer"], returns: "i32" },
  // int32_t lltm_sequence_forward(inputs, weights, bias, h0, c0, outputs, last_h, last_cell, void* reserve,
  //                               uint64_t reserve_bytes, uint32_t flags, dtype, device_kind, device_index)
  lltm_sequence_forward: { args: [T, T, T, T, T, T, T, T, "ptr", "u64", "u32", "i32", "i32", "i32"], returns: "i32" },
  // int32_t lltm_sequence_backward(grad_outputs, grad_last_h, grad_last_cell, const void* reserve,
  //                                uint64_t reserve_bytes, inputs, weights, h0, d_inputs, d_weights, d_bias, d_h0,
  //                                d_c0, uint32_t flags, dtype, device_kind, device_index)
  lltm_sequence_backward: {
    args: [T, T, T, "ptr", "u64", T, T, T, T, T, T, T, T, "u32", "i32", "i32", "i32"], returns: "i32",
  },
  // int32_t lltm_nccl_version(int32_t* version)
  lltm_nccl_version: { args: ["buffer"], returns: "i32" },
  // int32_t lltm_nccl_unique_id(uint8_t* id)
  lltm_nccl_unique_id: { args: ["buffer"], returns: "i32" },
  // int32_t lltm_nccl_comm_init(void** comm, const uint8_t* id, int32_t world_size, int32_t rank, int32_t device_index)
  lltm_nccl_comm_init: { args: ["buffer", "buffer", "i32", "i32", "i32"], returns: "i32" },
  // int32_t lltm_nccl_comm_destroy(void* comm, int32_t abort)
  lltm_nccl_comm_destroy: { args: ["ptr", "i32"], returns: "i32" },
  // int32_t lltm_nccl_comm_error(void* comm)
  lltm_nccl_comm_error: { args: ["ptr"], returns: "i32" },
  // int32_t lltm_nccl_join(void* comm)
  lltm_nccl_join: { args: ["ptr"], returns: "i32" },
  // int32_t lltm_nccl_run(void* comm, int32_t collective, const lltm_call* call)
  lltm_nccl_run: { args: ["ptr", "i32", "ptr"], returns: "i32" },
} as const satisfies Record<string, SymbolSpec>;

export type SymbolName = keyof typeof symbols;

type ArgType<K> = K extends "buffer" ? ArrayBufferView : number;
type ArgTypes<A extends readonly ArgKind[]> = { [I in keyof A]: ArgType<A[I]> };
type ReturnType<K> = K extends "cstring" ? string : number;

/** The library's functions as a runtime binding exposes them. */
export type NativeFunctions = {
  [N in SymbolName]: (...args: ArgTypes<(typeof symbols)[N]["args"]>) => ReturnType<(typeof symbols)[N]["returns"]>;
};

/** What a runtime binding provides beyond the functions themselves. */
export interface NativeLibrary extends NativeFunctions {
  /** The library file that was opened. */
  readonly path: string;
  /** A view of `bytes` bytes of host memory at `address`, valid while that memory lives. */
  view(address: number, bytes: number): ArrayBuffer;
}

/**
 * The library's functions from a runtime's raw symbols: functions returning
 * a C string get `readCString` applied; the others are used as they are, so
 * the hot path (forward, backward) pays no wrapper.
 */
export function bindFunctions<P>(
  raw: Record<string, (...args: unknown[]) => unknown>,
  readCString: (pointer: P) => string,
): NativeFunctions {
  const functions: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(symbols)) {
    const f = raw[name]!;
    functions[name] = s.returns === "cstring" ? (...args: unknown[]) => readCString(f(...args) as P) : f;
  }
  return functions as NativeFunctions;
}
