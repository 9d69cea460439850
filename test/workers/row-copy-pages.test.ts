/**
 * The move's copy page (src/adapters/d1/row-copy.ts `page`) is bounded by the rows' text, not only
 * by their count: 5,000 rows of ~1 MB `ext` would be gigabytes in a 128 MB isolate. Rows of large
 * and small records, over two sections, paged with the copy's 5,000-row limit: each page stays
 * within its text budget (or is one row), and the pages cover every row once, in (section, key) order.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { D1RowCopy } from "../../src/adapters/d1/row-copy.ts";
import type { CopiedRow } from "../../src/store/port.ts";
import { freshOrigin } from "./support.ts";

/** PAGE_CHARS of row-copy.ts, with its ~200 a row. */
const BUDGET = 8_000_000;
const weight = (r: CopiedRow): number => r.loc.length + (r.ext?.length ?? 0) + 200;

describe("the move's copy page, bounded by bytes", () => {
  it("cuts a page of large records by their text and still covers every row once, in order", async () => {
    const origin = freshOrigin("copy-pages");
    const copy = new D1RowCopy(env.DB);
    // ~1 M chars of ext (each `\\"` escaped again in JSON): 16 of them, a page cut after ~8 M.
    const big = JSON.stringify({ images: [{ loc: `${origin}/i.jpg`, caption: '\\"x'.repeat(200_000) }] });
    const rows = ["a", "b"].flatMap((section) =>
      Array.from({ length: 12 }, (_, i) => ({
        key: 0,
        origin,
        section,
        loc: `${origin}/${section}/${i}`,
        lastmod: null,
        changefreq: null,
        priority: null,
        ext: i % 3 === 2 ? null : big,
        size: 100,
        updatedAt: 1,
        deleted: false,
        source: null,
        seq: 1,
      })),
    );
    expect(await copy.put(rows, "missing")).toBe(rows.length);
    const seen: CopiedRow[] = [];
    let after = { section: "", key: -1 };
    let pages = 0;
    for (; ; pages++) {
      expect(pages).toBeLessThan(rows.length);
      const page = await copy.page(origin, after, 5_000);
      if (page.length === 0) break;
      const text = page.reduce((n, r) => n + weight(r), 0);
      if (page.length > 1) expect(text - weight(page.at(-1)!)).toBeLessThan(BUDGET);
      seen.push(...page);
      after = { section: page.at(-1)!.section, key: page.at(-1)!.key };
    }
    // 16 rows of ~1 M chars: two pages at least (each cut after ~8 M), where the row count alone allowed one.
    expect(pages).toBeGreaterThanOrEqual(2);
    // Once each (large rows are written after the chunked ones, so keys are not the input's order)…
    expect(seen.map((r) => r.loc).sort()).toEqual(rows.map((r) => r.loc).sort());
    // …in (section, key) order.
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      expect(a.section < b.section || (a.section === b.section && a.key < b.key)).toBe(true);
    }
  });
});
