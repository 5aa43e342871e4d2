/**
 * The capturing Worker of the capture race: captures and replays a small
 * step `captures` times, each a new compileStep (so each begins and ends a
 * capture of cuda:0), and reports how many it made. It says "ready" first,
 * as tests/pool/worker.ts does.
 */
import { compileStep, noGrad, scale, Tensor } from "../../ts/index.ts";
import { parentPort } from "../workers.ts";

const port = await parentPort<{ captures: number }>();

port.on("message", ({ captures }) => {
  using x = Tensor.randn([256, 256], { device: "cuda", seed: 7 });
  let made = 0;
  noGrad(() => {
    for (let i = 0; i < captures; ++i) {
      using step = compileStep((a: Tensor) => scale(a, 2), { warmup: 1 });
      step(x).dispose();
      step(x).dispose();
      if (step.captured) made++;
    }
  });
  port.postMessage({ made });
});

port.postMessage("ready");
