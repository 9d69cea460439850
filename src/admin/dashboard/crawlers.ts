/**
 * The dashboard's crawlers card (status `crawlers`, src/crawlers/types.ts): per crawler, requests
 * verified and only claimed over 24 h and 7 days, its last fetch of the index and robots.txt with
 * what it got, and per section how many of the listed shards it fetched in 7 days. One row per
 * crawler, whatever the site's size; each document's fetches are in GET /sitemap-admin/status.
 */
import type { CrawlersStatus, DocumentFetchStatus } from "../../crawlers/types.ts";
import { type Html, html } from "./html.ts";

const number = (n: number): string => n.toLocaleString("en-US");
const when = (iso: string): string => iso.replace("T", " ").replace(/:\d\d(?:\.\d+)?Z$/, "Z");
const ok = (status: number): boolean => (status >= 200 && status < 300) || status === 304;

/** A fetch as "200 at 2026-03-01 08:00Z", red when it was neither 2xx nor 304. */
function fetchCell(fetch: DocumentFetchStatus | null, figure?: string): Html {
  if (!fetch) return html`<td${figure ? html` data-figure="${figure}"` : ""}>none in 7 days</td>`;
  return html`<td${figure ? html` data-figure="${figure}"` : ""}><span class="${ok(fetch.status) ? "num" : "num bad"}">${fetch.status}</span> ${when(fetch.at)}</td>`;
}

export function crawlersCard(crawlers: CrawlersStatus | null | undefined): Html {
  if (!crawlers) return html`<p>The crawler log is not available.</p>`;
  if (!crawlers.enabled) return html`<p>No crawler log: it needs the DB (D1) binding.</p>`;
  if (crawlers.crawlers.length === 0) return html`<p>No crawler is configured (CRAWLER_IP_RANGES).</p>`;
  const ranges = crawlers.ranges.map(
    (r) =>
      html`${r.name} ${number(r.prefixes)} prefixes (${r.fetchedAt ? `fetched ${when(r.fetchedAt)}` : "never fetched"})${r.error ? html` <span class="bad">refresh failed</span>` : ""}${r.refused.length > 0 ? html` <span class="bad">${number(r.refused.length)} too wide, refused</span>` : ""}`,
  );
  return html`<div class="scroll"><table class="crawlers"><thead><tr><th>crawler</th><th>verified 24 h / 7 d</th><th>claimed only 24 h / 7 d</th><th>index</th><th>robots.txt</th><th>shards fetched in 7 days</th></tr></thead><tbody>
${crawlers.crawlers.map(
  (c) => html`<tr data-crawler="${c.name}"><td>${c.name}</td>
<td class="num"><span data-figure="crawler-${c.name}-verified-24h">${number(c.requests.verified24h)}</span> / <span data-figure="crawler-${c.name}-verified-7d">${number(c.requests.verified7d)}</span></td>
<td class="num"><span data-figure="crawler-${c.name}-unverified-24h">${number(c.requests.unverified24h)}</span> / <span data-figure="crawler-${c.name}-unverified-7d">${number(c.requests.unverified7d)}</span></td>
${fetchCell(c.index, `crawler-${c.name}-index`)}${fetchCell(c.robots)}
<td class="wrap">${c.sections.length === 0 ? "—" : c.sections.map((s, i) => html`${i > 0 ? " · " : ""}${s.section} <span class="num">${number(s.fetched)}/${number(s.shards)}</span>`)}</td></tr>`,
)}
</tbody></table></div>
<p class="note">Published IP ranges: ${ranges.map((r, i) => html`${i > 0 ? "; " : ""}${r}`)}. ${staleNote(crawlers)}</p>`;
}

/** What the log can say about documents no crawler fetched: nothing before it is `staleDays` old. */
function staleNote(crawlers: CrawlersStatus): string {
  const days = crawlers.staleDays;
  const since = crawlers.since === null ? null : Date.parse(crawlers.since);
  if (since === null || Date.now() - since < days * 86400_000) {
    return `The log began ${crawlers.since ? crawlers.since.replace("T", " ").replace(/\.\d+Z$/, "Z") : "just now"}: from ${days} days after, it names the listed documents no verified crawler fetched in ${days} days.`;
  }
  return crawlers.stale.count > 0
    ? `${number(crawlers.stale.count)} listed documents not fetched by a verified crawler in ${days} days.`
    : `Every listed document was fetched by a verified crawler in ${days} days.`;
}

/** A section's line of the crawler log: each crawler's shards fetched of those listed, and its last fetch. */
export function sectionCrawls(crawlers: CrawlersStatus | null | undefined, section: string): Html {
  if (!crawlers?.enabled) return html``;
  const rows = crawlers.crawlers.flatMap((c) => {
    const s = c.sections.find((x) => x.section === section);
    return s ? [{ name: c.name, s }] : [];
  });
  if (rows.length === 0) return html``;
  return html`<p class="note">Fetched in 7 days: ${rows.map(
    ({ name, s }, i) =>
      html`${i > 0 ? "; " : ""}${name} <span class="num" data-figure="section-${section}-${name}-fetched">${number(s.fetched)}</span> of ${number(s.shards)}${s.last ? html` (last ${s.last.path}, ${ok(s.last.status) ? s.last.status : html`<span class="bad">${s.last.status}</span>`} ${when(s.last.at)})` : ""}`,
  )}</p>`;
}
