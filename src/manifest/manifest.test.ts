import { describe, expect, it } from "vitest";
import type { KeyRow } from "../store/port.ts";
import { type PlanLimits, SectionPlanner, type ShardEntry } from "./manifest.ts";

const limits: PlanLimits = { maxUrls: 3, maxBytes: 1_000, overheadBytes: 100 };

function plan(rows: Partial<KeyRow>[], previous: ShardEntry[] = [], now = 5_000, lim = limits): ShardEntry[] {
  const planner = new SectionPlanner("pages", previous, lim, "fp", now);
  for (const row of rows) planner.add({ section: "pages", key: 0, updatedAt: 1, deleted: false, size: 100, ...row });
  return planner.finish();
}

const keys = (...ks: number[]) => ks.map((key) => ({ key }));
const shape = (shards: ShardEntry[]) => shards.map((s) => [s.n, s.firstKey, s.lastKey, s.urlCount]);

describe("SectionPlanner", () => {
  it("cuts contiguous key ranges of at most maxUrls", () => {
    expect(shape(plan(keys(1, 2, 5, 7, 8, 9, 12)))).toEqual([
      [1, 0, 6, 3],
      [2, 7, 11, 3],
      [3, 12, 12, 1],
    ]);
  });

  it("splits by bytes before the URL limit", () => {
    const rows = [
      { key: 1, size: 400 },
      { key: 2, size: 400 },
      { key: 3, size: 400 },
    ];
    const shards = plan(rows);
    expect(shape(shards)).toEqual([
      [1, 0, 2, 2],
      [2, 3, 3, 1],
    ]);
    expect(shards[0]!.byteCount).toBe(900);
  });

  it("keeps previous boundaries and versions when records are appended", () => {
    const first = plan(keys(1, 2, 3, 4, 5));
    const second = plan(keys(1, 2, 3, 4, 5, 6, 7, 8, 9), first, 9_000);
    expect(shape(second)).toEqual([
      [1, 0, 3, 3],
      [2, 4, 6, 3],
      [3, 7, 9, 3],
    ]);
    expect(second[0]!.version).toBe(first[0]!.version);
    expect(second[0]!.lastChange).toBe(first[0]!.lastChange);
    expect(second[1]!.version).not.toBe(first[1]!.version);
  });

  it("gives a split part a new number and never renumbers existing shards", () => {
    const first = plan(keys(1, 2, 3, 4, 5, 6));
    // Records in shard 1 grew: it no longer fits its bytes and must split.
    const grown = [{ key: 1, size: 450 }, { key: 2, size: 450 }, { key: 3, size: 450 }, ...keys(4, 5, 6)];
    const second = plan(grown, first, 9_000);
    expect(shape(second)).toEqual([
      [1, 0, 2, 2],
      [3, 3, 3, 1],
      [2, 4, 6, 3],
    ]);
  });

  it("keeps emptied shards, with no URLs, so their range and number stay reserved", () => {
    const first = plan(keys(1, 2, 3, 4, 5, 6));
    const second = plan(
      [{ key: 1, deleted: true, updatedAt: 7 }, { key: 2, deleted: true, updatedAt: 7 }, { key: 3, deleted: true, updatedAt: 7 }, ...keys(4, 5, 6)],
      first,
    );
    expect(shape(second)).toEqual([
      [1, 0, 3, 0],
      [2, 4, 6, 3],
    ]);
    expect(second[0]!.version).toBe("empty");
    expect(second[0]!.lastChange).toBe(7);
  });

  it("moves lastChange forward whenever the content changes, even without a newer stamp", () => {
    const first = plan([
      { key: 1, updatedAt: 10 },
      { key: 2, updatedAt: 10 },
    ]);
    // Key 2 moved to another section: no stamp in this range is newer, but the content changed.
    const second = plan([{ key: 1, updatedAt: 10 }], first, 50);
    expect(second[0]!.version).not.toBe(first[0]!.version);
    expect(second[0]!.lastChange).toBe(50);
  });

  it("counts deletions as changes (tombstones move lastChange, not the URL count)", () => {
    const shards = plan([
      { key: 1, updatedAt: 10 },
      { key: 2, updatedAt: 99, deleted: true },
    ]);
    expect(shape(shards)).toEqual([[1, 0, 2, 1]]);
    expect(shards[0]!.lastChange).toBe(99);
  });
});
