/**
 * Writes ts/native/abi.generated.ts from the C declarations, so that the
 * TypeScript side re-types none of them: every numeric `#define LLTM_*` and
 * enum member of csrc/lltm.h, the layout of its structs (lltm_tensor,
 * lltm_call), and csrc/lltm_ops.def's dtypes and ops (slots with roles,
 * modifiers and shapes, sizes, scalars, flags). scripts/build.ts runs it;
 * tests/constants.test.ts fails when the committed file differs from a fresh
 * generation.
 *
 * usage: bun scripts/gen-abi.ts [--check]
 *   --check  exit 1, writing nothing, when the committed file is not what would be generated
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const HEADER = "csrc/lltm.h";
const TABLE = "csrc/lltm_ops.def";
export const GENERATED = "ts/native/abi.generated.ts";

/** One term of a dimension: `coefficient` times size `size` (or the integer `coefficient` alone). */
export interface Term {
  coefficient: number;
  size?: string;
}

/** A slot's shape: per dimension a sum of terms; the sizes of another slot; or any sizes. */
export type Shape = { dims: Term[][] } | { same: string } | { any: true };

/** How a named size is taken: dimension `dim` of slot `slot`, less size `minus` when solved for. */
export interface SizeRule {
  name: string;
  slot: string;
  dim: number;
  minus?: string;
}

/** Strips C comments, keeping line breaks so that errors can name lines. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).replace(/\/\/.*$/gm, "");
}

function fail(file: string, line: number, why: string): never {
  throw new Error(`scripts/gen-abi.ts: ${file}:${line}: ${why}`);
}

/** The arguments of a macro call `NAME(a, "b, c", d)`, split at top-level commas. */
function macroArguments(text: string): string[] {
  const args: string[] = [];
  let depth = 0, quoted = false, current = "";
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    if (!quoted && c === "(") depth++;
    if (!quoted && c === ")") depth--;
    if (!quoted && depth === 0 && c === ",") {
      args.push(current.trim());
      current = "";
    } else current += c;
  }
  args.push(current.trim());
  return args;
}

function unquote(file: string, line: number, s: string): string {
  const m = /^"([^"]*)"$/.exec(s);
  if (!m) fail(file, line, `expected a string literal, got ${s}`);
  return m[1]!;
}

function integer(file: string, line: number, s: string): number {
  if (!/^\d+$/.test(s)) fail(file, line, `expected an integer, got ${s}`);
  return Number(s);
}

