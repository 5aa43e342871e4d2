/** Errors raised by lltm, with the C ABI's status code when the native library raised them. */

/** lltm_status of csrc/lltm.h. */
export const Status = {
  OK: 0,
  NULL_POINTER: 1,
  INVALID_SHAPE: 2,
  SHAPE_MISMATCH: 3,
  INVALID_DTYPE: 4,
  INVALID_DEVICE: 5,
  BACKEND_UNAVAILABLE: 6,
  OUT_OF_MEMORY: 7,
  CUDA: 8,
  INTERNAL: 9,
  INVALID_ARGUMENT: 10,
} as const;

export type StatusName = keyof typeof Status;

const names = Object.fromEntries(Object.entries(Status).map(([k, v]) => [v, k])) as Record<number, StatusName>;

export class LLTMError extends Error {
  /** The failure's kind: a status of the C ABI, or "DISPOSED" for a tensor used after dispose(). */
  readonly code: StatusName | "DISPOSED";
  constructor(code: LLTMError["code"], message: string) {
    super(message);
    this.name = "LLTMError";
    this.code = code;
  }
}

export function statusName(status: number): StatusName {
  return names[status] ?? "INTERNAL";
}

/** Throws an LLTMError for a non-zero status, with the native library's message. */
export function checkStatus(status: number, lastError: () => string): void {
  if (status !== 0) throw new LLTMError(statusName(status), lastError());
}
