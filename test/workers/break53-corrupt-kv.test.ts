/**
 * Issue 53 ("blocks"), tester break53: a shard's block table or stored file missing or damaged in
 * KV. The claim: when a splice cannot give the file a whole render gives, it falls back to
 * re-rendering the shard whole, never a different or broken file. After each kind of damage, one
 * URL in the middle block changes; the run must not fail and the stored file must be the shard's
 * live render, readable by any gunzip.
 */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);

type Damage = (site: Site, shard: ShardEntry) => Promise<void>;

/** The stored table as JSON ({ f, v, b: rows of [start, count, bytes, kinds, lastChange, h0, h1, deflatedBytes, crc, size] }). */
async function tableOf(site: Site, shard: ShardEntry): Promise<{ f: number; v: string; b: number[][] }> {
  const json = await site.env.SNAPSHOTS.get(`b1/${shard.snapshot}`, "text");
  if (json === null) throw new Error("no block table");
  return JSON.parse(json) as { f: number; v: string; b: number[][] };
}

/** Rewrites the stored file (same metadata) with `edit` applied to a copy of its bytes. */
async function editFile(site: Site, shard: ShardEntry, edit: (bytes: Uint8Array, table: number[][]) => void): Promise<void> {
  const { value, metadata } = await site.env.SNAPSHOTS.getWithMetadata(shard.snapshot!, "arrayBuffer");
  const bytes = new Uint8Array(value!.slice(0));
  edit(bytes, (await tableOf(site, shard)).b);
  await site.env.SNAPSHOTS.put(shard.snapshot!, bytes, { metadata });
}

/** Offset of block `i`'s deflated bytes in the file (10-byte gzip header first). */
const blockAt = (table: number[][], i: number): number => 10 + table.slice(0, i).reduce((n, row) => n + row[7]!, 0);

const damages: [string, Damage][] = [
  ["the block table deleted", async (site, shard) => site.env.SNAPSHOTS.delete(`b1/${shard.snapshot}`)],
  ["the block table not JSON", async (site, shard) => site.env.SNAPSHOTS.put(`b1/${shard.snapshot}`, "{not json")],
  [
    "a wrong CRC in the table for the untouched first block",
    async (site, shard) => {
      const table = await tableOf(site, shard);
      table.b[0]![8] = (table.b[0]![8]! ^ 0x5a5a) >>> 0;
      await site.env.SNAPSHOTS.put(`b1/${shard.snapshot}`, JSON.stringify(table));
    },
  ],
  [
    "a byte flipped inside the block after the changed one",
    (site, shard) =>
      editFile(site, shard, (bytes, table) => {
        const at = blockAt(table, 2) + Math.floor(table[2]![7]! / 2);
        bytes[at] = bytes[at]! ^ 0xff;
      }),
  ],
  [
    "a byte flipped inside the untouched first block",
    (site, shard) =>
      editFile(site, shard, (bytes, table) => {
        const at = blockAt(table, 0) + Math.floor(table[0]![7]! / 2);
        bytes[at] = bytes[at]! ^ 0xff;
      }),
  ],
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
      const stored = new Uint8Array((await site.env.SNAPSHOTS.get(after!.snapshot!, "arrayBuffer"))!);
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
