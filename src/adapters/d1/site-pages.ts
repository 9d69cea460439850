/** Keyset pages of a site's `urls` rows in (section, id) order: the key-row walk and the scan share them. */
import type { ScanPosition } from "../../store/port.ts";
import type { D1Observer } from "./rows.ts";

/**
 * Pages of a site's rows in (section, id) order after (section, after), up to `until` (inclusive),
 * `limit` rows at most (no query asks for more than are left).
 * Each page is two index ranges, so rows read = rows returned: the rest of the current section by
 * id, then the following sections. (A row-value `(section, id) > (?, ?)` is planned as
 * `section >= ?` and re-reads the section's earlier rows on every page: quadratic in a section.)
 */
export async function* sitePages<T extends { section: string; id: number }>(
  db: D1Database,
  observe: D1Observer | undefined,
  columns: string,
  origin: string,
  from: { section: string; after: number },
  until: ScanPosition | null,
  pageRows: number,
  limit = Number.POSITIVE_INFINITY,
): AsyncGenerator<T[]> {
  let { section, after } = from;
  let left = limit;
  const within = db.prepare(`SELECT ${columns} FROM urls WHERE origin = ?1 AND section = ?2 AND id > ?3 AND id <= ?4 ORDER BY id LIMIT ?5`);
  const later = db.prepare(`SELECT ${columns} FROM urls WHERE origin = ?1 AND section > ?2 ORDER BY section, id LIMIT ?3`);
  const beyond = (row: T): boolean => until !== null && (row.section > until.section || (row.section === until.section && row.id > until.key));
  for (;;) {
    if (left <= 0) return;
    const size = Math.min(pageRows, left);
    const last = until && until.section === section ? until.key : Number.MAX_SAFE_INTEGER;
    const first = await within.bind(origin, section, after, last, size).all<T>();
    observe?.(first.meta);
    let page = first.results;
    if (page.length < size) {
      if (until && until.section <= section) {
        if (page.length > 0) yield page;
        return;
      }
      const want = size - page.length;
      const next = await later.bind(origin, section, want).all<T>();
      observe?.(next.meta);
      const kept = next.results.filter((row) => !beyond(row));
      page = [...page, ...kept];
      if (kept.length < want) {
        if (page.length > 0) yield page;
        return;
      }
    }
    left -= page.length;
    yield page;
    const tail = page[page.length - 1]!;
    section = tail.section;
    after = tail.id;
  }
}
