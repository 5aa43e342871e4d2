/**
 * The optimizers' base: parameters in groups (each with its own
 * hyperparameters, as torch.optim's param_groups), their state tensors, and
 * steps that update in place on the parameters' device through the native
 * library, reading nothing back.
 *
 * Parameters are given as tensors (a module's parameters(), whose .grad
 * backward() fills), as [name, tensor] pairs (namedParameters(), which name
 * the state in files), or as { name, value, grad } records (the low-level
 * LLTMLayer's). A parameter with no gradient yet is left alone by a step.
 *
 * A step is all or nothing: every hyperparameter against the op table's
 * ranges, and every parameter, gradient and state tensor (alive, dtypes the
 * library accepts together, one device, one shape, contiguous), are checked
 * before the first parameter moves.
 *
 * Master weights (mixed-precision training): a bfloat16 or float16 parameter
 * gets a float32 copy, its state (`master`) beside float32 moments, unless
 * `masterWeights: false`. A step updates the float32 copy and writes it,
 * rounded, into the parameter, so that updates smaller than the half type's
 * spacing add up instead of rounding away. Such a parameter's gradient is
 * kept in float32 too (a half gradient the tape made is widened by zeroGrad()
 * and by GradScaler.unscale_), as under torch.autocast.
 *
 * Fused (`fused: true`, as torch.optim's fused=True): the parameters of each
 * group, device and dtype are moved into one flat buffer (flat.ts), and a
 * step updates each buffer with one launch where every parameter's gradient
 * is its view there (from the step after the first backward() on), else
 * parameter by parameter as unfused. A parameter that cannot move without
 * changing what other tensors see (not contiguous, its memory viewed by
 * another live tensor, or a tensor that does not require gradients) stays
 * where it is and is updated on its own.
 */
import { loadCheckpoint, saveCheckpoint } from "../checkpoint.ts";
import type { DeviceLike } from "../device.ts";
import { isHalf, valueDType } from "../dtype.ts";
import { LLTMError } from "../errors.ts";
import { activeCapture, type Capture } from "../graph/capture.ts";
import type { Parameter } from "../module.ts";
import { noGrad } from "../autograd/grad_mode.ts";
import type * as native from "../native/index.ts";
import { sameShape, Tensor } from "../tensor/index.ts";
import { FlatBuffer, MASTER } from "./flat.ts";

/** One parameter as an optimizer takes it. */
export type ParameterLike = Tensor | Parameter | readonly [string, Tensor];

/** Parameters with hyperparameters of their own (any not given are the optimizer's). */
export interface ParameterGroup<H> {
  params: Iterable<ParameterLike>;
  options?: Partial<H>;
}

/** What an optimizer takes: parameters, or groups of them. */
export type Parameters<H> = Iterable<ParameterLike> | readonly ParameterGroup<H>[];

/** An optimizer's state as safetensors holds it: tensors named `<parameter>.<state>`, hyperparameters as strings. */
export interface OptimizerState {
  tensors: Record<string, Tensor>;
  metadata: Record<string, string>;
}

/** A parameter as the optimizer holds it. */
export interface Held {
  readonly name: string;
  readonly value: Tensor;
  /** Its gradient now (a module's .grad changes as backward() runs and zeroGrad() drops it). */
  grad(): Tensor | undefined;
  /** Replaces its gradient, where it is a tensor's .grad (undefined for a { name, value, grad } record, which owns its own). */
  readonly setGrad: ((grad: Tensor) => void) | undefined;
  readonly group: number;
}

/** Options every optimizer takes beside its hyperparameters. */
export interface MasterWeightsOption {
  /**
   * Whether bfloat16 and float16 parameters are updated through a float32 copy (default true): the
   * optimizer's state then holds that copy and float32 moments, and writes the rounded copy into the parameter
   * after each step. false updates the half parameter in place (the moments in its dtype).
   */
  masterWeights?: boolean;
  /**
   * Whether the parameters of each group, device and dtype are gathered into one flat buffer that a step updates
   * with one launch (default false, as torch.optim's fused): each parameter becomes a view of that buffer (the
   * same Tensor, its values kept), its .grad a view of a flat gradient. Views of a parameter made before the
   * optimizer keep the old memory, so a parameter with another live view stays apart (updated on its own).
   */
  fused?: boolean;
}

