/**
 * The block codec inside workerd (its node:zlib, its DecompressionStream) over a shard read from D1
 * as the live render reads it: the blocked gzip gunzips to the live render's bytes, and after one
 * record of the middle block changes, re-deflating that block (re-read by its key range) and the
 * next one (from the stored file) and splicing them in gives the file built from scratch.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { D1RecordReader } from "../../src/adapters/d1/reader.ts";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { blockTable, blockText, deflateBlock, deflateBlocks, gzipOfBlocks, spliceBlocks } from "../../src/core/gzip-blocks.ts";
import { renderUrlRows } from "../../src/core/render.ts";
import { blockSlice, blockSlices, planBlocks } from "../../src/core/shard-blocks.ts";
import { paged } from "../../src/core/source.ts";
import type { UrlRow } from "../../src/core/types.ts";
import { demoSection, withDemoExtensions } from "../../src/demo/demo-data.ts";
import { zlibBlockDeflate } from "../../src/snapshots/block-deflate.ts";
import { freshOrigin, gunzip, validRecords } from "./support.ts";

async function rowsOf(reader: D1RecordReader, origin: string, firstKey: number, lastKey: number): Promise<UrlRow[]> {
  const rows: UrlRow[] = [];
  for await (const page of reader.rowPages({ origin, section: "products", firstKey, lastKey })) rows.push(...page);
  return rows;
}

describe("a shard stored as blocks", () => {
  it("gunzips in workerd to the live render's bytes, and a change spliced into it equals a full rebuild", async () => {
    const origin = freshOrigin("blocks");
    const inputs = withDemoExtensions("products", demoSection(origin, "products", 3_000), Date.UTC(2026, 10, 1));
    const records = validRecords({ ...env, SITES: origin } as Env, inputs);
    const writer = new D1RecordWriter(env.DB);
    await writer.upsert(records);
    const reader = new D1RecordReader(env.DB);
    const keys = await env.DB.prepare("SELECT min(id) AS lo, max(id) AS hi FROM urls WHERE origin = ?1").bind(origin).first<{ lo: number; hi: number }>();
    const rows = await rowsOf(reader, origin, keys!.lo, keys!.hi);
    const lastKeys = planBlocks(
      rows.map((r) => r[0]),
      1_000,
      keys!.hi,
    );
    expect(lastKeys).toHaveLength(3);

    const options = { namespaces: 3 };
    const blocks = deflateBlocks(blockSlices(rows, lastKeys, options), zlibBlockDeflate);
    const stored = gzipOfBlocks(blocks);
    const live = new Uint8Array(
      await new Response(
        renderUrlRows(paged(reader.rowPages({ origin, section: "products", firstKey: keys!.lo, lastKey: keys!.hi })), options),
      ).arrayBuffer(),
    );
    expect(await gunzip(stored)).toEqual(live);

    // One record of the middle block changes: that block is rendered again from its rows (the block
    // before it too, for its dictionary); the next one, whose dictionary it is, comes back from the
    // stored file (primed by the middle block's old bytes) and is re-deflated; both are spliced in.
    const changed = records[1_500]!;
    await writer.upsert([{ ...changed, lastmod: "2026-11-28T12:00:00Z" }]);
    const blockFirst = (i: number): number => (i === 0 ? keys!.lo : lastKeys[i - 1]! + 1);
    const block = async (i: number) =>
      blockSlice(await rowsOf(reader, origin, blockFirst(i), lastKeys[i]!), { head: i === 0, tail: i === lastKeys.length - 1 }, options);
    const [previous, middle] = [await block(0), await block(1)];
    const table = blockTable(blocks);
    const next = blockText(stored, table, 2, blockText(stored, table, 1, previous, zlibBlockDeflate), zlibBlockDeflate);
    const replaced = new Map([
      [1, deflateBlock(middle, previous, zlibBlockDeflate)],
      [2, deflateBlock(next, middle, zlibBlockDeflate)],
    ]);
    const spliced = spliceBlocks(stored, table, replaced);
    const rebuilt = gzipOfBlocks(deflateBlocks(blockSlices(await rowsOf(reader, origin, keys!.lo, keys!.hi), lastKeys, options), zlibBlockDeflate));
    expect(spliced.file).toEqual(rebuilt);
    const text = new TextDecoder().decode(await gunzip(spliced.file));
    expect(text).toContain("<lastmod>2026-11-28T12:00:00Z</lastmod>");
  });
});
