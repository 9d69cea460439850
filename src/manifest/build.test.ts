import { describe, expect, it } from "vitest";
import type { KeyRow, RangeScan, ScanPosition, ScannedRecord } from "../store/port.ts";
import { type BuildOptions, buildManifest, buildManifestWithin, newPlan, planStep } from "./build.ts";

const options: BuildOptions = { maxUrls: 7, maxBytes: 4_000, renderFingerprint: "fp", indexFingerprint: "ix", now: 1_000, firstShardNumber: 1 };

/** Rows of three sections, tombstones and large rows among them, in (section, key) order. */
function siteRows(): KeyRow[] {
  const rows: KeyRow[] = [];
  for (const [section, count] of [
    ["blog", 17],
    ["pages", 40],
    ["products", 9],
  ] as const) {
    for (let i = 0; i < count; i++) {
      const key = 3 * i + (section === "pages" ? 2 : 1);
      rows.push({
        section,
        key,
        updatedAt: 100 + ((i * 37) % 11),
        deleted: i % 9 === 4,
        size: i % 13 === 0 ? 900 : 150 + i,
        extKinds: i % 5 === 0 ? 2 : 0,
      });
    }
  }
  return rows;
}

function source(rows: readonly KeyRow[]): { reader: { keyRows(origin: string, limit?: number): AsyncIterable<KeyRow> }; scan: RangeScan; read(): number } {
  let read = 0;
  const scan: RangeScan = {
    async *scan(_origin: string, from: ScanPosition): AsyncIterable<ScannedRecord> {
      for (const row of rows) {
        if (row.section < from.section || (row.section === from.section && row.key < from.key)) continue;
        read++;
        yield { ...row, loc: `https://e.example/${row.section}/${row.key}`, lastmod: null } as ScannedRecord;
      }
    },
  };
  const reader = {
    async *keyRows(_origin: string, limit = Number.POSITIVE_INFINITY) {
      for (const row of rows.slice(0, limit)) {
        read++;
        yield row;
      }
    },
  };
  return { reader, scan, read: () => read };
}

describe("a manifest planned in steps", () => {
  it("is the one walk's plan, whatever the step size, each step reading no more than its rows", async () => {
    const rows = siteRows();
    const whole = await buildManifest(source(rows).reader, "https://e.example", null, options);
    expect(whole.shards.length).toBeGreaterThan(8);
    for (const step of [1, 2, 5, 6, 7, 13, 1_000]) {
      const { scan, read } = source(rows);
      // Kept between steps as JSON, as the move keeps it beside its layout.
      let saved = JSON.stringify(newPlan(1_000));
      let manifest = null;
      let steps = 0;
      while (!manifest) {
        const plan = JSON.parse(saved);
        const before = read();
        const result = await planStep(scan, "https://e.example", plan, options, step);
        expect(read() - before).toBeLessThanOrEqual(step);
        expect(result.rows).toBe(read() - before);
        saved = JSON.stringify(plan);
        manifest = result.manifest;
        expect(++steps).toBeLessThan(rows.length + 3);
      }
      expect(manifest, `steps of ${step}`).toEqual(whole);
    }
  });

  it("stops at a deadline, between two rows, and goes on from there", async () => {
    const rows = siteRows();
    const whole = await buildManifest(source(rows).reader, "https://e.example", null, options);
    const { scan } = source(rows);
    const plan = newPlan(1_000);
    const first = await planStep(scan, "https://e.example", plan, options, 1_000, Date.now() - 1);
    expect(first).toEqual({ manifest: null, rows: 1 });
    const rest = await planStep(scan, "https://e.example", plan, options, 1_000);
    expect(rest.manifest).toEqual(whole);
    expect(plan.rows).toBe(rows.length);
  });
});

describe("a manifest built within a number of rows", () => {
  it("is built when the walk ends within them, and never asks for more", async () => {
    const rows = siteRows();
    const whole = await buildManifest(source(rows).reader, "https://e.example", null, options);
    const fits = source(rows);
    expect(await buildManifestWithin(fits.reader, "https://e.example", null, options, rows.length + 1)).toEqual({ manifest: whole, rows: rows.length });
    for (const bound of [0, 1, 10, rows.length]) {
      const big = source(rows);
      expect(await buildManifestWithin(big.reader, "https://e.example", null, options, bound)).toEqual({ manifest: null, rows: bound });
      expect(big.read()).toBe(bound);
    }
  });
});
