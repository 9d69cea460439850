/**
 * Issue 53 ("blocks"), tester break53b. Breaks claim 3 ("a damaged block table — any byte — is never
 * spliced: the shard is rendered whole") and claim 2 ("the manifest entry equals what a full pass
 * plans"). The splice checks a block table's CRC-32s, lengths and starts against the stored bytes,
 * but takes an untouched block's other figures (URL count, last change, row hash) from the table
 * unchecked: damage to one of them in a block far from the change is carried into the new entry.
 * Each case damages one figure of block 0, changes one URL in block 2, and compares the entry the
 * run published with the one a full pass then plans from the rows. The control (no damage) holds.
 * (Fixed: the table carries a CRC-32 of its own text, so damaged figures make it no table and the
 * shard is rendered whole; the damage here is to the stored text, its CRC left as stored.)
 */
import { describe, expect, it } from "vitest";
import { decodeBlocks, encodeBlocks } from "../../src/adapters/kv/snapshot-blocks.ts";
import { concatBytes } from "../../src/core/bytes.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import type { SnapshotMeta, StoredBlocks } from "../../src/snapshots/store.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);
const encoder = new TextEncoder();

/** Rewrites the shard's stored block table (kept after the gzip in its KV value) with `edit` applied. */
async function editTable(site: Site, shard: ShardEntry, edit: (table: StoredBlocks) => void): Promise<void> {
  const { value, metadata } = await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard.snapshot!, "arrayBuffer");
  if (value === null || metadata === null || metadata.parts !== undefined || !metadata.table) throw new Error("no whole value with a table");
  const bytes = new Uint8Array(value);
  const gzip = bytes.slice(0, metadata.gzBytes);
  const table = decodeBlocks(new TextDecoder().decode(bytes.subarray(metadata.gzBytes)));
  if (!table) throw new Error("the stored table does not decode");
  edit(table);
  // Damage to the stored bytes, not a table our writer wrote: the table's own CRC-32 (`c`) stays what was stored.
  const stored = JSON.parse(new TextDecoder().decode(bytes.subarray(metadata.gzBytes))) as { c: number };
  const tail = encoder.encode(JSON.stringify({ ...(JSON.parse(encodeBlocks(table)) as object), c: stored.c }));
  await site.env.SNAPSHOTS.put(shard.snapshot!, concatBytes([gzip, tail], gzip.byteLength + tail.byteLength), {
    metadata: { ...metadata, table: tail.byteLength },
  });
}

/** What a manifest entry says of its shard's content. */
const planned = (e: ShardEntry) => ({
  urlCount: e.urlCount,
  byteCount: e.byteCount,
  lastChange: e.lastChange,
  version: e.version,
  blockStarts: e.blockStarts,
});

const damages: [string, (t: StoredBlocks) => void][] = [
  ["no damage (control)", () => {}],
  ["block 0's URL count + 7", (t) => void (t.blocks[0]!.count += 7)],
  ["block 0's last change in 2030", (t) => void (t.blocks[0]!.lastChange = Date.UTC(2030, 0, 1))],
  ["block 0's row hash", (t) => void (t.blocks[0]!.hash[0] = (t.blocks[0]!.hash[0] ^ 0x1234) >>> 0)],
];

describe("break53b: an untouched block's figures damaged in the stored table", () => {
  for (const [name, damage] of damages) {
    it(`${name}: the spliced entry is what a full pass plans`, async () => {
      const site = newSite("b53b-stats");
      await write(site, demoSection(site.origin, "pages", 3_000), PAST);
      const o = observedDeps(site);
      await regenerateSite(o.deps, site.origin);
      const [before] = listed(await manifestOf(site));
      expect(before!.blockStarts).toHaveLength(2);
      await editTable(site, before!, damage);

      const [one] = demoSection(site.origin, "pages", 1, 2_500);
      await write(site, [{ ...one, lastmod: "2026-09-09" }], PAST + 1_000);
      const run = await regenerateSite(o.deps, site.origin);
      expect(run.failed).toEqual([]);
      const [spliced] = listed(await manifestOf(site));
      await regenerateSite(o.deps, site.origin, { full: true });
      const [full] = listed(await manifestOf(site));
      expect(planned(spliced!)).toEqual(planned(full!));
      expect(spliced!.urlCount).toBe(3_000);
    });
  }
});
