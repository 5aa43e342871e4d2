/**
 * The training loss as an SVG line chart: a logarithmic y axis with a label
 * at every power of ten (and at 2 and 5 times it when few decades show), x
 * ticks at round step counts, the raw losses faintly behind an exponential
 * moving average, and the baseline as a dashed line. The average is
 * bias-corrected (as Adam's moments are): started at zero and divided by
 * 1 - beta^t, it follows the losses from the first step instead of dragging
 * the first loss along for hundreds of steps.
 */

/** Exponential moving average of `values` with factor `beta`, bias-corrected. */
export function smoothed(values: readonly number[], beta = 0.98): number[] {
  const out: number[] = [];
  let avg = 0, weight = 1;
  for (const v of values) {
    avg = beta * avg + (1 - beta) * v;
    weight *= beta;
    out.push(avg / (1 - weight));
  }
  return out;
}

/** Round tick values in [0, max]: multiples of 1, 2 or 5 times a power of ten, about `count` of them. */
function linearTicks(max: number, count: number): number[] {
  const raw = max / count, power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let v = 0; v <= max + 1e-9; v += step) ticks.push(v);
  return ticks;
}

/** Tick values of a log axis over [lo, hi]: powers of ten, plus 2x and 5x when the range spans few decades. */
function logTicks(lo: number, hi: number): number[] {
  const d0 = Math.floor(Math.log10(lo)), d1 = Math.ceil(Math.log10(hi));
  const multiples = d1 - d0 <= 3 ? [1, 2, 5] : [1];
  const ticks: number[] = [];
  for (let d = d0; d <= d1; d++) for (const m of multiples) {
    const v = m * 10 ** d;
    if (v >= lo * 0.999 && v <= hi * 1.001) ticks.push(v);
  }
  return ticks;
}

function label(v: number): string {
  if (v >= 1000 || v < 0.001) return v.toExponential(0);
  return String(Number(v.toPrecision(2)));
}

export interface LossPlotOptions {
  /** What the dashed line is (default: the adding problem's memoryless baseline). */
  baselineLabel?: string;
  /** Held-out losses as [step, loss], drawn as a second curve with points. */
  validation?: readonly (readonly [number, number])[];
}

export function lossPlot(values: readonly number[], baseline: number, title: string, options: LossPlotOptions = {}): string {
  const W = 720, H = 400, left = 64, right = 24, top = 40, bottom = 52;
  const validation = options.validation ?? [];
  const positive = [...values, ...validation.map(([, v]) => v)].filter((v) => v > 0 && Number.isFinite(v));
  const avg = smoothed(values);
  const lo = 10 ** Math.floor(Math.log10(Math.min(baseline, ...positive, ...avg.filter((v) => v > 0)) || 1e-6));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(baseline, ...positive) || 1));
  const n = Math.max(1, values.length);
  const x = (step: number) => left + ((W - left - right) * step) / n;
  const y = (v: number) =>
    top + ((H - top - bottom) * (Math.log10(hi) - Math.log10(Math.min(Math.max(v, lo), hi)))) / (Math.log10(hi) - Math.log10(lo));
  const line = (vs: readonly number[]) => vs.map((v, i) => `${x(i + 1).toFixed(1)},${y(v).toFixed(1)}`).join(" ");

  const yTicks = logTicks(lo, hi).map((v) => {
    const yy = y(v).toFixed(1);
    return `<line x1="${left}" y1="${yy}" x2="${W - right}" y2="${yy}" stroke="#e4e4e4"/>` +
      `<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${label(v)}</text>`;
  });
  const xTicks = linearTicks(n, 6).map((s) => {
    const xx = x(s).toFixed(1);
    return `<line x1="${xx}" y1="${H - bottom}" x2="${xx}" y2="${H - bottom + 5}" stroke="black"/>` +
      `<text x="${xx}" y="${H - bottom + 18}" text-anchor="middle">${s}</text>`;
  });
  const by = y(baseline).toFixed(1);
  const held = validation.map(([step, v]) => `${x(step).toFixed(1)},${y(v).toFixed(1)}`);
  const heldCurve = validation.length === 0 ? "" : `<polyline fill="none" stroke="#d2691e" stroke-width="2" points="${held.join(" ")}"/>
${held.map((p) => `<circle cx="${p.split(",")[0]}" cy="${p.split(",")[1]}" r="3" fill="#d2691e"/>`).join("")}
<text x="${W - right - 4}" y="${top + 30}" text-anchor="end" fill="#d2691e">validation loss</text>
`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">${title}</text>
${yTicks.join("\n")}
<line x1="${left}" y1="${H - bottom}" x2="${W - right}" y2="${H - bottom}" stroke="black"/>
<line x1="${left}" y1="${top}" x2="${left}" y2="${H - bottom}" stroke="black"/>
${xTicks.join("\n")}
<text x="${(left + W - right) / 2}" y="${H - 12}" text-anchor="middle">step</text>
<text x="16" y="${(top + H - bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(top + H - bottom) / 2})">loss (log scale)</text>
<polyline fill="none" stroke="#9ab8d6" stroke-width="0.6" points="${line(values)}"/>
<polyline fill="none" stroke="#1f4e8c" stroke-width="2" points="${line(avg)}"/>
${heldCurve}<line x1="${left}" y1="${by}" x2="${W - right}" y2="${by}" stroke="gray" stroke-dasharray="6 4"/>
<text x="${W - right - 4}" y="${(y(baseline) - 6).toFixed(1)}" text-anchor="end" fill="gray">${options.baselineLabel ?? "baseline (mean target)"} ${baseline.toFixed(4)}</text>
<text x="${W - right - 4}" y="${top + 14}" text-anchor="end" fill="#1f4e8c">moving average (bias-corrected, beta 0.98); raw loss in light blue</text>
</svg>
`;
}
