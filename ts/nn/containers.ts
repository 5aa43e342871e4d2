/** Containers: ModuleList (children named 0, 1, …) and Sequential (a ModuleList whose forward chains its modules). */
import { LLTMError } from "../errors.ts";
import type { Tensor } from "../tensor/index.ts";
import { Module } from "./module.ts";

/** A module with a forward from one tensor to one tensor, as Sequential chains them. */
export interface TensorModule extends Module {
  forward(x: Tensor): Tensor;
}

export class ModuleList<M extends Module = Module> extends Module implements Iterable<M> {
  private readonly items: M[] = [];

  constructor(modules: readonly M[] = [], kind = "ModuleList") {
    super(kind);
    for (const m of modules) this.push(m);
  }

  push(module: M): this {
    if (!(module instanceof Module)) throw new LLTMError("INVALID_ARGUMENT", `${this.kind}: item ${this.items.length} is not a Module`);
    this.registerModule(String(this.items.length), module);
    this.items.push(module);
    return this;
  }

  get length(): number {
    return this.items.length;
  }

  at(i: number): M {
    const m = this.items[i];
    if (m === undefined) throw new LLTMError("INVALID_ARGUMENT", `${this.kind}.at: no module ${i} (it holds ${this.items.length})`);
    return m;
  }

  [Symbol.iterator](): Iterator<M> {
    return this.items[Symbol.iterator]();
  }
}

/** Modules run one after the other, each on the last one's output (as torch.nn.Sequential). */
export class Sequential extends ModuleList<TensorModule> {
  constructor(...modules: TensorModule[]) {
    super(modules, "Sequential");
  }

  /** Runs every module in turn; the tensors between them are freed as soon as the next module has run (what the tape needs of them it keeps). */
  forward(x: Tensor): Tensor {
    this.assertLive("Sequential.forward");
    let current = x;
    for (const m of this) {
      const next = m.forward(current);
      if (current !== x) current.dispose();
      current = next;
    }
    return current === x ? x.retain() : current;
  }
}