/** The numeric #defines and enum members of lltm.h, and those its enums take from lltm_ops.def. */
function headerConstants(header: string, dtypes: DTypeEntry[], ops: OpEntry[]): Record<string, number> {
  const code = stripComments(header);
  const found: Record<string, number> = {};
  for (const m of code.matchAll(/#define\s+(LLTM_[A-Z0-9_]+)\s+(\d+)u?\s*$/gm)) found[m[1]!] = Number(m[2]);
  for (const m of code.matchAll(/\b(LLTM_[A-Z0-9_]+)\s*=\s*(\d+)u?\b/g)) found[m[1]!] = Number(m[2]);
  // The enums made from the table. (The _END member closing each counts them: no value of the ABI.)
  for (const d of dtypes) found[`LLTM_${d.id}`] = d.code;
  for (const o of ops) found[`LLTM_OP_${o.id}`] = o.code;
  return found;
}

interface Field {
  name: string;
  bytes: number;
  align: number;
  count: number;
}

/** The C types a struct of lltm.h is made of, with their sizes on the 64-bit targets lltm builds for. */
const scalarTypes: Record<string, number> = { "void*": 8, int64_t: 8, uint64_t: 8, int32_t: 4, uint32_t: 4, double: 8 };

/** sizeof and every field's offsetof, for each `typedef struct NAME {...} NAME;` of lltm.h. */
function layout(header: string, defines: Record<string, number>): Record<string, number> {
  const code = stripComments(header);
  const structs: Record<string, { bytes: number; align: number }> = {};
  const out: Record<string, number> = {};
  for (const m of code.matchAll(/typedef\s+struct\s+(\w+)\s*\{([^}]*)\}\s*(\w+)\s*;/g)) {
    const name = m[1]!;
    const fields: Field[] = [];
    for (const decl of m[2]!.split(";").map((d) => d.trim().replace(/\s+/g, " ")).filter((d) => d !== "")) {
      const f = /^(?:const )?([A-Za-z_]\w*(?: ?\*)?) ?(\w+)(?:\[(\w+)\])?$/.exec(decl);
      if (!f) throw new Error(`scripts/gen-abi.ts: ${HEADER}: cannot read the field '${decl}' of struct ${name}`);
      const type = f[1]!.replace(" ", "");
      const count = f[3] === undefined ? 1 : /^\d+$/.test(f[3]) ? Number(f[3]) : defines[f[3]];
      if (count === undefined) throw new Error(`scripts/gen-abi.ts: ${HEADER}: struct ${name}: unknown array size ${f[3]}`);
      const known = scalarTypes[type] ?? (type.endsWith("*") ? 8 : undefined);
      const nested = structs[type];
      if (known === undefined && nested === undefined) {
        throw new Error(`scripts/gen-abi.ts: ${HEADER}: struct ${name}: unknown field type ${type}`);
      }
      fields.push({ name: f[2]!, bytes: known ?? nested!.bytes, align: known ?? nested!.align, count });
    }
    let offset = 0, align = 1;
    for (const f of fields) {
      offset = Math.ceil(offset / f.align) * f.align;
      out[`offsetof(${name}, ${f.name})`] = offset;
      offset += f.bytes * f.count;
      align = Math.max(align, f.align);
    }
    const bytes = Math.ceil(offset / align) * align;
    out[`sizeof(${name})`] = bytes;
    structs[name] = { bytes, align };
  }
  return out;
}

interface DTypeEntry {
  id: string;
  code: number;
  name: string;
  bytes: number;
  class: "FLOAT" | "INDEX" | "BYTES";
}

interface SlotEntry {
  name: string;
  role: "IN" | "OUT" | "INOUT" | "ACC";
  optional: boolean;
  contiguous: boolean;
  bytes: boolean;
  sameView: boolean;
  index: boolean;
  anyType: boolean;
  shape: Shape;
  text: string;
}

interface ScalarEntry {
  name: string;
  kind: "ANY" | "CLOSED" | "HALF_OPEN" | "INTEGER";
  lo: number;
  hi: number;
}

interface OpEntry {
  id: string;
  code: number;
  entry: string;
  sizes: SizeRule[];
  flags: number;
  slots: SlotEntry[];
  scalars: ScalarEntry[];
}

const ROLES = ["IN", "OUT", "INOUT", "ACC"] as const;
const MODIFIERS = ["OPTIONAL", "CONTIGUOUS", "BYTES", "SAME_VIEW", "INDEX", "ANY_TYPE"] as const;
const CLASSES = ["FLOAT", "INDEX", "BYTES"] as const;
const KINDS = ["ANY", "CLOSED", "HALF_OPEN", "INTEGER"] as const;

function parseShape(file: string, line: number, text: string, sizeNames: ReadonlySet<string>): Shape {
  if (text === "*") return { any: true };
  if (text.startsWith("=")) return { same: text.slice(1) };
  const m = /^\[(.*)\]$/.exec(text);
  if (!m) fail(file, line, `shape ${JSON.stringify(text)} is none of "[...]", "=slot", "*"`);
  return {
    dims: m[1]!.split(",").map((dim) =>
      dim.split("+").map((term): Term => {
        const t = /^\s*(\d*)([A-Z]?)\s*$/.exec(term);
        if (!t || (t[1] === "" && t[2] === "")) fail(file, line, `cannot read the term ${JSON.stringify(term)} of ${text}`);
        if (t[2] === "") return { coefficient: Number(t[1]) };
        if (!sizeNames.has(t[2]!)) fail(file, line, `size ${t[2]} of ${text} is not among the op's sizes`);
        return { coefficient: t[1] === "" ? 1 : Number(t[1]), size: t[2]! };
      })
    ),
  };
}

function parseSizes(file: string, line: number, text: string): SizeRule[] {
  if (text.trim() === "") return [];
  return text.trim().split(/\s+/).map((rule) => {
    const m = /^([A-Z])=(\w+)\[(\d+)\](?:-([A-Z]))?$/.exec(rule);
    if (!m) fail(file, line, `cannot read the size rule ${JSON.stringify(rule)}`);
    return { name: m[1]!, slot: m[2]!, dim: Number(m[3]), ...(m[4] === undefined ? {} : { minus: m[4] }) };
  });
}

function parseTable(def: string, defines: Record<string, number>): { dtypes: DTypeEntry[]; ops: OpEntry[] } {
  const dtypes: DTypeEntry[] = [];
  const ops: OpEntry[] = [];
  const lines = stripComments(def).split("\n");
  lines.forEach((raw, i) => {
    const line = i + 1;
    const text = raw.trim();
    if (text === "") return;
    const m = /^(LLTM_DTYPE|LLTM_OP|LLTM_SLOT|LLTM_SCALAR)\((.*)\)$/.exec(text);
    if (!m) fail(TABLE, line, `expected one LLTM_DTYPE, LLTM_OP, LLTM_SLOT or LLTM_SCALAR, got ${text}`);
    const args = macroArguments(m[2]!);
    const op = ops[ops.length - 1];
    if (m[1] === "LLTM_DTYPE") {
      const cls = args[4] as DTypeEntry["class"];
      if (args.length !== 5 || !CLASSES.includes(cls)) fail(TABLE, line, "LLTM_DTYPE(ID, code, \"name\", bytes, FLOAT|INDEX|BYTES)");
      dtypes.push({
        id: args[0]!, code: integer(TABLE, line, args[1]!), name: unquote(TABLE, line, args[2]!),
        bytes: integer(TABLE, line, args[3]!), class: cls,
      });
    } else if (m[1] === "LLTM_OP") {
      if (args.length !== 5) fail(TABLE, line, "LLTM_OP(ID, code, \"entry\", \"sizes\", flags)");
      let flags = 0;
      for (const f of args[4]!.split("|").map((s) => s.trim())) {
        const v = /^\d+$/.test(f) ? Number(f) : defines[f];
        if (v === undefined) fail(TABLE, line, `unknown flag ${f}`);
        flags |= v;
      }
      ops.push({
        id: args[0]!, code: integer(TABLE, line, args[1]!), entry: unquote(TABLE, line, args[2]!),
        sizes: parseSizes(TABLE, line, unquote(TABLE, line, args[3]!)), flags, slots: [], scalars: [],
      });
    } else if (m[1] === "LLTM_SLOT") {
      if (!op) fail(TABLE, line, "a slot before any op");
      if (args.length !== 3) fail(TABLE, line, "LLTM_SLOT(name, ROLE | MODIFIERS, \"shape\")");
      const parts = args[1]!.split("|").map((s) => s.trim());
      const role = parts[0] as SlotEntry["role"];
      if (!ROLES.includes(role)) fail(TABLE, line, `unknown role ${parts[0]}`);
      for (const p of parts.slice(1)) if (!(MODIFIERS as readonly string[]).includes(p)) fail(TABLE, line, `unknown modifier ${p}`);
      const sizeNames = new Set(op.sizes.map((s) => s.name));
      const text = unquote(TABLE, line, args[2]!);
      const shape = parseShape(TABLE, line, text, sizeNames);
      if ("same" in shape && !op.slots.some((s) => s.name === shape.same)) fail(TABLE, line, `"=${shape.same}" names no earlier slot`);
      op.slots.push({
        name: args[0]!, role, optional: parts.includes("OPTIONAL"), contiguous: parts.includes("CONTIGUOUS"),
        bytes: parts.includes("BYTES"), sameView: parts.includes("SAME_VIEW"), index: parts.includes("INDEX"),
        anyType: parts.includes("ANY_TYPE"), shape, text,
      });
    } else {
      if (!op) fail(TABLE, line, "a scalar before any op");
      const kind = args[1] as ScalarEntry["kind"];
      if (args.length !== 4 || !KINDS.includes(kind)) fail(TABLE, line, "LLTM_SCALAR(name, ANY|CLOSED|HALF_OPEN|INTEGER, lo, hi)");
      const lo = Number(args[2]), hi = Number(args[3]);
      if (!Number.isFinite(lo) || !Number.isFinite(hi)) fail(TABLE, line, `bounds ${args[2]}, ${args[3]} are not numbers`);
      op.scalars.push({ name: args[0]!, kind, lo, hi });
    }
  });
  for (const op of ops) {
    for (const s of op.sizes) {
      if (!op.slots.some((slot) => slot.name === s.slot)) throw new Error(`scripts/gen-abi.ts: ${TABLE}: op ${op.id}: size ${s.name} reads unknown slot ${s.slot}`);
    }
    if (op.slots.length > defines.LLTM_MAX_SLOTS!) throw new Error(`scripts/gen-abi.ts: op ${op.id} has more than LLTM_MAX_SLOTS slots`);
    if (op.scalars.length > defines.LLTM_MAX_SCALARS!) throw new Error(`scripts/gen-abi.ts: op ${op.id} has more than LLTM_MAX_SCALARS scalars`);
  }
  return { dtypes, ops };
}

/** `value` as a TypeScript literal: on one line where that stays short, else one entry per line. */
function literal(value: unknown, indent = ""): string {
  const flat = JSON.stringify(value, null, 1).replace(/\n\s*/g, " ").replace(/\[ /g, "[").replace(/ \]/g, "]")
    .replace(/"([A-Za-z_]\w*)":/g, "$1:");
  if (flat.length + indent.length <= 180 || typeof value !== "object" || value === null) return flat;
  const inner = indent + "  ";
  if (Array.isArray(value)) return `[\n${value.map((v) => `${inner}${literal(v, inner)},`).join("\n")}\n${indent}]`;
  const key = (k: string) => (/^[A-Za-z_]\w*$/.test(k) ? k : JSON.stringify(k));
  return `{\n${Object.entries(value).map(([k, v]) => `${inner}${key(k)}: ${literal(v, inner)},`).join("\n")}\n${indent}}`;
}

/** The text of ts/native/abi.generated.ts for the C declarations under `dir` (default: this checkout). */
export function generateAbi(dir = root): string {
  const header = readFileSync(`${dir}/${HEADER}`, "utf8");
  const def = readFileSync(`${dir}/${TABLE}`, "utf8");
  const defines: Record<string, number> = {};
  for (const m of stripComments(header).matchAll(/#define\s+(LLTM_[A-Z0-9_]+)\s+(\d+)u?\s*$/gm)) defines[m[1]!] = Number(m[2]);
  const { dtypes, ops } = parseTable(def, defines);
  const constants = headerConstants(header, dtypes, ops);
  const dtypeTable = Object.fromEntries(dtypes.map((d) => [d.name, { id: d.id, code: d.code, bytes: d.bytes, class: d.class }]));
  const opTable = Object.fromEntries(ops.map((o) => [o.id, {
    code: o.code,
    entry: o.entry,
    flags: o.flags,
    sizes: o.sizes.map((r) => [r.name, r.slot, r.dim, r.minus ?? ""]),
    slots: o.slots.map((slot) => ({
      name: slot.name,
      role: slot.role,
      optional: slot.optional,
      contiguous: slot.contiguous,
      bytes: slot.bytes,
      sameView: slot.sameView,
      index: slot.index,
      anyType: slot.anyType,
      shape: slot.text,
      dims: "dims" in slot.shape ? slot.shape.dims.map((d) => d.map((t) => [t.coefficient, t.size ?? ""])) : null,
      same: "same" in slot.shape ? slot.shape.same : null,
    })),
    scalars: o.scalars,
  }]));
  return [
    `// Generated by scripts/gen-abi.ts from ${HEADER} and ${TABLE}: do not edit; bun scripts/gen-abi.ts rewrites it.`,
    "",
    "/** Every numeric #define LLTM_* and enum member of csrc/lltm.h, the enums made from csrc/lltm_ops.def included. */",
    `export const headerConstants = ${literal(constants)} as const;`,
    "",
    "/** sizeof and offsetof every field of csrc/lltm.h's structs, on the 64-bit targets lltm builds for. */",
    `export const layoutConstants = ${literal(layout(header, defines))} as const;`,
    "",
    "/** The element types of csrc/lltm_ops.def, by name. */",
    `export const dtypeTable = ${literal(dtypeTable)} as const;`,
    "",
    "/**",
    " * The ops of csrc/lltm_ops.def, by ID: `sizes` as [size, slot, dimension, size subtracted or \"\"]; each slot's",
    " * shape as written, and as `dims` (per dimension, [coefficient, size or \"\"] terms summed) or `same` (a slot's sizes).",
    " */",
    `export const opTable = ${literal(opTable)} as const;`,
    "",
  ].join("\n");
}

/** Writes the generated file; false (and nothing written) when `check` and it differs. */
export function writeAbi(check = false): boolean {
  const text = generateAbi();
  const path = `${root}/${GENERATED}`;
  let current = "";
  try {
    current = readFileSync(path, "utf8");
  } catch {
    current = "";
  }
  if (current === text) return true;
  if (check) return false;
  writeFileSync(path, text);
  return true;
}

if (import.meta.main) {
  const check = process.argv.includes("--check");
  if (!writeAbi(check)) {
    console.error(`${GENERATED} is not what scripts/gen-abi.ts generates from ${HEADER} and ${TABLE}; run bun scripts/gen-abi.ts`);
    process.exit(1);
  }
}
