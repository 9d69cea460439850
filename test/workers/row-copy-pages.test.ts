/**
 * The move's copy page (src/adapters/d1/row-copy.ts `page`) is bounded by the rows' text, not only
 * by their count: 5,000 rows of ~1 MB `ext` would be gigabytes in a 128 MB isolate. Rows of large
 * and small records, over two sections, paged with the copy's 5,000-row limit: each page stays
 * within its text budget (or is one row), and the pages cover every row once, in (section, key) order.
 * The catch-up (src/partitions/catch-up.ts) reads the rows of a feed's page whole: the same bound.
 */

import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { d1RecordStore } from "../../src/adapters/d1/record-store.ts";
import { D1RowCopy } from "../../src/adapters/d1/row-copy.ts";
import { COPY_PAGE_CHARS } from "../../src/core/limits.ts";
import { catchUp } from "../../src/partitions/catch-up.ts";
import type { CopiedRow, RecordStore } from "../../src/store/port.ts";
import { freshOrigin } from "./support.ts";

const weight = (r: CopiedRow): number => r.loc.length + (r.ext?.length ?? 0) + 200;

/** 24 rows over two sections, 16 of them with ~1 M chars of `ext`. */
function records(origin: string): CopiedRow[] {
  // ~1 M chars of ext (each `\\"` escaped again in JSON): 16 of them, a page cut after ~8 M.
  const big = JSON.stringify({ images: [{ loc: `${origin}/i.jpg`, caption: '\\"x'.repeat(200_000) }] });
  return ["a", "b"].flatMap((section) =>
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
}

beforeAll(async () => {
  await applyD1Migrations(env.PART_B, env.TEST_MIGRATIONS);
});

describe("the move's copy page, bounded by bytes", () => {
  it("cuts a page of large records by their text and still covers every row once, in order", async () => {
    const origin = freshOrigin("copy-pages");
    const copy = new D1RowCopy(env.DB);
    const rows = records(origin);
    expect(await copy.put(rows, "missing")).toBe(rows.length);
    const seen: CopiedRow[] = [];
    let after = { section: "", key: -1 };
    let pages = 0;
    for (; ; pages++) {
      expect(pages).toBeLessThan(rows.length);
      const page = await copy.page(origin, after, 5_000);
      if (page.length === 0) break;
      const text = page.reduce((n, r) => n + weight(r), 0);
      if (page.length > 1) expect(text - weight(page.at(-1)!)).toBeLessThan(COPY_PAGE_CHARS);
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

  it("the catch-up reads a feed's rows whole in pages of that bound, and moves every row", async () => {
    const origin = freshOrigin("catch-up-pages");
    const parts = [d1RecordStore(env.DB), d1RecordStore(env.PART_B)];
    const from = await new D1RowCopy(env.DB).head();
    const rows = records(origin);
    await new D1RowCopy(env.DB).put(rows, "missing");
    // The rows each read of the old home returned, as the isolate holds them.
    const reads: number[] = [];
    const old = parts[0]!;
    const copy = old.copy!;
    const watched: RecordStore = {
      ...old,
      copy: {
        ...copy,
        page: (o, a, l) => copy.page(o, a, l),
        rows: async (locs, movedIn) => {
          const read = await copy.rows(locs, movedIn);
          reads.push(read.reduce((n, r) => n + weight(r), 0) - weight(read.at(-1)!));
          return read;
        },
        markMoved: (k, m) => copy.markMoved(k, m),
        movedCounts: (o, r, m) => copy.movedCounts(o, r, m),
        put: (r, m) => copy.put(r, m),
        deleteOlder: (e, n) => copy.deleteOlder(e, n),
        head: () => copy.head(),
        changesAfter: (o, a, l) => copy.changesAfter(o, a, l),
      },
    };
    const cursors = [from];
    const done = await catchUp([watched, parts[1]!], origin, cursors, {
      goesTo: (loc, p) => (p === 0 && loc.startsWith(origin) ? 1 : null),
      deletionsOnly: false,
      target: 2,
      maxRows: 5_000,
      inTime: () => true,
      save: async () => {},
      now: Date.now(),
    });
    expect(done.done).toBe(true);
    expect(done.written).toBe(rows.length);
    expect(reads.length).toBeGreaterThanOrEqual(2);
    for (const chars of reads) expect(chars).toBeLessThan(COPY_PAGE_CHARS);
  });
});
