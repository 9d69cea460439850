/**
 * Issue 53 ("blocks"), tester break53c: the checkpoints of claim 3 (every 8th block's table entry
 * keeps the 32 KiB before it, deflated, with its CRC-32). Cases: a damaged checkpoint far from the
 * change (claim: never spliced), and changes around checkpoints in a shard of short URLs whose
 * blocks shrink under the 32 KiB window (so a window spans several blocks); after every run the
 * stored file must be the whole render and the entry what a pass plans.
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

/** The snapshot's block table (JSON rows, snapshot-blocks.ts), edited by `edit` and stored back. */
async function editTable(site: Site, shard: ShardEntry, edit: (rows: unknown[][]) => void): Promise<unknown[][]> {
  const { value, metadata } = await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard.snapshot!, "arrayBuffer");
  if (value === null || metadata === null || !metadata.table || metadata.parts !== undefined) throw new Error("no whole snapshot with a table");
  const bytes = new Uint8Array(value);
  const table = JSON.parse(new TextDecoder().decode(bytes.subarray(metadata.gzBytes))) as { b: unknown[][] };
  edit(table.b);
  const tail = new TextEncoder().encode(JSON.stringify(table));
  const gzip = bytes.subarray(0, metadata.gzBytes);
  await site.env.SNAPSHOTS.put(shard.snapshot!, concatBytes([gzip, tail], gzip.byteLength + tail.byteLength), {
    metadata: { ...metadata, table: tail.byteLength },
  });
  return table.b;
}

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

/** Short URLs (~45 bytes of XML each): 1,000 a block is ~45 KB, 500 under the 32 KiB window. */
const short = (site: Site, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ loc: `${site.origin}/${from + i}`, section: "pages" }));

describe("break53c: checkpoints", () => {
  it("a checkpoint's CRC damaged in block 8, a change in block 1: the shard is rendered whole, not spliced", async () => {
    const site = newSite("b53c-ckpt-far");
    await write(site, demoSection(site.origin, "pages", 10_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const [before] = listed(await manifestOf(site));
    expect(before!.blockStarts).toHaveLength(9);
    let damagedCrc = 0;
    await editTable(site, before!, (rows) => {
      expect(rows[8]).toHaveLength(15);
      damagedCrc = ((rows[8]![13] as number) ^ 0x10) >>> 0;
      rows[8]![13] = damagedCrc;
    });
    await write(site, [{ ...demoSection(site.origin, "pages", 1, 1_500)[0]!, lastmod: "2026-06-06" }], PAST + 1_000);
    const run = await regenerateSite(o.deps, site.origin);
    expect(run.failed).toEqual([]);
    const [after] = listed(await manifestOf(site));
    // Whether the new table still holds the damaged checkpoint (read before the pass below).
    const carried = (await editTable(site, after!, () => {}))[8]![13] === damagedCrc;
    // Control: the file itself is right.
    await expectWhole(site, o);
    expect({ spliced: run.shardsSpliced, carriesDamagedCheckpoint: carried }).toEqual({ spliced: 0, carriesDamagedCheckpoint: false });
  });

  it("short URLs, blocks shrunk under the window, changes around checkpoints 8 and 16: each run stores the whole render", async () => {
    const site = newSite("c");
    await write(site, short(site, 0, 18_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const [before] = listed(await manifestOf(site));
    expect(before!.blockStarts).toHaveLength(17);
    const del = (from: number, count: number) => site.writer.delete(short(site, from, count).map((r) => new URL(r.loc).href));
    const upd = (i: number, day: number) =>
      write(site, [{ ...short(site, i, 1)[0]!, lastmod: `2026-07-${String(day).padStart(2, "0")}` }], PAST + day * 1_000);
    const steps: [string, () => Promise<void>][] = [
      // Blocks 6, 7 and 8 left at 500 rows (~22 KB each): block 9's window spans three blocks.
      ["shrink 6, 7, 8", () => Promise.all([del(6_500, 500), del(7_500, 500), del(8_500, 500)]).then(() => {})],
      ["change in 7 and 9", () => Promise.all([upd(7_100, 1), upd(9_900, 2)]).then(() => {})],
      ["change in 8 (checkpoint) and 15, 16, 17", () => Promise.all([upd(8_000, 3), upd(15_999, 4), upd(16_000, 5), upd(17_500, 6)]).then(() => {})],
      ["shrink 15, 16; change 14", () => Promise.all([del(15_000, 500), del(16_500, 500), upd(14_000, 7)]).then(() => {})],
    ];
    const spliced: number[] = [];
    for (const [, step] of steps) {
      await step();
      o.reset();
      const run = await regenerateSite(o.deps, site.origin);
      expect(run.failed).toEqual([]);
      spliced.push(run.shardsSpliced);
      await expectWhole(site, o);
      if (spliced.length === 1) {
        // The shrunk blocks really are under the 32 KiB window (the table's document sizes, column 11).
        const [now] = listed(await manifestOf(site));
        const rows = await editTable(site, now!, () => {});
        expect([6, 7, 8].map((b) => rows[b]![11] as number).every((size) => size < 32 * 1024)).toBe(true);
      }
    }
    // The splices were taken, not declined into whole renders.
    expect(spliced).toEqual([1, 1, 1, 1]);
  });
});
