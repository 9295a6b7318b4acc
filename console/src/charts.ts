/**
 * Small inline SVG charts (no framework): a line of samples the page collected poll by poll from
 * `/metrics` (issuance per second, webhook backlog, cover slack), and bars of the newest cycles (their
 * size, the time from cutoff to commit). Each chart carries its numbers as text too: the latest value,
 * the range, and a `<title>` per bar for a pointer or a screen reader.
 */
import { h } from "./dom";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 240;
const HEIGHT = 48;

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number>,
  ...children: (SVGElement | string)[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

const round = (value: number) =>
  Math.abs(value) >= 100 ? Math.round(value).toString() : (Math.round(value * 10) / 10).toString();

function frame(
  label: string,
  unit: string,
  values: number[],
  plot: SVGElement[],
  testId: string,
  empty = "no sample yet",
): HTMLElement {
  const last = values.at(-1);
  const summary =
    values.length === 0
      ? empty
      : `now ${round(last!)} ${unit} · min ${round(Math.min(...values))} · max ${round(Math.max(...values))}`;
  return h(
    "figure",
    { class: "chart", "data-testid": testId, "data-samples": String(values.length) },
    h("figcaption", {}, h("strong", {}, label), " ", h("span", { class: "muted" }, summary)),
    svg(
      "svg",
      {
        viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
        width: "100%",
        height: HEIGHT,
        role: "img",
        "aria-label": `${label}: ${summary}`,
      },
      svg("line", { x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5, class: "axis" }),
      ...plot,
    ),
  );
}

/** A line through `values` (oldest first), scaled to the chart; `null` samples (no figure) are skipped. */
export function lineChart(
  label: string,
  unit: string,
  samples: (number | null)[],
  testId: string,
  empty?: string,
): HTMLElement {
  const values = samples.filter((v): v is number => v !== null);
  const low = Math.min(0, ...values);
  const high = Math.max(1e-9, ...values);
  const step = samples.length > 1 ? WIDTH / (samples.length - 1) : WIDTH;
  const points = samples
    .map((v, i) =>
      v === null
        ? null
        : `${(i * step).toFixed(1)},${(HEIGHT - 2 - ((v - low) / (high - low)) * (HEIGHT - 4)).toFixed(1)}`,
    )
    .filter((p): p is string => p !== null);
  const plot = points.length === 0 ? [] : [svg("polyline", { points: points.join(" "), class: "line" })];
  return frame(label, unit, values, plot, testId, empty);
}

/** One bar per `{label, value}` (oldest first), each with its figure as a tooltip. */
export function barChart(
  label: string,
  unit: string,
  bars: { label: string; value: number }[],
  testId: string,
): HTMLElement {
  const high = Math.max(1e-9, ...bars.map((b) => b.value));
  const width = bars.length === 0 ? 0 : WIDTH / bars.length;
  const plot = bars.map((bar, i) => {
    const height = Math.max(1, (Math.max(0, bar.value) / high) * (HEIGHT - 4));
    return svg(
      "rect",
      {
        x: (i * width + 1).toFixed(1),
        y: (HEIGHT - height).toFixed(1),
        width: Math.max(1, width - 2).toFixed(1),
        height: height.toFixed(1),
        class: "bar",
      },
      svg("title", {}, `${bar.label}: ${round(bar.value)} ${unit}`),
    );
  });
  return frame(
    label,
    unit,
    bars.map((b) => b.value),
    plot,
    testId,
  );
}

/** The samples of one metric family in Prometheus text (`name{labels} value`), summed over its labels; null when absent. */
export function metricSum(text: string, name: string): number | null {
  let sum: number | null = null;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name) || (line[name.length] !== " " && line[name.length] !== "{")) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}