/** What one launch of a step updates: a flat buffer, or one parameter. */
export interface UpdateUnit {
  readonly group: number;
  readonly target: Tensor;
  readonly grad: Tensor;
  readonly state: ReadonlyMap<string, Tensor>;
  /** The flat buffer updated, or undefined for one parameter (`index`). */
  readonly flat: FlatBuffer | undefined;
  readonly index: number;
}

/** A group's hyperparameters. */
export type Hyper = Record<string, number>;

function isGroup(p: unknown): p is ParameterGroup<unknown> {
  return typeof p === "object" && p !== null && !(p instanceof Tensor) && !Array.isArray(p) && "params" in p;
}

function held(fn: string, p: ParameterLike, index: number, group: number): Held {
  const ofTensor = (name: string, t: Tensor): Held => ({
    name, value: t, grad: () => t.grad, setGrad: (g) => {
      if (t.grad !== g) t.grad?.dispose();
      t.grad = g;
    }, group,
  });
  if (p instanceof Tensor) return ofTensor(String(index), p);
  if (Array.isArray(p)) {
    const [name, t] = p as readonly [string, Tensor];
    if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: parameter '${name}' is not a Tensor`);
    return ofTensor(name, t);
  }
  const r = p as Parameter;
  if (typeof r !== "object" || r === null || !(r.value instanceof Tensor)) {
    throw new LLTMError("INVALID_ARGUMENT", `${fn}: parameter ${index} is not a Tensor, a [name, Tensor] pair or a { name, value, grad }`);
  }
  return { name: r.name, value: r.value, grad: () => r.grad, setGrad: undefined, group };
}

/** Formats a bound as the library's messages do. */
const bound = (v: number) => Math.abs(v) >= 1e6 ? String(v) : v.toFixed(6);

/** Checks `hyper`'s values against op `o`'s scalar ranges (the library's own rule), naming `fn`. */
export function checkScalars(fn: string, o: native.Op, hyper: Hyper): void {
  for (const s of o.spec.scalars) {
    const v = hyper[s.name];
    if (v === undefined) continue;
    const ok = s.kind === "ANY" ||
      (s.kind === "CLOSED" && Number.isFinite(v) && v >= s.lo && v <= s.hi) ||
      (s.kind === "HALF_OPEN" && Number.isFinite(v) && v >= s.lo && v < s.hi) ||
      (s.kind === "INTEGER" && Number.isSafeInteger(v) && v >= s.lo && v <= s.hi);
    if (!ok) {
      const range = s.kind === "HALF_OPEN" ? `[${bound(s.lo)}, ${bound(s.hi)})` : `[${bound(s.lo)}, ${bound(s.hi)}]`;
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${s.name}' must be in ${range}, got ${v}`);
    }
  }
}

