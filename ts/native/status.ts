/**
 * The one conversion of a failed call's status into an LLTMError (as
 * sqlite3's unwrap): the status gives the code, lltm_last_error() the
 * message, with the C entry point and argument names replaced by the
 * TypeScript ones (`lltmForward: 'oldCell'`, not `lltm_forward: 'old_cell'`).
 */
import { LLTMError } from "../errors.ts";
import { Status, type StatusName } from "./constants.ts";
import { native } from "./library.ts";

const names = new Map<number, StatusName>(Object.entries(Status).map(([k, v]) => [v, k as StatusName]));

/** The code of a status; INTERNAL for one the header does not define. */
export function statusName(status: number): StatusName {
  return names.get(status) ?? "INTERNAL";
}

/** How a TypeScript function names C arguments whose names do not simply become camelCase. */
export type ArgumentNames = Readonly<Record<string, string>>;

/** Throws the LLTMError of a non-zero status, as TypeScript function `fn` names things. */
export function unwrap(status: number, fn: string, renamed?: ArgumentNames): void {
  if (status !== 0) throw new LLTMError(statusName(status), tsMessage(native().lltm_last_error(), fn, renamed));
}

/** A message of the library with TypeScript names: `fn` for the entry point, camelCase for quoted arguments. */
export function tsMessage(message: string, fn: string, renamed: ArgumentNames = {}): string {
  return message
    .replace(/^lltm_[a-z_]+/, fn)
    .replace(/'([A-Za-z_][A-Za-z0-9_]*)'/g, (quoted, name: string) => renamed[name] ?? `'${camelCase(name)}'`);
}

function camelCase(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}
