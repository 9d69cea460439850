/**
 * One row of the browser view's URL table, and its form in the view's per-version cache.
 *
 * A row is its number cell plus its cells. The number depends on where the row is shown (its
 * place in the shard, or among a filter's matches); the cells depend on the record alone. The cache
 * keeps the rows of each page as shown unfiltered, and apart from them the lowercased locs the
 * filter matches against; a filter numbers the cells of the rows it shows again.
 */

import { w3cSeconds } from "../../core/datetime-format.ts";
import { plural } from "../../core/plural.ts";
import type { UrlRecord } from "../../core/types.ts";
import { h } from "./page.ts";
import { readableUrl } from "./readable-url.ts";

/** A record as the view shows it; `updatedAt` for the feed's "Changed" column. */
export type ViewRecord = UrlRecord & { updatedAt?: number };

export type DateColumn = "lastmod" | "updated";

/** Everything of a row after its number cell (ends with `</tr>`, no line break). */
export function rowCells(r: ViewRecord, dateColumn: DateColumn): string {
  // Linked exactly as the sitemap lists it, shown as a person reads it (readable-url.ts).
  let url = `<a href="${h(r.loc)}">${h(readableUrl(r.loc))}</a>`;
  const news = r.ext?.news;
  if (news) url += `<div class="news">${h(news.title)} (${h(news.publication.name)}, ${h(news.publication_date)})</div>`;
  let ext = "";
  if (r.ext?.images?.length) ext += `<span class="tag images">${plural(r.ext.images.length, "image")}</span>`;
  if (r.ext?.videos?.length) ext += `<span class="tag videos">${plural(r.ext.videos.length, "video")}</span>`;
  for (const alt of r.ext?.alternates ?? []) ext += `<a class="tag hreflang" href="${h(alt.href)}" hreflang="${h(alt.hreflang)}">${h(alt.hreflang)}</a>`;
  const date = dateColumn === "updated" && r.updatedAt !== undefined ? w3cSeconds(r.updatedAt) : (r.lastmod ?? "");
  return `<td>${url}</td><td class="date">${h(date)}</td><td>${h(r.changefreq ?? "")}</td><td class="n">${r.priority ?? ""}</td><td class="ext">${ext}</td></tr>`;
}

export const numberedRow = (n: number, cells: string): string => `<tr><td class="n">${n}</td>${cells}\n`;

/**
 * What the filter compares with: the loc as shown (readable-url.ts), lowercased. The filter's `q`
 * is read the same way (`matchNeedle`), so `straße` and `stra%C3%9Fe` find the same rows.
 */
export const matchText = (loc: string): string => readableUrl(loc).toLowerCase();
export const matchNeedle = (q: string): string => readableUrl(q).toLowerCase();

/**
 * What the cache keeps of a row: its `matchText` as one line, and the row itself as one line. A
 * normalised loc holds no line break (the URL parser removes them); the cells may (a news title),
 * so line breaks there become character references, which HTML shows the same way.
 */
export const matchLine = (loc: string): string => `${matchText(loc).replace(/[\r\n]/g, " ")}\n`;
export const rowLine = (n: number, cells: string): string => numberedRow(n, cells.replaceAll("\r", "&#13;").replaceAll("\n", "&#10;"));

/** The cells of a row line (its number cell dropped), to be numbered again. */
export const cellsOf = (line: string): string => line.slice(line.indexOf("</td>") + 5);
