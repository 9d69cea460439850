/**
 * The browser view of the sitemap index: one row per listed sitemap (shards, news sitemaps, the
 * feed) with a real link to it, its fill against the protocol limits (URLs of 50,000, bytes of
 * 52,428,800) and its lastmod. The numbers come from the manifest: the page reads no record.
 */

import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP } from "../../core/limits.ts";
import { plural } from "../../core/plural.ts";
import { PAGE_END, fmt, h, pageStart } from "./page.ts";

export interface IndexViewRow {
  /** Where the link goes (a path on the site; a navigation there shows that sitemap's view). */
  href: string;
  /** What the row is called: the sitemap's URL as the index lists it. */
  label: string;
  kind: "shard" | "news" | "feed";
  /** URLs (articles, entries) in it; null when unknown. */
  urls: number | null;
  /** Its XML size in bytes; null when unknown. */
  bytes: number | null;
  /** W3C datetime, as the index lists it. */
  lastmod: string;
}

const percent = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)}%`;

/** A count with, when the protocol limits it, a meter and the share of the limit. */
function fill(value: number | null, limit: number | null, unit: string): string {
  if (value === null) return `<td class="n muted">–</td>`;
  if (limit === null) return `<td class="n">${fmt(value)} ${unit}</td>`;
  return `<td class="n">${fmt(value)} ${unit} <meter min="0" max="${limit}" optimum="${limit}" value="${value}" title="${percent(value, limit)} of ${fmt(limit)}">${percent(value, limit)}</meter><br><span class="muted">${percent(value, limit)} of ${fmt(limit)}</span></td>`;
}

export function renderIndexView(host: string, rows: readonly IndexViewRow[]): string {
  const shards = rows.filter((r) => r.kind === "shard");
  const urls = shards.reduce((sum, r) => sum + (r.urls ?? 0), 0);
  const parts = [
    pageStart(`Sitemap index of ${host}`),
    `<header>
<h1>Sitemap index of ${h(host)}</h1>
<p id="summary">This index lists <strong id="count">${rows.length}</strong> ${rows.length === 1 ? "sitemap" : "sitemaps"}; ${shards.length === 1 ? "the URL sitemap holds" : `the ${shards.length} URL sitemaps hold`} ${plural(urls, "URL")}.
Search engines read the same address as XML; this page is for people.</p>
</header>
<main>
<table id="sitemaps">
<caption class="muted">Each sitemap's fill against the protocol limits: ${fmt(MAX_URLS_PER_SITEMAP)} URLs and ${fmt(MAX_SITEMAP_BYTES)} bytes (50 MiB) uncompressed.</caption>
<thead><tr><th scope="col" class="n">#</th><th scope="col">Sitemap</th><th scope="col" class="n">URLs</th><th scope="col" class="n">Size</th><th scope="col">Last modified</th></tr></thead>
<tbody>
`,
  ];
  rows.forEach((row, i) => {
    parts.push(
      `<tr><td class="n">${i + 1}</td><th scope="row"><a href="${h(row.href)}">${h(row.label)}</a>${row.kind === "shard" ? "" : ` <span class="tag">${row.kind}</span>`}</th>`,
      row.kind === "shard" ? fill(row.urls, MAX_URLS_PER_SITEMAP, "URLs") : fill(row.urls, null, row.kind === "news" ? "articles" : "entries"),
      fill(row.bytes, row.kind === "shard" ? MAX_SITEMAP_BYTES : null, "bytes"),
      `<td class="date">${h(row.lastmod)}</td></tr>\n`,
    );
  });
  parts.push("</tbody>\n</table>\n</main>\n", PAGE_END);
  return parts.join("");
}
