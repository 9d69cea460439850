/**
 * The dashboard's paging, done on the server (no script: the CSP forbids it). The query names what
 * is opened: `?section=<name>&page=<n>` one section's shards (SHARDS_PER_PAGE a page), and
 * `?<list>=<n>` a page of a long table (`gsc`, `audit`, `failed`, `jobs`, `mirrors`;
 * ROWS_PER_PAGE a page). Everything else on the page stays a summary, so its size does not grow
 * with the site (docs/dashboard.md "Paging"). Links are relative (`?…#…`): they work under either
 * dashboard path and keep the other opened lists.
 */
import { type Html, html } from "./html.ts";

export const SHARDS_PER_PAGE = 50;
const ROWS_PER_PAGE = 25;
/** A table of at most this many rows is open by default; a longer one is collapsed to its summary. */
const OPEN_ROWS = 10;

/** The lists paged by `?<list>=<n>`. */
const LISTS = ["gsc", "audit", "failed", "jobs", "mirrors"] as const;
type ListName = (typeof LISTS)[number];

/** What the query asks to see: at most one section's page of shards, and a page of any list. */
export interface DashboardView {
  section: string | null;
  page: number;
  lists: Partial<Record<ListName, number>>;
}

export const DEFAULT_VIEW: DashboardView = { section: null, page: 1, lists: {} };

/** A page number from the query: a whole number from 1, else none (unknown values are ignored, never an error). */
function pageNumber(value: string | null): number | null {
  if (value === null || !/^[1-9]\d{0,6}$/.test(value)) return null;
  return Number(value);
}

export function viewOf(query: URLSearchParams): DashboardView {
  const section = query.get("section");
  const lists: DashboardView["lists"] = {};
  for (const list of LISTS) {
    const n = pageNumber(query.get(list));
    if (n !== null) lists[list] = n;
  }
  return { section: section && section.length <= 200 ? section : null, page: pageNumber(query.get("page")) ?? 1, lists };
}

/** The query of a link that changes `change` and keeps the rest of the view (never the action's `done`/`status`). */
function href(view: DashboardView, change: Partial<DashboardView>, anchor: string): string {
  const next = { ...view, ...change, lists: { ...view.lists, ...change.lists } };
  const query = new URLSearchParams();
  if (next.section !== null) {
    query.set("section", next.section);
    if (next.page > 1) query.set("page", String(next.page));
  }
  for (const list of LISTS) if (next.lists[list] !== undefined) query.set(list, String(next.lists[list]));
  return `?${query.toString()}#${anchor}`;
}

/** The page numbers shown: the first, the last and two either side of the current one, gaps as null. */
function pageNumbers(current: number, pages: number): (number | null)[] {
  const shown = [...new Set([1, current - 2, current - 1, current, current + 1, current + 2, pages])]
    .filter((n) => n >= 1 && n <= pages)
    .sort((a, b) => a - b);
  const out: (number | null)[] = [];
  for (const [i, n] of shown.entries()) {
    if (i > 0 && n - shown[i - 1]! > 1) out.push(null);
    out.push(n);
  }
  return out;
}

/** Links to each page of a list: `link(n)` is page n's href; `current` null: none of its pages is shown yet (every number a link). */
export function pager(current: number | null, pages: number, link: (n: number) => string, label: string): Html {
  if (pages <= 1 && current !== null) return html``;
  const item = (n: number | null) =>
    n === null ? html`<span class="gap">…</span>` : n === current ? html`<span aria-current="page">${n}</span>` : html`<a href="${link(n)}">${n}</a>`;
  const at = current ?? 1;
  return html`<nav class="pager" aria-label="${label}">${current !== null && current > 1 ? html`<a href="${link(current - 1)}" rel="prev">‹ previous</a>` : ""}${pageNumbers(at, pages).map(item)}${current !== null && current < pages ? html`<a href="${link(current + 1)}" rel="next">next ›</a>` : ""}</nav>`;
}

const pagesOf = (rows: number, perPage: number): number => Math.max(1, Math.ceil(rows / perPage));
const clampPage = (page: number, pages: number): number => Math.min(Math.max(1, page), pages);

/** A section's shards: the page shown (clamped) and the link to any other page of it. */
export function sectionPaging(view: DashboardView, section: string, shards: number) {
  const pages = pagesOf(shards, SHARDS_PER_PAGE);
  const opened = view.section === section;
  const page = opened ? clampPage(view.page, pages) : 1;
  return {
    opened,
    page,
    pages,
    from: (page - 1) * SHARDS_PER_PAGE,
    link: (n: number) => href(view, { section, page: n }, sectionAnchor(section)),
  };
}

/** The element id of a section's card (a section name is `[a-z0-9-]`, src/core; anything else is replaced). */
export const sectionAnchor = (section: string): string => `section-${section.replace(/[^A-Za-z0-9_-]/g, "_")}`;

export interface PagedTable {
  list: ListName;
  /** The `<summary>` text: what the table holds. */
  summary: Html | string;
  head: Html;
  rows: readonly Html[];
  /** Open by default even when longer than OPEN_ROWS (it is opened anyway when the query names a page of it). */
  open?: boolean;
  /** The table's class. */
  className?: string;
}

/** A long table collapsed to its summary (`<details>`) and paged; a short one drawn open as it is. */
export function pagedTable(view: DashboardView, t: PagedTable): Html {
  const pages = pagesOf(t.rows.length, ROWS_PER_PAGE);
  const requested = view.lists[t.list];
  const page = clampPage(requested ?? 1, pages);
  const shown = t.rows.slice((page - 1) * ROWS_PER_PAGE, page * ROWS_PER_PAGE);
  const open = requested !== undefined || t.open === true || t.rows.length <= OPEN_ROWS;
  const id = `list-${t.list}`;
  return html`<details class="list" id="${id}"${open ? html` open` : ""}><summary>${t.summary}${pages > 1 ? ` (page ${page} of ${pages})` : ""}</summary>
<div class="scroll"><table${t.className ? html` class="${t.className}"` : ""}><thead>${t.head}</thead><tbody>
${shown}
</tbody></table></div>
${pager(page, pages, (n) => href(view, { lists: { [t.list]: n } }, id), `${t.list} pages`)}</details>`;
}
