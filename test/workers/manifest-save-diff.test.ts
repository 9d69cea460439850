/**
 * The D1 manifest store writes only what differs (issue 53, "what a site costs"): generated
 * sequences of manifests (shards added, removed, changed in any column, unchanged) saved in turn;
 * after each save the store reads back exactly the manifest saved (the reference), and D1 counts
 * rows written for the shard rows that differ only (with their primary key's index), plus the
 * manifest's own row, never the whole list again.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { D1ManifestStore } from "../../src/adapters/d1/manifest-store.ts";
import type { ShardEntry, ShardManifest } from "../../src/manifest/manifest.ts";
import { freshOrigin } from "./support.ts";

/** env.DB, keeping the D1 results of the last batch (rows written per statement). */
function countingDb(): { db: D1Database; written: () => number } {
  let last: D1Result[] = [];
  const db = {
    prepare: (query: string) => env.DB.prepare(query),
    batch: async (statements: D1PreparedStatement[]) => {
      last = await env.DB.batch(statements);
      return last;
    },
  } as unknown as D1Database;
  return { db, written: () => last.reduce((n, r) => n + r.meta.rows_written, 0) };
}

const SECTIONS = ["pages", "products"] as const;
const hex = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 1, maxLength: 8 });

/** A shard as the planner leaves it: every column, some optional ones absent. */
const shardArb = (section: string, n: number): fc.Arbitrary<ShardEntry> =>
  fc
    .record({
      firstKey: fc.nat(1_000_000),
      span: fc.nat(50_000),
      urlCount: fc.nat(50_000),
      byteCount: fc.nat(52_428_800),
      lastChange: fc.nat(2 ** 40),
      version: hex,
      extKinds: fc.nat(63),
      snapshot: fc.option(hex, { nil: null }),
      pageStarts: fc.option(fc.array(fc.nat(1_000_000), { maxLength: 4 }), { nil: undefined }),
      blockStarts: fc.option(fc.array(fc.nat(1_000_000), { maxLength: 4 }), { nil: undefined }),
    })
    .map(({ span, pageStarts, blockStarts, ...s }) => ({
      section,
      n,
      ...s,
      lastKey: s.firstKey + span,
      ...(pageStarts === undefined ? {} : { pageStarts }),
      ...(blockStarts === undefined ? {} : { blockStarts }),
    }));

/** A manifest's shards: for each (section, n) slot, absent, or one of two generated shards. */
const shardsArb = fc
  .array(fc.tuple(fc.constantFrom(...SECTIONS), fc.integer({ min: 1, max: 6 })), { maxLength: 10 })
  .chain((slots) => {
    const unique = [...new Map(slots.map(([s, n]) => [`${s} ${n}`, [s, n] as const])).values()];
    return fc.tuple(...unique.map(([s, n]) => shardArb(s, n)));
  })
  .map((shards) => [...shards].sort((a, b) => a.section.localeCompare(b.section) || a.firstKey - b.firstKey || a.n - b.n));

const key = (s: ShardEntry): string => `${s.section} ${s.n}`;

describe("D1 manifest save", () => {
  it("reads back what was saved, and writes only the shard rows that differ", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(shardsArb, fc.boolean()), { minLength: 1, maxLength: 5 }), async (steps) => {
        const origin = freshOrigin("manifest-diff");
        const counting = countingDb();
        const store = new D1ManifestStore(counting.db);
        let previous: ShardEntry[] = [];
        for (const [generated, repeat] of steps) {
          // A repeated step saves the previous shards again with only one of them changed, as a splice does.
          const shards = repeat && previous.length > 0 ? previous.map((s, i) => (i === 0 ? { ...s, version: `${s.version}x` } : s)) : generated;
          const manifest: ShardManifest = { origin, version: `v${Math.random()}`, builtAt: 1, snapshot: null, shards };
          await store.save(manifest);
          const written = counting.written();
          const loaded = await store.load(origin);
          const byKey = (list: readonly ShardEntry[]) => [...list].sort((a, b) => key(a).localeCompare(key(b)));
          expect(byKey(loaded!.shards)).toEqual(byKey(shards.map((s) => ({ ...s, extKinds: s.extKinds ?? 0, snapshot: s.snapshot ?? null }))));
          const before = new Map(previous.map((s) => [key(s), JSON.stringify(s)]));
          const now = new Set(shards.map(key));
          const differing = shards.filter((s) => before.get(key(s)) !== JSON.stringify(s)).length + previous.filter((s) => !now.has(key(s))).length;
          // The manifest's own row (1 or 2 rows written: D1 counts its primary key's index too),
          // then 1 or 2 per differing shard row (an update; an insert or delete with its index entry).
          expect(written).toBeGreaterThanOrEqual(1 + differing);
          expect(written).toBeLessThanOrEqual(2 + 2 * differing);
          previous = shards;
        }
      }),
      { numRuns: 40, seed: 5301 },
    );
  });
});
