/**
 * Issue 53 ("blocks"): a change re-renders only its block and splices the stored file. What a
 * splice stores must be what rendering the shard whole gives (the live render's bytes, so one ETag
 * names one body) and what a pass over every row plans (same version, blocks, counts): checked for
 * one change, and for generated programs of updates, deletions, revivals and appends against a model.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";
import { gunzip, locsOf } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

const storedGzip = (site: Site, shard: ShardEntry): Promise<Uint8Array> => snapshotGzip(site, shard.snapshot!);

/** The shard rendered whole, live, gzipped as a response is. */
async function liveGzip(site: Site, shard: ShardEntry): Promise<Uint8Array> {
  return readAll(gzipDocument(renderShard(services(site.env), site.origin, shard)));
}

/** What a plan keeps of an entry, for comparing a splice's with a pass's. */
const planned = (s: ShardEntry) => ({
  n: s.n,
  firstKey: s.firstKey,
  urlCount: s.urlCount,
  byteCount: s.byteCount,
  version: s.version,
  extKinds: s.extKinds,
  blockStarts: s.blockStarts,
});

/** A pass's entries against a run's: the same plan, and the same view pages wherever the run kept them. */
function expectSamePlan(pass: readonly ShardEntry[], run: readonly ShardEntry[]): void {
  expect(pass.map(planned)).toEqual(run.map(planned));
  for (const [i, s] of run.entries()) if (s.pageStarts) expect(pass[i]!.pageStarts).toEqual(s.pageStarts);
}

