/** The training scripts' loss curve, kept on the loss's device and read only when asked. */
import { Tensor } from "../ts/index.ts";
import { LossMeter } from "../scripts/progress.ts";
import { assert, assertEquals, test } from "./harness.ts";

test("LossMeter: each closed point is the mean of its steps' losses; last and curve read them, closing reads nothing", () => {
  using sum = Tensor.zeros([1], { dtype: "float64" });
  using meter = new LossMeter(sum, 3);
  assert(Number.isNaN(meter.last), "NaN before any step");
  const steps = [[1, 2, 3], [4], [10, 20]];
  for (const [i, losses] of steps.entries()) {
    for (const l of losses) {
      using one = Tensor.fromArray([l], { dtype: "float64" });
      sum.add_(one);
      meter.counted();
    }
    if (i === 0) assertEquals(meter.last, 2, "before the first point: the mean so far");
    meter.close();
    meter.close();
    assertEquals(sum.item(), 0, "closing moves the sum out");
  }
  assertEquals(meter.last, 15);
  assertEquals(meter.curve, [2, 4, 15]);
  let refused = "";
  try {
    using one = Tensor.fromArray([1], { dtype: "float64" });
    sum.add_(one);
    meter.counted();
    meter.close();
  } catch (e) {
    refused = (e as Error).message;
  }
  assert(/more than the 3 curve points/.test(refused), refused);
});
