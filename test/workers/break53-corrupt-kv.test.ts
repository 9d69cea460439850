/**
 * Issue 53 ("blocks"), tester break53: a shard's block table or stored file missing or damaged in
 * KV (the table is stored after the gzip in the snapshot's own value, its length in the metadata
 * `table`). The claim: when a splice cannot give the file a whole render gives, it falls back to
 * re-rendering the shard whole, never a different or broken file. After each kind of damage, one
 * URL in the middle block changes; the run must not fail and the stored file must be the shard's
 * live render, readable by any gunzip.
 */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodeBlocks, encodeBlocks } from "../../src/adapters/kv/snapshot-blocks.ts";
import { concatBytes } from "../../src/core/bytes.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import type { SnapshotMeta, StoredBlocks } from "../../src/snapshots/store.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);
const encoder = new TextEncoder();

type Damage = (site: Site, shard: ShardEntry) => Promise<void>;

/**
 * The shard's stored value split at metadata `gzBytes`: the gzip, then the block table's text
 * (metadata `table` bytes). The shard is small enough to be stored whole, in its head's value.
 */
async function storedValue(site: Site, shard: ShardEntry): Promise<{ gzip: Uint8Array; table: string; meta: SnapshotMeta }> {
  const { value, metadata } = await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard.snapshot!, "arrayBuffer");
  if (value === null || metadata === null) throw new Error("no snapshot");
  if (metadata.parts !== undefined) throw new Error("snapshot stored in parts");
  if (!metadata.table) throw new Error("no block table after the gzip");
  const bytes = new Uint8Array(value);
  expect(bytes.byteLength).toBe(metadata.gzBytes + metadata.table);
  return { gzip: bytes.slice(0, metadata.gzBytes), table: new TextDecoder().decode(bytes.subarray(metadata.gzBytes)), meta: metadata };
}

/** Rewrites the shard's value as `gzip` then `table` (null: no table), the metadata's `table` length to match. */
async function rewrite(site: Site, shard: ShardEntry, gzip: Uint8Array, table: string | null, meta: SnapshotMeta): Promise<void> {
  const { table: _old, ...rest } = meta;
  if (table === null) {
    await site.env.SNAPSHOTS.put(shard.snapshot!, gzip, { metadata: rest });
    return;
  }
  const tail = encoder.encode(table);
  await site.env.SNAPSHOTS.put(shard.snapshot!, concatBytes([gzip, tail], gzip.byteLength + tail.byteLength), {
    metadata: { ...rest, table: tail.byteLength },
  });
}

/** The stored block table, decoded (it must read back before it is damaged). */
function decoded(table: string): StoredBlocks {
  const blocks = decodeBlocks(table);
  if (!blocks) throw new Error("the stored block table does not decode");
  return blocks;
}

/** Rewrites the gzip part of the value (same table, same metadata) with `edit` applied to a copy of its bytes. */
async function editFile(site: Site, shard: ShardEntry, edit: (bytes: Uint8Array, table: StoredBlocks) => void): Promise<void> {
  const { gzip, table, meta } = await storedValue(site, shard);
  edit(gzip, decoded(table));
  await rewrite(site, shard, gzip, table, meta);
}

/** Offset of block `i`'s deflated bytes in the file (10-byte gzip header first). */
const blockAt = (table: StoredBlocks, i: number): number => 10 + table.blocks.slice(0, i).reduce((n, b) => n + b.deflatedBytes, 0);

/** Flips a byte in the middle of block `i`'s deflated bytes. */
const flipInBlock = (i: number) => (bytes: Uint8Array, table: StoredBlocks) => {
  const at = blockAt(table, i) + Math.floor(table.blocks[i]!.deflatedBytes / 2);
  bytes[at] = bytes[at]! ^ 0xff;
};

const damages: [string, Damage][] = [
  [
    "the value without its table",
    async (site, shard) => {
      const { gzip, meta } = await storedValue(site, shard);
      await rewrite(site, shard, gzip, null, meta);
    },
  ],
  [
    "the table not JSON",
    async (site, shard) => {
      const { gzip, table, meta } = await storedValue(site, shard);
      // Garbled in place: same length, so only its text is wrong.
      await rewrite(site, shard, gzip, "{not json".padEnd(table.length, "#"), meta);
    },
  ],
  [
    "a wrong CRC in the table for the untouched first block",
    async (site, shard) => {
      const { gzip, table, meta } = await storedValue(site, shard);
      const blocks = decoded(table);
      blocks.blocks[0]!.crc = (blocks.blocks[0]!.crc ^ 0x5a5a) >>> 0;
      await rewrite(site, shard, gzip, encodeBlocks(blocks), meta);
    },
  ],
  ["a byte flipped inside the block after the changed one", (site, shard) => editFile(site, shard, flipInBlock(2))],
  ["a byte flipped inside the untouched first block", (site, shard) => editFile(site, shard, flipInBlock(0))],
];

describe("break53: a damaged block table or stored file", () => {
  for (const [name, damage] of damages) {
    it(`${name}: the next change stores the shard's whole render`, async () => {
      const site = newSite("b53-corrupt");
      await write(site, demoSection(site.origin, "pages", 3_000), PAST);
      const o = observedDeps(site);
      await regenerateSite(o.deps, site.origin);
      const [before] = listed(await manifestOf(site));
      expect(before!.pageStarts).toHaveLength(3);
      await damage(site, before!);

      const [one] = demoSection(site.origin, "pages", 1, 1_500);
      await write(site, [{ ...one, lastmod: "2026-09-09" }], PAST + 1_000);
      const run = await regenerateSite(o.deps, site.origin);
      expect(run.failed).toEqual([]);
      const [after] = listed(await manifestOf(site));
      expect(after!.version).not.toBe(before!.version);
      const stored = await snapshotGzip(site, after!.snapshot!);
      const live = await readAll(gzipDocument(renderShard(services(site.env), site.origin, after!)));
      const xml = new TextDecoder().decode(await readAll(renderShard(services(site.env), site.origin, after!)));
      let gunzipped: string;
      try {
        gunzipped = new TextDecoder().decode(gunzipSync(stored));
      } catch (err) {
        gunzipped = String(err);
      }
      // What was stored, in short: whether any gunzip reads it, whether it is the shard's XML and its bytes.
      expect({
        gunzip: gunzipped.startsWith("Error") ? gunzipped : "ok",
        sameXml: gunzipped === xml,
        sameBytes: stored.byteLength === live.byteLength && stored.every((b, i) => b === live[i]),
        spliced: run.shardsSpliced,
      }).toEqual({ gunzip: "ok", sameXml: true, sameBytes: true, spliced: run.shardsSpliced });
    });
  }
});
