/**
 * Issue 53, tester break53c. Attacks claim 4 (held): the D1 manifest save writes only the rows that
 * differ, yet load returns exactly what was saved — in the saved order, not re-sorted by the test —
 * for generated sequences of saves (shards added, removed, renumbered, moved between sections,
 * partition-sized keys, page and block starts of a full shard), for 2,600 shards of a full shard's
 * starts each, and for a reader racing a save (it sees the old or the new manifest, never a mix).
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { D1ManifestStore } from "../../src/adapters/d1/manifest-store.ts";
import type { ShardEntry, ShardManifest } from "../../src/manifest/manifest.ts";
import { freshOrigin } from "./support.ts";

/** A partition's keys start at partition × 2⁴⁰ (src/partitions/keys.ts): 13–16 digits. */
const PARTITION = 2 ** 40;

/** Shards of `sections` in (section, firstKey) order as the planner keeps them, numbered from `n0`, `starts` page/block starts each. */
function shardsOf(sections: readonly string[], perSection: number, n0: number, tag: string, starts: number): ShardEntry[] {
  return [...sections].sort().flatMap((section, si) =>
    Array.from({ length: perSection }, (_, i) => {
      const firstKey = (si + 7) * PARTITION + i * 100_000;
      const keys = Array.from({ length: starts }, (_, k) => firstKey + (k + 1) * 1_000);
      return {
        section,
        n: n0 + i,
        firstKey,
        lastKey: firstKey + 99_999,
        urlCount: 50_000,
        byteCount: 9_000_000 + i,
        lastChange: 1_767_225_600_000 + i,
        version: `${tag}${i % 3}`,
        extKinds: i % 4,
        snapshot: i % 5 === 0 ? null : `snap-${tag}-${section}-${i}`,
        pageStarts: keys,
        blockStarts: keys.slice(0, Math.max(0, starts - 1)),
      };
    }),
  );
}

const normal = (s: ShardEntry): ShardEntry => ({ ...s, extKinds: s.extKinds ?? 0, snapshot: s.snapshot ?? null });

describe("break53c: D1 manifest save sequences", () => {
  it("generated save sequences: load gives back exactly the shards saved, in order", async () => {
    const step = fc.record({
      sections: fc.subarray(["pages", "products", "blog", "a-b"], { minLength: 0 }),
      perSection: fc.integer({ min: 0, max: 6 }),
      n0: fc.integer({ min: 1, max: 3 }),
      tag: fc.constantFrom("v", "w", "1", ""),
      starts: fc.integer({ min: 0, max: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
        const origin = freshOrigin("b53c-seq");
        const store = new D1ManifestStore(env.DB);
        for (const [k, s] of steps.entries()) {
          const shards = shardsOf(s.sections, s.perSection, s.n0, s.tag, s.starts);
          await store.save({ origin, version: `m${k}`, builtAt: k, snapshot: null, shards });
          const loaded = await store.load(origin);
          expect(loaded!.version).toBe(`m${k}`);
          expect(loaded!.shards).toEqual(shards.map(normal));
        }
      }),
      { numRuns: 30, seed: 53_003 },
    );
  });

  it("2,600 shards with a full shard's 50 page starts each, then one changed and a section moved: read back exactly", async () => {
    const origin = freshOrigin("b53c-big");
    const store = new D1ManifestStore(env.DB);
    const first = shardsOf(["pages", "products"], 1_300, 1, "v", 50);
    await store.save({ origin, version: "a", builtAt: 1, snapshot: null, shards: first });
    expect((await store.load(origin))!.shards).toEqual(first.map(normal));
    // One shard changed, and "products" renamed to "catalog" (its shards move section, same numbers).
    const second = first
      .map((s, i) => (i === 700 ? { ...s, version: "changed", pageStarts: [] } : s.section === "products" ? { ...s, section: "catalog" } : s))
      .sort((a, b) => (a.section < b.section ? -1 : a.section > b.section ? 1 : a.firstKey - b.firstKey));
    await store.save({ origin, version: "b", builtAt: 2, snapshot: null, shards: second });
    expect((await store.load(origin))!.shards).toEqual(second.map(normal));
  });

  it("a reader racing saves sees one whole manifest: its version's shards, never a mix", async () => {
    const origin = freshOrigin("b53c-race");
    const store = new D1ManifestStore(env.DB);
    const of = (tag: string): ShardManifest => ({ origin, version: tag, builtAt: 1, snapshot: null, shards: shardsOf(["pages"], 40, 1, tag, 2) });
    await store.save(of("x"));
    for (const tag of ["y", "z", "x", "y"]) {
      const [, loaded] = await Promise.all([store.save(of(tag)), store.load(origin)]);
      const version = loaded!.version;
      expect(loaded!.shards).toEqual(of(version).shards.map(normal));
    }
  });
});
