/**
 * The scripts' command lines, parsed by node:util's parseArgs in strict mode:
 * an unknown or misspelled flag, a flag without its value, or a positional
 * argument where none is taken is an error, never ignored.
 */
import { parseArgs as parseCommandLine } from "node:util";

export interface ParsedArgs {
  positional: string[];
  /** Flags with values, by their spelling in the spec ("-b", "--json"). */
  values: Map<string, string>;
  /** Boolean flags given, by their spelling in the spec ("-d", "--cuda"). */
  flags: Set<string>;
}

export interface ArgsSpec {
  /** Flags that take a value, e.g. "-b", "--json". */
  values?: readonly string[];
  /** Flags without a value, e.g. "-d", "--cuda". */
  flags?: readonly string[];
  /** Whether positional arguments are taken. */
  positionals?: boolean;
}

/** A command line that breaks its spec: the message says how. */
export class UsageError extends Error {}

/** Parses `argv` by `spec`; throws a UsageError for anything the spec does not allow. */
export function parseArgsStrict(argv: readonly string[], spec: ArgsSpec): ParsedArgs & { help: boolean } {
  type Option = { type: "string" | "boolean"; short?: string };
  const options: Record<string, Option> = { help: { type: "boolean", short: "h" } };
  const spelled = new Map<string, string>();
  const declare = (flag: string, type: Option["type"]) => {
    const name = flag.replace(/^--?/, "");
    options[name] = flag.startsWith("--") || name.length > 1 ? { type } : { type, short: name };
    spelled.set(name, flag);
  };
  for (const flag of spec.values ?? []) declare(flag, "string");
  for (const flag of spec.flags ?? []) declare(flag, "boolean");
  let parsed;
  try {
    parsed = parseCommandLine({ args: [...argv], options, strict: true, allowPositionals: spec.positionals ?? false });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const out = { positional: parsed.positionals, values: new Map<string, string>(), flags: new Set<string>(), help: false };
  for (const [name, value] of Object.entries(parsed.values)) {
    if (name === "help") out.help = value === true;
    else if (typeof value === "string") out.values.set(spelled.get(name)!, value);
    else if (value === true) out.flags.add(spelled.get(name)!);
  }
  return out;
}

/** Parses the command line, printing `usage` for --help and exiting with it on an error. */
export function parseArgs(argv: readonly string[], spec: ArgsSpec, usage: string): ParsedArgs {
  try {
    const args = parseArgsStrict(argv, spec);
    if (args.help) {
      console.log(usage);
      process.exit(0);
    }
    return args;
  } catch (e) {
    if (e instanceof UsageError) fail(e.message, usage);
    throw e;
  }
}

export function intArg(args: ParsedArgs, flag: string, fallback: number, usage: string): number {
  const v = args.values.get(flag);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) fail(`${flag} must be a positive integer, got ${v}`, usage);
  return n;
}

export function fail(message: string, usage: string): never {
  console.error(`error: ${message}\n\n${usage}`);
  process.exit(2);
}