/** Checks that each of `names` in `hyper` is a number, naming `fn`. */
function checkNumbers(fn: string, hyper: Hyper): void {
  for (const [k, v] of Object.entries(hyper)) {
    if (typeof v !== "number" || Number.isNaN(v)) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: '${k}' must be a number, got ${typeof v === "string" ? JSON.stringify(v) : String(v)}`);
    }
  }
}

/** Refuses an option `fn` does not have (a misspelt one would otherwise be ignored), naming those it has. */
export function checkOptionNames(fn: string, options: object, known: readonly string[]): void {
  const unknown = Object.keys(options).filter((k) => !known.includes(k));
  if (unknown.length > 0) {
    throw new LLTMError(
      "INVALID_ARGUMENT",
      `${fn}: unknown option${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `'${k}'`).join(", ")}; its options are ${known.map((k) => `'${k}'`).join(", ")}`,
    );
  }
}

/**
 * Every parameter that has a gradient, its gradient and state alive, of the parameter's dtype, device and
 * shape, and contiguous: what the library would refuse for one parameter after the ones before it had moved.
 */
function checkParameters(fn: string, params: readonly Held[], states: readonly ReadonlyMap<string, Tensor>[], needGrad: boolean): void {
  params.forEach((p, i) => {
    // A disposed parameter has no gradient either: without this, a step would pass over it without a word.
    if (p.value instanceof Tensor && p.value.disposed) {
      throw new LLTMError("DISPOSED", `${fn}: parameter '${p.name}' has been disposed (moved by to()? make the optimizer after moving the module; or its module was disposed)`);
    }
    const grad = p.grad();
    if (grad === undefined && !needGrad) return;
    const tensors: [string, unknown][] = [[`parameter '${p.name}'`, p.value], [`the gradient of '${p.name}'`, grad]];
    for (const [name, t] of states[i] ?? []) tensors.push([`the ${name} of '${p.name}'`, t]);
    for (const [what, t] of tensors) {
      if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: ${what} is not a Tensor`);
      if (t.disposed) {
        throw new LLTMError("DISPOSED", `${fn}: ${what} has been disposed (moved by to()? make the optimizer after moving the module)`);
      }
      // The library's rule, checked for all before the first moves: one compute type (float64, or float32 for the rest).
      if (valueDType(t.dtype) !== valueDType(p.value.dtype)) {
        throw new LLTMError("INVALID_DTYPE", `${fn}: ${what} is ${t.dtype}, parameter '${p.name}' is ${p.value.dtype}`);
      }
      if (t.device !== p.value.device) {
        throw new LLTMError("INVALID_DEVICE", `${fn}: ${what} is on ${t.device}, parameter '${p.name}' on ${p.value.device}`);
      }
      if (!sameShape(t.shape, p.value.shape)) {
        throw new LLTMError("SHAPE_MISMATCH", `${fn}: ${what} has shape [${t.shape.join(", ")}], parameter '${p.name}' [${p.value.shape.join(", ")}]`);
      }
      if (!t.isContiguous()) throw new LLTMError("INVALID_ARGUMENT", `${fn}: ${what} must be contiguous`);
    }
  });
}

export abstract class Optimizer implements Disposable {
  readonly params: readonly Held[];
  /** Per group, its hyperparameters (lr and the optimizer's others). */
  readonly groups: readonly Hyper[];
  /** Per parameter, its state tensors by name (e.g. exp_avg), on the parameter's device and dtype. */
  protected readonly state: ReadonlyMap<string, Tensor>[];
  /** Counters shared by every group (Adam's step). */
  protected readonly counters: Hyper;
  protected readonly kind: string;
  /** The op whose scalar ranges the hyperparameters must meet. */
  private readonly op: native.Op;
  /** The flat buffers (fused), and per parameter the one holding it. */
  private readonly flats: readonly FlatBuffer[];
  private readonly flatOf: readonly (FlatBuffer | undefined)[];

