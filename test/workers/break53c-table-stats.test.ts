/**
 * Issue 53 ("blocks"), tester break53c. Breaks claim 3: "a damaged block table (any byte, any
 * block) is never spliced: the shard is rendered whole instead". A block table row holds, besides
 * the CRC-checked layout (deflatedBytes, crc, size, zcrc), the block's plan figures (count, bytes,
 * lastChange, hash): a splice takes an untouched block's figures from the table unchecked, so one
 * damaged figure in a block far from the change goes into the manifest entry (counts, version,
 * Last-Modified) that a pass over every row would not plan. Each case: a 3,000-URL shard (3 blocks),
 * one figure of block 0 damaged in KV, one URL of block 2 changed; the entry after the run must be
 * the one a pass plans (the file itself stays right: the control).
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
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);

/** Rewrites the table's row `block`, column `column` (snapshot-blocks.ts order) with `edit` of its value. */
async function damageTable(site: Site, shard: ShardEntry, block: number, column: number, edit: (v: number) => number): Promise<void> {
  const { value, metadata } = await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard.snapshot!, "arrayBuffer");
  if (value === null || metadata === null || !metadata.table || metadata.parts !== undefined) throw new Error("no whole snapshot with a table");
  const bytes = new Uint8Array(value);
  const table = JSON.parse(new TextDecoder().decode(bytes.subarray(metadata.gzBytes))) as { b: unknown[][] };
  const row = table.b[block]!;
  row[column] = edit(row[column] as number);
  const tail = new TextEncoder().encode(JSON.stringify(table));
  const gzip = bytes.subarray(0, metadata.gzBytes);
  await site.env.SNAPSHOTS.put(shard.snapshot!, concatBytes([gzip, tail], gzip.byteLength + tail.byteLength), {
    metadata: { ...metadata, table: tail.byteLength },
  });
}

const planned = (s: ShardEntry) => ({
  urlCount: s.urlCount,
  byteCount: s.byteCount,
  version: s.version,
  lastChange: s.lastChange,
  blockStarts: s.blockStarts,
  extKinds: s.extKinds,
});

/** Columns of a table row: [start, count, bytes, kinds, lastChange, hash0, hash1, key0, key1, deflatedBytes, crc, size, zcrc]. */
const cases: [string, number, (v: number) => number][] = [
  ["count", 1, (v) => v + 1],
  ["bytes", 2, (v) => v + 1_000],
  ["lastChange", 4, (v) => v + 86_400_000_000],
  ["hash[0]", 5, (v) => (v ^ 1) >>> 0],
  // The news bit (EXT_NEWS, 4): not a shard extension, so the splice's namespace check lets it through.
  ["kinds", 3, (v) => v | 4],
];

describe("break53c: a damaged plan figure in an untouched block's table row", () => {
  for (const [name, column, edit] of cases) {
    it(`block 0's ${name} damaged, a change in block 2: the entry is what a pass plans`, async () => {
      const site = newSite(`b53c-stats-${column}`);
      await write(site, demoSection(site.origin, "pages", 3_000), PAST);
      const o = observedDeps(site);
      await regenerateSite(o.deps, site.origin);
      const [before] = listed(await manifestOf(site));
      expect(before!.blockStarts).toHaveLength(2);
      await damageTable(site, before!, 0, column, edit);

      await write(site, [{ ...demoSection(site.origin, "pages", 1, 2_500)[0]!, lastmod: "2026-05-05" }], PAST + 1_000);
      const run = await regenerateSite(o.deps, site.origin);
      expect(run.failed).toEqual([]);
      const [after] = listed(await manifestOf(site));
      // Control: the stored file is the shard's whole render either way.
      expect(await snapshotGzip(site, after!.snapshot!)).toEqual(await readAll(gzipDocument(renderShard(services(site.env), site.origin, after!))));

      // A pass over every row: it plans the entry from the rows themselves.
      await regenerateSite(o.deps, site.origin, { full: true });
      const [pass] = listed(await manifestOf(site));
      expect({ ...planned(after!), spliced: run.shardsSpliced }).toEqual({ ...planned(pass!), spliced: 0 });
      expect(after!.urlCount).toBe(3_000);
    });
  }
});
