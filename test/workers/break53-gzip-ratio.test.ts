/**
 * Issue 53 ("blocks"), tester break53: a shard's stored file stays within 0.5 % of one gzip stream
 * of the same XML (CompressionStream, zlib level 6) — measured on a dense shard after a splice, a
 * shard thinned by deletions to a few URLs a block (a pass merges its small blocks: fixed, they
 * were kept at 10 URLs each, 27 % over), a shard with an emptied block in the middle, and a
 * one-URL shard (the block framing's few bytes: an empty stored block ending each block, an empty
 * final block). The stored file is the gzip a
 * snapshot serves (its block table, stored after it in the same KV value, is never served).
 */
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";
import { gunzip } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);

/** Stored gzip bytes of the site's one shard, over one gzip stream of its XML, minus one. */
async function overhead(site: Site): Promise<{ stored: number; single: number; ratio: number }> {
  const [shard] = listed(await manifestOf(site));
  const stored = await snapshotGzip(site, shard!.snapshot!);
  const xml = await gunzip(stored);
  const single = await readAll(new Blob([xml]).stream().pipeThrough(new CompressionStream("gzip")));
  return { stored: stored.byteLength, single: single.byteLength, ratio: stored.byteLength / single.byteLength - 1 };
}

const locs = (site: Site, count: number, from: number) => demoSection(site.origin, "pages", count, from).map((r) => new URL(r.loc).href);

describe("break53: stored file size against one gzip stream", () => {
  it("a 5,000-URL shard after one change (a splice)", async () => {
    const site = newSite("b53-ratio-dense");
    await write(site, demoSection(site.origin, "pages", 5_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const [one] = demoSection(site.origin, "pages", 1, 2_500);
    await write(site, [{ ...one, lastmod: "2026-03-03" }], PAST + 1);
    expect((await regenerateSite(o.deps, site.origin)).shardsSpliced).toBe(1);
    const o2 = await overhead(site);
    expect(o2.ratio, JSON.stringify(o2)).toBeLessThanOrEqual(0.005);
  });

  it("a 10,000-URL shard thinned to 10 URLs a block", async () => {
    const site = newSite("b53-ratio-sparse");
    await write(site, demoSection(site.origin, "pages", 10_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    // Keep the first 10 URLs of each block of 1,000.
    const gone: string[] = [];
    for (let b = 0; b < 10; b++) gone.push(...locs(site, 990, b * 1_000 + 10));
    await site.writer.delete(gone, PAST + 1);
    await regenerateSite(o.deps, site.origin);
    const [shard] = listed(await manifestOf(site));
    expect(shard!.urlCount).toBe(100);
    // Its blocks of 10 URLs were merged by the pass (core/block-plan.ts MIN_BLOCK_ROWS): one block now.
    const stored = await o.deps.snapshots.withBlocks(shard!.snapshot!, Number.MAX_SAFE_INTEGER);
    expect(stored?.blocks.blocks.map((b) => b.count)).toEqual([100]);
    const o2 = await overhead(site);
    expect(o2.ratio, JSON.stringify(o2)).toBeLessThanOrEqual(0.005);
  });

  it("a 3,000-URL shard whose middle block was deleted whole", async () => {
    const site = newSite("b53-ratio-hole");
    await write(site, demoSection(site.origin, "pages", 3_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    await site.writer.delete(locs(site, 1_000, 1_000), PAST + 1);
    await regenerateSite(o.deps, site.origin);
    const o2 = await overhead(site);
    expect(o2.ratio, JSON.stringify(o2)).toBeLessThanOrEqual(0.005);
  });

  it("a one-URL shard", async () => {
    const site = newSite("b53-ratio-tiny");
    await write(site, demoSection(site.origin, "pages", 1), PAST);
    await regenerateSite(observedDeps(site).deps, site.origin);
    const o2 = await overhead(site);
    // 0.5 % of 204 bytes is one byte: the framing's fixed few bytes are what it pays.
    expect(o2.stored - o2.single, JSON.stringify(o2)).toBeLessThanOrEqual(8);
  });
});