  protected constructor(
    kind: string, op: native.Op, params: Parameters<Hyper>, defaults: Hyper, counters: Hyper, stateNames: readonly string[],
    masterWeights: boolean | undefined, fused: boolean | undefined,
  ) {
    if (masterWeights !== undefined && typeof masterWeights !== "boolean") {
      throw new LLTMError("INVALID_ARGUMENT", `${kind}: 'masterWeights' must be true or false, got ${String(masterWeights)}`);
    }
    if (fused !== undefined && typeof fused !== "boolean") {
      throw new LLTMError("INVALID_ARGUMENT", `${kind}: 'fused' must be true or false, got ${String(fused)}`);
    }
    this.kind = kind;
    this.op = op;
    const list = params === null || typeof params !== "object" || !(Symbol.iterator in params) ? undefined : [...params];
    if (list === undefined || list.length === 0) throw new LLTMError("INVALID_ARGUMENT", `${kind}: no parameters to optimise`);
    const groups: { params: ParameterLike[]; options: Partial<Hyper> }[] = list.every(isGroup)
      ? (list as ParameterGroup<Hyper>[]).map((g) => ({ params: [...g.params], options: g.options ?? {} }))
      : list.some(isGroup)
      ? (() => {
        throw new LLTMError("INVALID_ARGUMENT", `${kind}: give parameters or groups of parameters ({ params, options }), not both`);
      })()
      : [{ params: list as ParameterLike[], options: {} }];
    const heldParams: Held[] = [];
    this.groups = groups.map((g, gi) => {
      const hyper = { ...defaults, ...g.options } as Hyper;
      const where = gi === 0 ? kind : `${kind}: group ${gi}`;
      checkOptionNames(where, g.options, Object.keys(defaults));
      checkNumbers(where, hyper);
      this.checkHyper(kind, hyper);
      for (const p of g.params) heldParams.push(held(kind, p, heldParams.length, gi));
      return hyper;
    });
    this.counters = { ...counters };
    const names = new Set<string>(), values = new Set<Tensor>();
    for (const p of heldParams) {
      if (names.has(p.name)) throw new LLTMError("INVALID_ARGUMENT", `${kind}: two parameters are named '${p.name}'`);
      if (values.has(p.value)) throw new LLTMError("INVALID_ARGUMENT", `${kind}: parameter '${p.name}' is given twice`);
      names.add(p.name);
      values.add(p.value);
    }
    this.params = heldParams;
    checkParameters(kind, this.params, [], false);
    const state: ReadonlyMap<string, Tensor>[] = [];
    const flats: FlatBuffer[] = [], flatOf: (FlatBuffer | undefined)[] = [];
    const mastered = (p: Held) => masterWeights !== false && isHalf(p.value.dtype);
    try {
      if (fused === true) {
        for (const members of flatMembers(heldParams, mastered)) {
          const flat = new FlatBuffer(heldParams, members, stateNames, mastered(heldParams[members[0]!]!));
          flats.push(flat);
          members.forEach((i, k) => {
            flatOf[i] = flat;
            state[i] = flat.memberState[k]!;
          });
        }
      }
      heldParams.forEach((p, i) => {
        if (flatOf[i] !== undefined) return;
        const master = mastered(p);
        const o = { dtype: master ? "float32" as const : p.value.dtype, device: p.value.device };
        const m = new Map(stateNames.map((n) => [n, Tensor.zeros(p.value.shape, o)]));
        state[i] = m;
        if (master) {
          const copy = Tensor.empty(p.value.shape, o);
          m.set(MASTER, copy);
          noGrad(() => copy.copyFrom(p.value));
        }
      });
    } catch (e) {
      for (const m of state) for (const t of m?.values() ?? []) t.dispose();
      for (const f of flats) f.dispose();
      throw e;
    }
    this.state = state;
    this.flats = flats;
    this.flatOf = flatOf;
    this.params.forEach((_, i) => this.widenGrad(i));
  }

  /** Whether parameter i is updated through a float32 copy (its state's `master`). */
  protected hasMaster(i: number): boolean {
    return this.state[i]!.has(MASTER);
  }

  /** The tensor a step updates for parameter i: its float32 master copy, or the parameter itself. */
  protected target(i: number): Tensor {
    return this.state[i]!.get(MASTER) ?? this.params[i]!.value;
  }

  /**
   * Parameter i's gradient as the next step reads it: for a parameter with master weights, a half gradient
   * the tape made is first widened to float32 (replacing its .grad), so that unscaling and clipping it lose nothing.
   */
  gradient(i: number): Tensor | undefined {
    this.widenGrad(i);
    return this.params[i]!.grad();
  }

  /**
   * The parameters' names and gradients as gradient() gives them (those with none left out), for GradScaler; a
   * flat buffer whose every gradient is there comes as its flat gradient, named after its first parameter.
   */
  gradients(): { name: string; grad: Tensor }[] {
    return this.units().map((u) => ({ name: this.params[u.index]!.name, grad: u.grad }));
  }

