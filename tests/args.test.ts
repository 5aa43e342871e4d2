/** The scripts' command lines: node:util's parseArgs in strict mode, so a wrong flag is an error, never ignored. */
import { parseArgsStrict, UsageError } from "../scripts/args.ts";
import { assert, assertEquals, test } from "./harness.ts";

const spec = { values: ["-b", "--json"], flags: ["-d", "--cuda"], positionals: true };

function refused(argv: string[], pattern: RegExp, s: Parameters<typeof parseArgsStrict>[1] = spec): void {
  try {
    parseArgsStrict(argv, s);
  } catch (e) {
    assert(e instanceof UsageError, `${argv.join(" ")}: expected a UsageError, got ${e}`);
    assert(pattern.test((e as Error).message), `${argv.join(" ")}: ${(e as Error).message} does not match ${pattern}`);
    return;
  }
  throw new Error(`${argv.join(" ")} was accepted`);
}

test("flags, values and positionals are read by their spelling in the spec", () => {
  const a = parseArgsStrict(["cpu", "-b", "16", "--json", "out.json", "-d"], spec);
  assertEquals(a.positional, ["cpu"]);
  assertEquals([...a.values], [["-b", "16"], ["--json", "out.json"]]);
  assertEquals([...a.flags], ["-d"]);
  assertEquals([...parseArgsStrict(["--cuda", "--json=x.json", "-b3"], spec).values], [["--json", "x.json"], ["-b", "3"]]);
  assert(parseArgsStrict(["--help"], spec).help);
});

test("an unknown or misspelled flag, a missing value or an unwanted positional is an error", () => {
  refused(["--jsno", "x"], /Unknown option '--jsno'/);
  refused(["-x"], /Unknown option '-x'/);
  refused(["-b"], /argument missing/);
  refused(["--cuda=yes"], /does not take an argument/);
  refused(["extra"], /Unexpected argument 'extra'/, { flags: ["--cuda"] });
});
