/**
 * Issue 53 ("blocks"), tester break53c, claim 3 (held in these cases): a checkpoint block that
 * splits (the last block, a checkpoint at index 8, grown by 1,500 appended rows) hands its
 * checkpoint to the first block in its place; later changes in the blocks after it (no checkpoint
 * of their own) read back from it; and a table of the previous format (no checkpoints, format 1)
 * is rendered whole once, then spliced again. After every run the stored file is the whole render
 * and the entry what a pass plans.
 */
import { describe, expect, it } from "vitest";
import { concatBytes } from "../../src/core/bytes.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import type { SnapshotMeta } from "../../src/snapshots/store.ts";
import { type Observed, type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);

const planned = (s: ShardEntry) => ({ urlCount: s.urlCount, byteCount: s.byteCount, version: s.version, blockStarts: s.blockStarts });

/** After a run: the stored file is the whole live render, and a pass over every row plans the same entry. */
async function expectWhole(site: Site, o: Observed): Promise<void> {
  const [after] = listed(await manifestOf(site));
  expect(await snapshotGzip(site, after!.snapshot!)).toEqual(await readAll(gzipDocument(renderShard(services(site.env), site.origin, after!))));
  const pass = await regenerateSite(o.deps, site.origin, { full: true });
  expect(pass.shardsRendered).toBe(0);
  const [again] = listed(await manifestOf(site));
  expect(planned(again!)).toEqual(planned(after!));
}

const update = (site: Site, indexes: number[], day: number) =>
  write(
    site,
    indexes.map((i) => ({ ...demoSection(site.origin, "pages", 1, i)[0]!, lastmod: `2026-08-${String(day).padStart(2, "0")}` })),
    PAST + day * 1_000,
  );

describe("break53c: a split checkpoint block, and a table of the previous format", () => {
  it("the last block (a checkpoint, index 8) split by 1,500 appended rows, then changes after it and in it", async () => {
    const site = newSite("b53c-split");
    await write(site, demoSection(site.origin, "pages", 9_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    expect(listed(await manifestOf(site))[0]!.blockStarts).toHaveLength(8);
    const spliced: number[] = [];
    const steps: (() => Promise<void>)[] = [
      () => write(site, demoSection(site.origin, "pages", 1_500, 9_000), PAST + 500),
      () => update(site, [9_600, 10_400], 1),
      () => update(site, [8_100, 7_900], 2),
      () => update(site, [10_499, 100], 3),
    ];
    for (const step of steps) {
      await step();
      const run = await regenerateSite(o.deps, site.origin);
      expect(run.failed).toEqual([]);
      spliced.push(run.shardsSpliced);
      await expectWhole(site, o);
    }
    expect(listed(await manifestOf(site))[0]!.blockStarts).toHaveLength(10);
    // The changes after the split were spliced (reading back from the checkpoint it handed on).
    expect(spliced.slice(1)).toEqual([1, 1, 1]);
  });

  it("a table of the previous format: rendered whole once, then spliced", async () => {
    const site = newSite("b53c-oldfmt");
    await write(site, demoSection(site.origin, "pages", 3_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const [shard] = listed(await manifestOf(site));
    const { value, metadata } = await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard!.snapshot!, "arrayBuffer");
    const bytes = new Uint8Array(value!);
    const table = JSON.parse(new TextDecoder().decode(bytes.subarray(metadata!.gzBytes))) as { f: number; b: unknown[][] };
    // Format 1: rows without the stored bytes' CRC-32 (12 numbers), no checkpoints.
    const old = new TextEncoder().encode(JSON.stringify({ ...table, f: 1, b: table.b.map((r) => r.slice(0, 12)) }));
    const gzip = bytes.subarray(0, metadata!.gzBytes);
    await site.env.SNAPSHOTS.put(shard!.snapshot!, concatBytes([gzip, old], gzip.byteLength + old.byteLength), {
      metadata: { ...metadata!, table: old.byteLength },
    });

    const runs: number[] = [];
    for (const [i, at] of [1_500, 2_500].entries()) {
      await update(site, [at], i + 1);
      const run = await regenerateSite(o.deps, site.origin);
      expect(run.failed).toEqual([]);
      runs.push(run.shardsSpliced);
      await expectWhole(site, o);
    }
    expect(runs).toEqual([0, 1]);
  });
});