  /**
   * What a step updates, each with one launch: every flat buffer whose parameters' gradients are all its
   * views (binding those made elsewhere), then every other parameter that has a gradient.
   */
  protected units(): UpdateUnit[] {
    const out: UpdateUnit[] = [];
    for (const f of this.flats) {
      const grad = f.adopt();
      if (grad !== undefined) {
        out.push({ group: this.params[f.members[0]!]!.group, target: f.target, grad, state: f.state, flat: f, index: f.members[0]! });
      }
    }
    this.params.forEach((p, i) => {
      const flat = this.flatOf[i];
      if (flat !== undefined && out.some((u) => u.flat === flat)) return;
      const grad = this.gradient(i);
      if (grad !== undefined && !grad.disposed) {
        out.push({ group: p.group, target: this.target(i), grad, state: this.state[i]!, flat: undefined, index: i });
      }
    });
    return out;
  }

  private widenGrad(i: number): void {
    const p = this.params[i]!;
    const grad = p.grad();
    if (!this.hasMaster(i) || p.setGrad === undefined || grad === undefined || grad.disposed || !isHalf(grad.dtype)) return;
    const wide = Tensor.empty(grad.shape, { dtype: "float32", device: grad.device });
    try {
      noGrad(() => wide.copyFrom(grad));
    } catch (e) {
      wide.dispose();
      throw e;
    }
    p.setGrad(wide);
  }

  /** Writes each master copy, rounded, into its half parameter: those of `units`, or all. */
  private writeMasters(units: readonly UpdateUnit[] | undefined): void {
    noGrad(() => {
      if (units !== undefined) {
        for (const u of units) {
          const master = u.state.get(MASTER);
          if (master !== undefined) (u.flat?.value ?? this.params[u.index]!.value).copyFrom(master);
        }
        return;
      }
      for (const f of this.flats) if (f.state.has(MASTER)) f.value.copyFrom(f.target);
      this.params.forEach((p, i) => {
        const master = this.state[i]!.get(MASTER);
        if (master !== undefined && this.flatOf[i] === undefined) p.value.copyFrom(master);
      });
    });
  }

  /** The learning rate of the first group; setting it sets every group's (a schedule sets them one by one). */
  get lr(): number {
    return this.groups[0]!.lr!;
  }

  set lr(value: number) {
    if (typeof value !== "number") throw new LLTMError("INVALID_ARGUMENT", `${this.kind}: lr must be a number, got ${typeof value}`);
    for (const g of this.groups) g.lr = value;
  }

  /** Sets every parameter's gradient to zero. */
  zeroGrad(): void {
    checkParameters(`${this.kind}.zeroGrad`, this.params, this.state, false);
    const zeroed = new Set(this.flats.filter((f) => f.zero()));
    this.params.forEach((p, i) => {
      const flat = this.flatOf[i];
      if (flat !== undefined && zeroed.has(flat)) return;
      this.widenGrad(i);
      p.grad()?.fill(0);
    });
  }

  /**
   * Updates every parameter that has a gradient, or none of them. Inside a
   * captured step (compileStep) the update is recorded with the step; the
   * hyperparameters it bakes into its launches must then stay as they are.
   */
  step(): void {
    const fn = `${this.kind}.step`;
    for (const g of this.groups) this.checkHyper(fn, g);
    checkParameters(fn, this.params, this.state, false);
    const capture = activeCapture();
    if (capture !== undefined) this.keepBaked(fn, capture);
    const units = this.units();
    this.update(fn, capture, units);
    this.writeMasters(units);
  }

  /** The hyperparameters read on the device at every step rather than baked into the launches. */
  protected liveHyper(): readonly string[] {
    return [];
  }

  /** Refuses, at every replay of a captured step, a baked hyperparameter that changed since the capture. */
  private keepBaked(fn: string, capture: Capture): void {
    const live = new Set(this.liveHyper());
    const baked = this.groups.map((g) => Object.entries(g).filter(([k]) => !live.has(k)));
    capture.beforeReplay(() => {
      this.groups.forEach((g, i) => {
        for (const [k, v] of baked[i]!) {
          if (g[k] === v) continue;
          throw new LLTMError(
            "INVALID_ARGUMENT",
            `${fn}: ${i === 0 ? "" : `group ${i}'s `}'${k}' changed from ${v} to ${g[k]} after the step was captured (compileStep), ` +
              `and ${this.kind} baked it into the captured launches; compile the step again` +
              (k === "lr" ? ", or use Adam or AdamW with { capturable: true }, which read lr on the device" : ""),
          );
        }
      });
    });
  }

