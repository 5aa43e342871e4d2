/**
 * The character-level language model of the main job: an embedding of each
 * character, a stack of LLTM layers over the sequence, and a linear layer to
 * the vocabulary's logits; its vocabulary (the characters of the training
 * text) and configuration travel in the checkpoint's metadata, so that
 * scripts/generate.ts can rebuild it from the file alone.
 */
import {
  crossEntropy, type DeviceLike, Embedding, Linear, LLTM, type LLTMOutput, type LLTMState, loadCheckpoint, Module, Tensor,
} from "../ts/index.ts";

export interface CharLMConfig {
  vocabulary: string;
  embedding: number;
  stateSize: number;
  layers: number;
  dropout: number;
}

export class CharLM extends Module {
  readonly config: CharLMConfig;
  readonly embed: Embedding;
  readonly lltm: LLTM;
  readonly head: Linear;

  constructor(config: CharLMConfig, options: { device?: DeviceLike; seed?: number } = {}) {
    super("CharLM");
    this.config = config;
    const V = config.vocabulary.length, seed = options.seed ?? 0;
    const at = { device: options.device, seed };
    this.embed = this.registerModule("embed", new Embedding(V, config.embedding, at));
    this.lltm = this.registerModule("lltm", new LLTM(config.embedding, config.stateSize, {
      ...at, seed: seed + 1, layers: config.layers, dropout: config.dropout,
    }));
    this.head = this.registerModule("head", new Linear(config.stateSize, V, { ...at, seed: seed + 100 }));
  }

  /** ids int32 [T, B] (and a state) -> logits [T, B, V] and the state after the last step. */
  forward(ids: Tensor, state?: LLTMState): { logits: Tensor; state: LLTMState } {
    const { logits, out } = this.run(ids, state);
    using _ = out.output; // the logits keep what they need of it
    return { logits, state: { h: out.h, c: out.c } };
  }

  /** The mean cross-entropy (nats per character) of predicting targets int32 [T, B] from ids [T, B]. */
  loss(ids: Tensor, targets: Tensor, reduction: "mean" | "sum" = "mean"): Tensor {
    // The LLTM's final state is not read, so it is never stacked.
    const { logits, out } = this.run(ids);
    out[Symbol.dispose]();
    using l = logits;
    const [T, B, V] = l.shape as [number, number, number];
    // A half model's loss in float32, as autocast computes it: a bfloat16 sum of 2048 losses would keep 8 bits.
    using wide = l.dtype === "bfloat16" || l.dtype === "float16" ? l.to("float32") : undefined;
    using flat = (wide ?? l).reshape([T * B, V]);
    using flatTargets = targets.reshape([T * B]);
    return crossEntropy(flat, flatTargets, { reduction });
  }

  /** ids [T, B] -> logits [T, B, V], beside the LLTM's result (whose state is stacked only where it is read). */
  private run(ids: Tensor, state?: LLTMState): { logits: Tensor; out: LLTMOutput } {
    using x = this.embed.forward(ids);
    const out = this.lltm.forward(x, state);
    return { logits: this.head.forward(out.output), out };
  }

  /** The checkpoint's metadata: the configuration, to rebuild the model. */
  metadata(): Record<string, string> {
    return { charlm: JSON.stringify(this.config) };
  }

  /** A model rebuilt from a checkpoint written by save(path, model.metadata()). */
  static fromCheckpoint(path: string, device: DeviceLike): CharLM {
    const { tensors, metadata } = loadCheckpoint(path, { device });
    try {
      if (metadata.charlm === undefined) throw new Error(`${path} is not a character model's checkpoint (no 'charlm' metadata)`);
      const model = new CharLM(JSON.parse(metadata.charlm) as CharLMConfig, { device });
      model.loadStateDict(tensors);
      return model;
    } finally {
      for (const t of Object.values(tensors)) t.dispose();
    }
  }
}

/** The characters of `text` in code-point order, and each one's index. */
export function vocabularyOf(text: string): string {
  return [...new Set(text)].sort().join("");
}

/** `text` as int32 ids of `vocabulary`; a character outside it is an error naming it. */
export function encode(text: string, vocabulary: string): Int32Array {
  const index = new Map([...vocabulary].map((c, i) => [c, i]));
  const ids = new Int32Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const id = index.get(text[i]!);
    if (id === undefined) throw new Error(`the character ${JSON.stringify(text[i])} is not in the model's vocabulary`);
    ids[i] = id;
  }
  return ids;
}
