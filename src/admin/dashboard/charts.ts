/**
 * Charts drawn on the server as inline SVG: no script, no style attributes (the CSP allows only
 * the stylesheet), shapes coloured by class. Every chart has its numbers as text beside it, so the
 * figures are readable without the picture (and by screen readers through `role="img"` labels).
 */
import { type Html, html } from "./html.ts";

const clamp01 = (x: number): number => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

/**
 * A horizontal bar: the share `value / max` filled, in one colour whatever the share: a full shard
 * is how sharding works (the next URLs go to a new one), not an alarm.
 */
export function fillBar(value: number, max: number, label: string): Html {
  const share = clamp01(value / max);
  const width = Math.round(share * 1000) / 10;
  return html`<svg class="bar" viewBox="0 0 100 8" preserveAspectRatio="none" role="img" aria-label="${label}: ${(share * 100).toFixed(1)}%"><rect class="bar-bg" width="100" height="8"></rect><rect class="bar-fill" width="${width}" height="8"></rect></svg>`;
}

export interface Column {
  value: number;
  /** Shown under the chart's table, and in the bar's tooltip. */
  label: string;
  bad?: boolean;
}

/** Vertical bars, one per value, scaled to the largest (runs over time). */
export function columns(values: readonly Column[], caption: string): Html {
  const max = Math.max(1, ...values.map((v) => v.value));
  const n = Math.max(values.length, 1);
  const step = 100 / n;
  const bars = values.map((v, i) => {
    const h = Math.max(0.5, clamp01(v.value / max) * 40);
    return html`<rect class="${v.bad ? "col bad" : "col"}" x="${(i * step + step * 0.1).toFixed(2)}" y="${(40 - h).toFixed(2)}" width="${(step * 0.8).toFixed(2)}" height="${h.toFixed(2)}"><title>${v.label}</title></rect>`;
  });
  return html`<svg class="columns" viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label="${caption}">${bars}</svg>`;
}
