/** Errors raised by lltm, with the C ABI's status code when the native library raised them. */
import { Status, type StatusName } from "./native/constants.ts";

export { Status, type StatusName };

/**
 * What failed: a status of the C ABI; "DISPOSED" for a tensor used after
 * dispose(); "LIBRARY_UNAVAILABLE" when the native library cannot be opened;
 * "ABI_MISMATCH" when it was built with other constants or another
 * descriptor layout than this TypeScript; "LIBRARY_INVALID" for a file that is
 * not a complete library for this platform; "IO" for a file that cannot be
 * read or written.
 */
export type LLTMErrorCode = StatusName | "DISPOSED" | "LIBRARY_UNAVAILABLE" | "ABI_MISMATCH" | "LIBRARY_INVALID" | "IO";

export class LLTMError extends Error {
  readonly code: LLTMErrorCode;
  constructor(code: LLTMErrorCode, message: string) {
    super(message);
    this.name = "LLTMError";
    this.code = code;
  }
}
