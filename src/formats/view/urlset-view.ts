/**
 * The browser view of a urlset (a shard or a news sitemap) and of the feed: the records as a table,
 * 1,000 rows a page with real links to the previous and next pages, and a URL-substring filter as
 * a plain GET form (`?q=…&page=…`), so it all works without JavaScript. The page streams: its head
 * leaves at once and its rows as they are produced (view-rows.ts says from where, and what each
 * way costs).
 */

import { VIEW_PAGE_ROWS } from "../../core/limits.ts";
import { plural } from "../../core/plural.ts";
import { INDEX_PATH } from "../../documents/paths.ts";
import { PAGE_END, fmt, h, htmlStream, pageStart } from "./page.ts";
import type { DateColumn } from "./view-row.ts";
import type { Rows, ViewQuery } from "./view-rows.ts";

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
  /** The table's rows for a query (view-rows.ts). */
  rows: (query: ViewQuery) => Rows;
  /** The feed shows when each entry changed rather than its lastmod. */
  dateColumn: DateColumn;
}

function pageHref(path: string, page: number, q: string): string {
  const params = new URLSearchParams();
  if (q) params.set("q", q);
  if (page > 1) params.set("page", String(page));
  const search = params.toString();
  return h(search ? `${path}?${search}` : path);
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
  const { skip, shown, more, matched } = yield* view.rows(query);
  yield "</tbody>\n</table>\n";
  const total = needle ? matched : view.total;
  const pages = total === null ? null : Math.max(1, Math.ceil(total / VIEW_PAGE_ROWS));
  if (shown === 0) {
    yield `<p id="empty">${needle ? `No URL contains “${h(q)}”${page > 1 ? " on this page" : ""}.` : "No URL on this page."}</p>\n`;
  }
  const status = needle ? `${plural(matched, "URL")} ${matched === 1 ? "contains" : "contain"} “${h(q)}”. ` : "";
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