  /** Checks a group's hyperparameters against the op's ranges and the optimizer's own rules. */
  protected checkHyper(fn: string, hyper: Hyper): void {
    checkScalars(fn, this.op, hyper);
  }

  /** The update of `units`, recorded into `capture` when one is in progress. */
  protected abstract update(fn: string, capture: Capture | undefined, units: readonly UpdateUnit[]): void;

  /** The state to save: the optimizer's own tensors (not copies) and its hyperparameters (group i > 0's as `group<i>.<name>`). */
  stateDict(): OptimizerState {
    const tensors = Object.create(null) as Record<string, Tensor>;
    this.params.forEach((p, i) => {
      for (const [name, t] of this.state[i]!) tensors[`${p.name}.${name}`] = t;
    });
    const metadata: Record<string, string> = { optimizer: this.kind, groups: String(this.groups.length) };
    this.groups.forEach((g, i) => {
      for (const [k, v] of Object.entries(g)) metadata[i === 0 ? k : `group${i}.${k}`] = String(v);
    });
    for (const [k, v] of Object.entries(this.counters)) metadata[k] = String(v);
    return { tensors, metadata };
  }

  /** Restores a state from stateDict() (of an optimizer of this kind over parameters of the same names, shapes and groups); all checked before anything changes. */
  loadStateDict(state: OptimizerState): void {
    const fn = `${this.kind}.loadStateDict`;
    const { tensors, metadata } = state;
    if (metadata.optimizer !== this.kind) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state is of ${JSON.stringify(metadata.optimizer)}, not ${this.kind}`);
    }
    const number = (key: string) => {
      const v = Object.hasOwn(metadata, key) ? Number(metadata[key]) : NaN;
      if (Number.isNaN(v)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state has no number '${key}' (got ${JSON.stringify(metadata[key])})`);
      return v;
    };
    const groupCount = Object.hasOwn(metadata, "groups") ? number("groups") : 1;
    if (groupCount !== this.groups.length) {
      throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state has ${groupCount} parameter groups, this ${this.kind} ${this.groups.length}`);
    }
    const groups = this.groups.map((g, i) => {
      const hyper: Hyper = {};
      for (const k of Object.keys(g)) hyper[k] = number(i === 0 ? k : `group${i}.${k}`);
      this.checkHyper(fn, hyper);
      this.checkLoaded(fn, hyper, g);
      return hyper;
    });
    const counters: Hyper = {};
    for (const k of Object.keys(this.counters)) counters[k] = number(k);
    this.checkCounters(fn, counters);
    const expected = new Set<string>();
    this.params.forEach((p, i) => {
      for (const [name, mine] of this.state[i]!) {
        const key = `${p.name}.${name}`;
        expected.add(key);
        const t = Object.hasOwn(tensors, key) ? tensors[key] : undefined;
        if (!(t instanceof Tensor)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state has no tensor '${key}'`);
        if (t.disposed) throw new LLTMError("DISPOSED", `${fn}: '${key}' has been disposed`);
        if (t.dtype !== mine.dtype) throw new LLTMError("INVALID_DTYPE", `${fn}: '${key}' is ${t.dtype}, the parameter is ${mine.dtype}`);
        if (!sameShape(t.shape, mine.shape)) {
          throw new LLTMError("SHAPE_MISMATCH", `${fn}: '${key}' has shape [${t.shape.join(", ")}], the parameter [${mine.shape.join(", ")}]`);
        }
      }
    });
    for (const key of Object.keys(tensors)) {
      if (!expected.has(key)) throw new LLTMError("INVALID_ARGUMENT", `${fn}: the state has a tensor '${key}' this ${this.kind} does not hold`);
    }
    this.params.forEach((p, i) => {
      for (const [name, mine] of this.state[i]!) mine.copyFrom(tensors[`${p.name}.${name}`]!);
    });
    groups.forEach((h, i) => Object.assign(this.groups[i]!, h));
    Object.assign(this.counters, counters);
    this.writeMasters(undefined);
    this.loaded();
  }

  /** After loadStateDict: state kept elsewhere (on the device) follows the loaded counters. */
  protected loaded(): void {}

  /** Writes stateDict() to a safetensors file (beside the model's, say). */
  save(path: string): void {
    const { tensors, metadata } = this.stateDict();
    saveCheckpoint(path, tensors, metadata);
  }

  /** Restores the state saved by save(). */
  load(path: string, options: { device?: DeviceLike } = {}): void {
    const { tensors, metadata } = loadCheckpoint(path, { device: options.device ?? this.params[0]!.value.device });
    try {
      this.loadStateDict({ tensors, metadata });
    } finally {
      for (const t of Object.values(tensors)) t.dispose();
    }
  }

  /** Refuses loaded hyperparameters that do not fit this optimizer's state (what only it knows). */
  protected checkLoaded(_fn: string, _loaded: Hyper, _mine: Hyper): void {}

  /** Refuses loaded counters that are not counts. */
  protected checkCounters(_fn: string, _counters: Hyper): void {}

  dispose(): void {
    for (const m of this.state) for (const t of m.values()) t.dispose();
    for (const f of this.flats) f.dispose();
  }

  /** The flat buffers' parameters by name (fused), one list per buffer: which parameters one launch updates. */
  get flatBuffers(): string[][] {
    return this.flats.map((f) => f.members.map((i) => this.params[i]!.name));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * The parameters a fused optimizer gathers, one list per flat buffer: by group, device, dtype and whether
 * they have master weights, those that can move without another tensor noticing: contiguous, requiring
 * gradients, and viewed by no live tensor but the parameters given here, none overlapping another (a
 * record's gradient likewise, and of the type the buffer holds). Parameters an earlier fused optimizer
 * gathered share its buffer's memory, and so are gathered again.
 */
function flatMembers(params: readonly Held[], mastered: (p: Held) => boolean): number[][] {
  const recordGrad = (p: Held) => (p.setGrad === undefined ? p.grad() : undefined);
  const alone = exclusive([...params.map((p) => p.value), ...params.map(recordGrad).filter((g) => g !== undefined)]);
  const buffers = new Map<string, number[]>();
  params.forEach((p, i) => {
    const v = p.value;
    if (!alone.has(v)) return;
    const wide = mastered(p) ? "float32" : v.dtype;
    if (p.setGrad !== undefined) {
      if (!v.requiresGrad && v.grad === undefined) return;
    } else {
      const g = p.grad()!;
      if (!alone.has(g) || g.dtype !== wide || !sameShape(g.shape, v.shape)) return;
    }
    const key = `${p.group}|${v.device}|${v.dtype}|${wide}`;
    let list = buffers.get(key);
    if (list === undefined) buffers.set(key, list = []);
    list.push(i);
  });
  return [...buffers.values()];
}

/**
 * Of `tensors`, those that are live and contiguous and whose memory no other live tensor views: every
 * reference to their storage is one of `tensors`, and no two of them overlap.
 */
function exclusive(tensors: readonly Tensor[]): Set<Tensor> {
  const byStorage = new Map<Tensor["storage"], Tensor[]>();
  for (const t of tensors) {
    if (t.disposed) continue;
    const list = byStorage.get(t.storage);
    if (list === undefined) byStorage.set(t.storage, [t]);
    else if (!list.includes(t)) list.push(t);
  }
  const out = new Set<Tensor>();
  for (const [storage, list] of byStorage) {
    if (storage.references !== list.length || !list.every((t) => t.isContiguous())) continue;
    const spans = list.map((t) => [t.offset, t.offset + t.numel] as const).sort((a, b) => a[0] - b[0]);
    if (spans.some((s, k) => k > 0 && s[0] < spans[k - 1]![1])) continue;
    for (const t of list) out.add(t);
  }
  return out;
}
