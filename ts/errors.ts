/** Errors raised by lltm, with the C ABI's status code when the native library raised them. */
import { Status, type StatusName } from "./native/constants.ts";

export { Status, type StatusName };

/**
 * What failed: a status of the C ABI; "DISPOSED" for a tensor used after
 * dispose(); "LIBRARY_UNAVAILABLE" when the native library cannot be opened;
 * "ABI_MISMATCH" when it was built with other constants or another
 * descriptor layout than this TypeScript; "LIBRARY_INVALID" for a file that is
 * not a complete library for this platform; "IO" for a file that cannot be
 * read or written; "PERMISSION_DENIED" where the runtime's permissions
 * (Deno's --allow-* flags, Node's --permission) refused an operation.
 */
export type LLTMErrorCode =
  | StatusName | "DISPOSED" | "LIBRARY_UNAVAILABLE" | "ABI_MISMATCH" | "LIBRARY_INVALID" | "IO" | "PERMISSION_DENIED";

export class LLTMError extends Error {
  readonly code: LLTMErrorCode;
  constructor(code: LLTMErrorCode, message: string) {
    super(message);
    this.name = "LLTMError";
    this.code = code;
  }
}

/**
 * `e` as an LLTMError naming the permission that is missing, when it is a
 * runtime's refusal (Deno's NotCapable or PermissionDenied, Node's
 * ERR_ACCESS_DENIED); undefined for any other error.
 */
export function permissionError(e: unknown, what: string): LLTMError | undefined {
  const error = e as { name?: string; code?: string; message?: string } | null;
  const message = error?.message ?? String(e);
  if (error?.name === "NotCapable" || error?.name === "PermissionDenied") {
    const flag = /--allow-[a-z-]+/.exec(message)?.[0];
    const how = flag ? `run deno with ${flag}` : "grant Deno the permission it names";
    return new LLTMError("PERMISSION_DENIED", `${what} needs a permission Deno was not given (${how}): ${message}`);
  }
  if (error?.code === "ERR_ACCESS_DENIED") {
    return new LLTMError("PERMISSION_DENIED", `${what} needs a permission Node's permission model refused: ${message}`);
  }
  return undefined;
}

/** Runs `f`, turning a runtime's permission refusal into an LLTMError that names the permission. */
export function withPermissions<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw permissionError(e, what) ?? e;
  }
}
