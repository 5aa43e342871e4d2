/**
 * Sampling from the character model: the prompt runs through the model in
 * one call, then each character is drawn on the device from the softmax of
 * the logits divided by the temperature (multinomial, from a counter-based
 * generator keyed by the seed), fed back with the state carried along.
 */
import { Generator, multinomial, noGrad, scale, softmax, Tensor } from "../ts/index.ts";
import { type CharLM, encode } from "./charlm_model.ts";

export interface SampleOptions {
  temperature?: number;
  seed?: number;
}

/** The prompt followed by `length` sampled characters. */
export function sample(model: CharLM, prompt: string, length: number, options: SampleOptions = {}): string {
  const temperature = options.temperature ?? 0.8;
  const generator = new Generator(options.seed ?? 0);
  const vocabulary = model.config.vocabulary;
  const device = model.parameters()[0]!.device;
  const wasTraining = model.training;
  model.eval();
  try {
    return noGrad(() => {
      const start = encode(prompt.length > 0 ? prompt : "\n", vocabulary);
      let ids: Tensor = Tensor.fromTypedArray(start, [start.length, 1], { device });
      let state: { h: Tensor; c: Tensor } | undefined;
      let out = prompt;
      for (let i = 0; i < length; i++) {
        const step = model.forward(ids, state);
        ids.dispose();
        state?.h.dispose();
        state?.c.dispose();
        state = step.state;
        using logits = step.logits;
        const T = logits.shape[0]!;
        using lastStep = logits.narrow(0, T - 1, 1);
        using row = lastStep.reshape([1, vocabulary.length]);
        using tempered = scale(row, 1 / temperature);
        using probs = softmax(tempered);
        const next = multinomial(probs, { generator });
        const id = next.toTypedArray()[0]!;
        out += vocabulary[id];
        ids = next.reshape([1, 1]);
        next.dispose();
      }
      ids.dispose();
      state?.h.dispose();
      state?.c.dispose();
      return out;
    });
  } finally {
    model.train(wasTraining);
  }
}
