/**
 * The browser view of a urlset (a shard or a news sitemap) and of the feed: the records as a table,
 * 1,000 rows a page with real links to the previous and next pages, and a URL-substring filter as
 * a plain GET form (`?q=…&page=…`), so it all works without JavaScript. The page streams: its first
 * rows leave as soon as the store yields them, whatever the size of the shard.
 *
 * Cost is bounded: without a filter the records are read only up to one past the page (the page
 * count comes from the manifest's URL count); with one, the whole document is scanned once to count
 * the matches, holding no more than one page of rows.
 */

import { w3cSeconds } from "../../core/datetime-format.ts";
import { type Source, eachItem } from "../../core/source.ts";
import type { UrlRecord } from "../../core/types.ts";
import { INDEX_PATH } from "../../http/paths.ts";
import { PAGE_END, fmt, h, htmlStream, pageStart } from "./page.ts";

const VIEW_PAGE_ROWS = 1_000;

/** What the visitor asked for in the query string. */
export interface ViewQuery {
  /** 1-based page. */
  page: number;
  /** URL substring to keep (case-insensitive); "" keeps all. */
  q: string;
}

/** A record as the view shows it; `updatedAt` for the feed's "Changed" column. */
type ViewRecord = UrlRecord & { updatedAt?: number };

export interface UrlsetView {
  title: string;
  /** The page's own path: the form's action and the base of the page links. */
  path: string;
  /** One line of facts (already HTML: built from numbers and escaped values by the caller). */
  facts: string;
  /** Other forms of the same document (text sitemap, gzip file), linked for people who want them. */
  forms: readonly { label: string; href: string }[];
  /** Entries in the document as its manifest counts them; null when the caller does not know. */
  total: number | null;
  records: Source<ViewRecord>;
  /** The feed shows when each entry changed rather than its lastmod. */
  dateColumn: "lastmod" | "updated";
}

function pageHref(path: string, page: number, q: string): string {
  const params = new URLSearchParams();
  if (q) params.set("q", q);
  if (page > 1) params.set("page", String(page));
  const search = params.toString();
  return h(search ? `${path}?${search}` : path);
}

function row(r: ViewRecord, n: number, dateColumn: UrlsetView["dateColumn"]): string {
  const loc = h(r.loc);
  let url = `<a href="${loc}">${loc}</a>`;
  const news = r.ext?.news;
  if (news) url += `<div class="news">${h(news.title)} (${h(news.publication.name)}, ${h(news.publication_date)})</div>`;
  let ext = "";
  if (r.ext?.images?.length) ext += `<span class="tag images">${r.ext.images.length} images</span>`;
  if (r.ext?.videos?.length) ext += `<span class="tag videos">${r.ext.videos.length} videos</span>`;
  for (const alt of r.ext?.alternates ?? []) ext += `<a class="tag hreflang" href="${h(alt.href)}" hreflang="${h(alt.hreflang)}">${h(alt.hreflang)}</a>`;
  const date = dateColumn === "updated" && r.updatedAt !== undefined ? w3cSeconds(r.updatedAt) : (r.lastmod ?? "");
  return `<tr><td class="n">${n}</td><td>${url}</td><td class="date">${h(date)}</td><td>${h(r.changefreq ?? "")}</td><td class="n">${r.priority ?? ""}</td><td class="ext">${ext}</td></tr>\n`;
}

/**
 * Page links above the table, from the manifest's count: known before any record is read. The
 * links below the table are exact (they follow the records actually read); with a filter only
 * those exist, as the number of matches is known only once the scan is done.
 */
function topNav(view: UrlsetView, { page, q }: ViewQuery): string {
  if (q || view.total === null || view.total <= VIEW_PAGE_ROWS) return "";
  const pages = Math.ceil(view.total / VIEW_PAGE_ROWS);
  const prev = page > 1 ? `<a rel="prev" href="${pageHref(view.path, Math.min(page - 1, pages), q)}">← Previous page</a>` : "";
  const next = page < pages ? `<a rel="next" href="${pageHref(view.path, page + 1, q)}">Next page →</a>` : "";
  return `<nav class="pages" aria-label="Pages (top)">${prev}<span>Page ${fmt(page)} of ${fmt(pages)}, ${fmt(VIEW_PAGE_ROWS)} rows a page.</span>${next}</nav>\n`;
}

async function* pieces(view: UrlsetView, query: ViewQuery): AsyncGenerator<string> {
  const { page, q } = query;
  const needle = q.toLowerCase();
  yield pageStart(view.title);
  const forms = view.forms.map((f) => `<a href="${h(f.href)}">${h(f.label)}</a>`).join(" · ");
  yield `<header>
<h1>${h(view.title)}</h1>
<p id="summary">${view.facts}</p>
<p><a href="${INDEX_PATH}">Back to the index</a>${forms ? ` · ${forms}` : ""}</p>
</header>
<main>
<form method="get" action="${h(view.path)}" role="search">
<label for="q">URL contains</label>
<input type="search" id="q" name="q" value="${h(q)}" maxlength="200">
<button type="submit">Filter</button>${q ? ` <a href="${pageHref(view.path, 1, "")}">Show all</a>` : ""}
</form>
${topNav(view, query)}<table id="urls">
<thead><tr><th scope="col" class="n">#</th><th scope="col">URL</th><th scope="col">${view.dateColumn === "updated" ? "Changed" : "Last modified"}</th><th scope="col">Change frequency</th><th scope="col" class="n">Priority</th><th scope="col">Extensions</th></tr></thead>
<tbody>
`;
  const skip = (page - 1) * VIEW_PAGE_ROWS;
  let matched = 0;
  let shown = 0;
  let more = false;
  for await (const r of eachItem(view.records)) {
    if (needle && !r.loc.toLowerCase().includes(needle)) continue;
    matched++;
    if (matched <= skip) continue;
    if (shown < VIEW_PAGE_ROWS) {
      shown++;
      yield row(r, matched, view.dateColumn);
      continue;
    }
    more = true;
    // Unfiltered, one record past the page is enough to know a next page exists.
    if (!needle) break;
  }
  yield "</tbody>\n</table>\n";
  const total = needle ? matched : view.total;
  const pages = total === null ? null : Math.max(1, Math.ceil(total / VIEW_PAGE_ROWS));
  if (shown === 0) {
    yield `<p id="empty">${needle ? `No URL contains “${h(q)}”${page > 1 ? " on this page" : ""}.` : "No URL on this page."}</p>\n`;
  }
  const status = needle ? `${fmt(matched)} URLs contain “${h(q)}”. ` : "";
  const range = shown > 0 ? `Rows ${fmt(skip + 1)}–${fmt(skip + shown)}` : "No rows";
  yield `<nav class="pages" aria-label="Pages">
${page > 1 ? `<a rel="prev" href="${pageHref(view.path, Math.min(page - 1, pages ?? page - 1), q)}">← Previous page</a>` : ""}
<span id="position">${status}${range}, page ${fmt(page)}${pages === null ? "" : ` of ${fmt(pages)}`}.</span>
${more ? `<a rel="next" href="${pageHref(view.path, page + 1, q)}">Next page →</a>` : ""}
</nav>
</main>
`;
  yield PAGE_END;
}

export function renderUrlsetView(view: UrlsetView, query: ViewQuery): ReadableStream<Uint8Array> {
  return htmlStream(pieces(view, query));
}