describe("a change costs its block", () => {
  it("a shard past its first checkpoint: changes around it, and a damaged checkpoint, store the whole render", async () => {
    const site = newSite("splice-checkpoint");
    await write(site, demoSection(site.origin, "pages", 12_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const [before] = listed(await manifestOf(site));
    expect(before!.blockStarts).toHaveLength(11);
    // Changes in the block before the first checkpoint (8), in it and after it, then in segments on both sides of it.
    for (const [k, indexes] of [
      [1, [7_500]],
      [2, [8_500]],
      [3, [10_500]],
      [4, [2_500, 11_500]],
    ] as const) {
      const records = indexes.map((i) => ({ ...demoSection(site.origin, "pages", 1, i)[0]!, lastmod: `2026-04-0${k}` }));
      await write(site, records, PAST + k * 1_000);
      o.reset();
      const run = await regenerateSite(o.deps, site.origin);
      expect(run).toMatchObject({ shardsSpliced: 1, blocksRendered: indexes.length });
      expect(o.rows()).toBeLessThanOrEqual(indexes.length * 1_000 + 20);
      const [after] = listed(await manifestOf(site));
      expect(await storedGzip(site, after!)).toEqual(await liveGzip(site, after!));
    }

    // The checkpoint's deflated bytes damaged in KV (one byte of its base64): the next change is rendered whole, and so healed.
    const [shard] = listed(await manifestOf(site));
    const { value, metadata } = await site.env.SNAPSHOTS.getWithMetadata<{ gzBytes: number; table: number }>(shard!.snapshot!, "arrayBuffer");
    const bytes = new Uint8Array(value!);
    const table = JSON.parse(text(bytes.subarray(metadata!.gzBytes))) as { b: unknown[][] };
    const row = table.b[8]!;
    expect(row).toHaveLength(15);
    const b64 = row[14] as string;
    row[14] = `${b64.slice(0, 100)}${b64[100] === "A" ? "B" : "A"}${b64.slice(101)}`;
    const damaged = new TextEncoder().encode(JSON.stringify(table));
    const value2 = new Uint8Array(metadata!.gzBytes + damaged.byteLength);
    value2.set(bytes.subarray(0, metadata!.gzBytes));
    value2.set(damaged, metadata!.gzBytes);
    await site.env.SNAPSHOTS.put(shard!.snapshot!, value2, { metadata: { ...metadata!, table: damaged.byteLength } });
    await write(site, [{ ...demoSection(site.origin, "pages", 1, 9_500)[0]!, lastmod: "2026-04-09" }], PAST + 9_000);
    const run = await regenerateSite(o.deps, site.origin);
    expect(run).toMatchObject({ shardsSpliced: 0, shardsRendered: 1 });
    const [healed] = listed(await manifestOf(site));
    expect(await storedGzip(site, healed!)).toEqual(await liveGzip(site, healed!));
    expect(text(await gunzip(await storedGzip(site, healed!)))).toContain("<lastmod>2026-04-09</lastmod>");
  });

  it("one changed URL in the middle of a 5,000-URL shard: one block's rows read, the same file a whole render gives", async () => {
    const site = newSite("splice-one");
    await write(site, demoSection(site.origin, "pages", 5_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const [before] = listed(await manifestOf(site));
    expect(before!.blockStarts).toHaveLength(4);

    const [record] = demoSection(site.origin, "pages", 1, 2_500);
    await write(site, [{ ...record, lastmod: "2026-03-03" }]);
    o.reset();
    const run = await regenerateSite(o.deps, site.origin);
    expect(run).toMatchObject({ shardsSpliced: 1, blocksRendered: 1, shardsRendered: 1, changed: ["pages-1"] });
    // Its block's 1,000 rows, the change feed's row and a few probes: not the shard's 5,000.
    expect(o.rows()).toBeGreaterThanOrEqual(1_000);
    expect(o.rows()).toBeLessThanOrEqual(1_020);

    const [after] = listed(await manifestOf(site));
    expect(after!.blockStarts).toEqual(before!.blockStarts);
    const stored = await storedGzip(site, after!);
    expect(stored).toEqual(await liveGzip(site, after!));
    const xml = text(await gunzip(stored));
    expect(xml.split("<lastmod>2026-03-03</lastmod>")).toHaveLength(2);
    expect(locsOf(xml)).toContain(new URL(record!.loc as string).href);
    // Within 1 % of one gzip stream of the same bytes (CompressionStream: zlib level 6).
    const single = await readAll(new Blob([xml]).stream().pipeThrough(new CompressionStream("gzip")));
    expect(stored.byteLength).toBeLessThanOrEqual(single.byteLength * 1.01);

    // A pass over every row plans the very same entry: nothing to render again.
    const full = await regenerateSite(o.deps, site.origin, { full: true });
    expect(full.shardsRendered).toBe(0);
    expectSamePlan(listed(await manifestOf(site)), [after!]);
    // Only a lastmod changed: the same keys are live, so the view's page starts were kept.
    expect(after!.pageStarts).toEqual(before!.pageStarts);
  });

  it("generated programs: after every run, each stored shard is its whole render and what a pass plans", async () => {
    const initial = 2_600;
    let run = 0;
    let spliced = 0;
    let passes = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(
            fc.oneof(
              fc.record({ op: fc.constant("update" as const), at: fc.nat(initial - 1) }),
              fc.record({ op: fc.constant("delete" as const), at: fc.nat(initial - 1) }),
              fc.record({ op: fc.constant("deleteBlock" as const), at: fc.nat(2) }),
              fc.record({ op: fc.constant("append" as const), count: fc.integer({ min: 1, max: 1_200 }) }),
            ),
            { minLength: 1, maxLength: 3 },
          ),
          { minLength: 1, maxLength: 3 },
        ),
        async (steps) => {
          const site = newSite(`splice-gen-${run++}`, { MAX_URLS_PER_SHARD: "2500" });
          await write(site, demoSection(site.origin, "pages", initial), PAST);
          const o = observedDeps(site);
          await regenerateSite(o.deps, site.origin);
          // The model: the live URLs, by their demo index.
          const live = new Set<number>(Array.from({ length: initial }, (_, i) => i));
          let next = initial;
          let stamp = 0;
          for (const ops of steps) {
            for (const op of ops) {
              if (op.op === "update") {
                const [r] = demoSection(site.origin, "pages", 1, op.at);
                await write(site, [{ ...r, lastmod: `2026-04-${String(1 + (stamp++ % 28)).padStart(2, "0")}` }]);
                live.add(op.at);
              } else if (op.op === "delete") {
                await site.writer.delete(demoSection(site.origin, "pages", 1, op.at).map((r) => new URL(r.loc as string).href));
                live.delete(op.at);
              } else if (op.op === "deleteBlock") {
                // Every URL of one block (1,000 rows from a block start): an empty block.
                const gone = demoSection(site.origin, "pages", 1_000, op.at * 1_000);
                await site.writer.delete(gone.map((r) => new URL(r.loc as string).href));
                for (let i = op.at * 1_000; i < op.at * 1_000 + 1_000; i++) live.delete(i);
              } else {
                await write(site, demoSection(site.origin, "pages", op.count, next));
                for (let i = next; i < next + op.count; i++) live.add(i);
                next += op.count;
              }
            }
            const summary = await regenerateSite(o.deps, site.origin);
            spliced += summary.shardsSpliced;
            passes += summary.shardsChecked - summary.shardsSpliced;
            const shards = listed(await manifestOf(site));
            const locs: string[] = [];
            for (const shard of shards) {
              const stored = await storedGzip(site, shard);
              expect(stored).toEqual(await liveGzip(site, shard));
              locs.push(...locsOf(text(await gunzip(stored))));
            }
            const expected = demoSection(site.origin, "pages", next).flatMap((r, i) => (live.has(i) ? [new URL(r.loc as string).href] : []));
            expect(locs.sort()).toEqual(expected.sort());
            const full = await regenerateSite(o.deps, site.origin, { full: true });
            expect(full.shardsRendered).toBe(0);
            expectSamePlan(listed(await manifestOf(site)), shards);
          }
        },
      ),
      { numRuns: 8, seed: 53, endOnFailure: true },
    );
    // Both ways were taken: blocks spliced, and shards a splice declined (a split, an emptied block) re-planned whole.
    expect(spliced).toBeGreaterThan(0);
    expect(passes).toBeGreaterThan(0);
  });
});
