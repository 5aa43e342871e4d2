/** A small command-line parser shared by the scripts: flags with values, boolean flags and positionals. */
export interface ParsedArgs {
  positional: string[];
  values: Map<string, string>;
  flags: Set<string>;
}

/** `valued` lists the flags that take a value (e.g. "-b", "--json"). */
export function parseArgs(argv: readonly string[], valued: readonly string[], usage: string): ParsedArgs {
  const out: ParsedArgs = { positional: [], values: new Map(), flags: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "-h" || a === "--help") {
      console.log(usage);
      process.exit(0);
    }
    if (valued.includes(a)) {
      const v = argv[++i];
      if (v === undefined) fail(`${a} needs a value`, usage);
      out.values.set(a, v);
    } else if (a.startsWith("-")) {
      out.flags.add(a);
    } else {
      out.positional.push(a);
    }
  }
  return out;
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
