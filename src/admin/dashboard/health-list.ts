/**
 * The dashboard's first part: the health list (src/admin/health.ts), red then amber, each problem
 * with what to do about it; "No problems found" when there is none.
 */
import type { HealthItem } from "../health.ts";
import { type Html, html } from "./html.ts";

const LABEL = { red: "Problem", amber: "Check" } as const;

export function healthList(items: readonly HealthItem[]): Html {
  const red = items.filter((i) => i.level === "red").length;
  const amber = items.length - red;
  const counts = html`<span data-figure="health-red">${red}</span> red, <span data-figure="health-amber">${amber}</span> amber`;
  if (items.length === 0) {
    return html`<section class="health" id="health" aria-labelledby="health-title"><h2 id="health-title">Health</h2><p class="ok" data-figure="health">No problems found.</p></section>`;
  }
  return html`<section class="health" id="health" aria-labelledby="health-title"><h2 id="health-title">Health <span class="note">${counts}</span></h2>
<ul class="health-list" data-figure="health">
${items.map(
  (i) =>
    html`<li class="${i.level}" data-level="${i.level}" data-topic="${i.topic}"><span class="level">${LABEL[i.level]}</span> <span class="message">${i.message}</span> <span class="action">${i.action}</span></li>`,
)}
</ul></section>`;
}
