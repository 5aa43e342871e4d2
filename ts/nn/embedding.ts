/** Embedding, as torch.nn.Embedding: a table weight [numEmbeddings, embeddingDim] of standard normal values, looked up by int32 ids. */
import { embedding } from "../autograd/functions/embedding.ts";
import { LLTMError } from "../errors.ts";
import { Random } from "../random.ts";
import type { Tensor } from "../tensor/index.ts";
import { checkSizes, normal, type ParameterOptions, placement } from "./init.ts";
import { Module } from "./module.ts";

export class Embedding extends Module {
  readonly numEmbeddings: number;
  readonly embeddingDim: number;

  constructor(numEmbeddings: number, embeddingDim: number, options: ParameterOptions = {}) {
    super("Embedding");
    checkSizes("Embedding", { numEmbeddings, embeddingDim });
    this.numEmbeddings = numEmbeddings;
    this.embeddingDim = embeddingDim;
    this.registerParameter("weight", normal([numEmbeddings, embeddingDim], new Random(options.seed ?? 0), placement("Embedding", options)));
  }

  get weight(): Tensor {
    return this.parameter("weight");
  }

  /** ids (int32, any shape, each in [0, numEmbeddings)) -> [...ids.shape, embeddingDim]. */
  forward(ids: Tensor): Tensor {
    const fn = "Embedding.forward";
    this.assertLive(fn);
    ids.assertLive(`${fn}: the ids`);
    if (ids.dtype !== "int32") {
      throw new LLTMError("INVALID_DTYPE", `${fn}: the ids must be int32 (Tensor.fromArray(ids, { dtype: "int32" })), got ${ids.dtype}`);
    }
    return embedding(this.weight, ids);
  }
}
