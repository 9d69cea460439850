/**
 * The block codec inside workerd (its node:zlib, its DecompressionStream) over a shard read from D1
 * as the live render reads it: the blocked gzip gunzips to the live render's bytes, and after one
 * record of the middle block changes, splicing that block (re-read by its key range) into the
 * stored file (spliceFile re-deflates the next one from its stored bytes) gives the file built
 * from scratch.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { D1RecordReader } from "../../src/adapters/d1/reader.ts";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { blockSpans, deflateBlocks, gzipOfBlocks, spliceFile } from "../../src/core/gzip-blocks.ts";
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
    const { blocks, layouts } = deflateBlocks(blockSlices(rows, lastKeys, options), zlibBlockDeflate);
    const stored = gzipOfBlocks(blocks);
    const live = new Uint8Array(
      await new Response(
        renderUrlRows(paged(reader.rowPages({ origin, section: "products", firstKey: keys!.lo, lastKey: keys!.hi })), options),
      ).arrayBuffer(),
    );
    expect(await gunzip(stored)).toEqual(live);

    // One record of the middle block changes: that block is rendered again from its rows; the
    // next one, whose dictionary it is, comes back from the stored file and is re-deflated.
    const changed = records[1_500]!;
    await writer.upsert([{ ...changed, lastmod: "2026-11-28T12:00:00Z" }]);
    const middle = blockSlice(await rowsOf(reader, origin, lastKeys[0]! + 1, lastKeys[1]!), { head: false, tail: false }, options);
    const spans = blockSpans(
      stored,
      layouts.map((l) => l.deflatedBytes),
    );
    const result = spliceFile(spans!, layouts, new Map([[1, [middle]]]), zlibBlockDeflate);
    const spliced = { file: gzipOfBlocks(result!.blocks) };
    const rebuilt = gzipOfBlocks(deflateBlocks(blockSlices(await rowsOf(reader, origin, keys!.lo, keys!.hi), lastKeys, options), zlibBlockDeflate).blocks);
    expect(spliced.file).toEqual(rebuilt);
    const text = new TextDecoder().decode(await gunzip(spliced.file));
    expect(text).toContain("<lastmod>2026-11-28T12:00:00Z</lastmod>");
  });
});
