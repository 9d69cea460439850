/**
 * Issue 53 ("blocks"), tester break53b. Breaks claim 3 ("a damaged checkpoint is never spliced: the
 * shard is rendered whole"): spliceFile copies a block far after the change unread, checking only
 * its stored bytes' CRC-32, and carries that block's checkpoint into the new table unchecked, so a
 * damaged checkpoint survives the splice (and every later one that does not start from it). The
 * control: the same damage on the checkpoint the splice starts from is refused (null).
 */
import { describe, expect, it } from "vitest";
import { type BlockLayout, CHECKPOINT_EVERY, blockSpans, deflateBlocks, gzipOfBlocks, spliceFile } from "../../src/core/gzip-blocks.ts";
import { zlibBlockDeflate } from "../../src/snapshots/block-deflate.ts";

const encoder = new TextEncoder();
/** 20 slices of ~40 KB of sitemap-like text each (the window is 32 KiB). */
const slices = Array.from({ length: 20 }, (_, b) =>
  encoder.encode(Array.from({ length: 500 }, (_, r) => `<url><loc>https://a.example/p/${b}/${r}</loc></url>\n`).join("")),
);

function stored(): { spans: Uint8Array[]; layouts: BlockLayout[] } {
  const { blocks, layouts } = deflateBlocks(slices, zlibBlockDeflate);
  const file = gzipOfBlocks(blocks);
  return {
    spans: blockSpans(
      file,
      layouts.map((l) => l.deflatedBytes),
    )!,
    layouts,
  };
}

/** The table with block `i`'s checkpoint CRC damaged. */
function damaged(layouts: BlockLayout[], i: number): BlockLayout[] {
  const copy = layouts.map((l) => ({ ...l }));
  const cp = copy[i]!.checkpoint!;
  copy[i] = { ...copy[i]!, checkpoint: { ...cp, crc: (cp.crc ^ 0x55) >>> 0 } };
  return copy;
}

const changed = (j: number) => new Map([[j, [encoder.encode(`<url><loc>https://a.example/changed/${j}</loc></url>\n`.repeat(400))]]]);

describe("break53b: a damaged checkpoint", () => {
  it("on the checkpoint a splice starts from: refused (control)", () => {
    const { spans, layouts } = stored();
    expect(spliceFile(spans, damaged(layouts, CHECKPOINT_EVERY), changed(CHECKPOINT_EVERY + 2), zlibBlockDeflate)).toBeNull();
  });

  it("on a block copied unread after the change: refused, or not carried into the new table", () => {
    const { spans, layouts } = stored();
    const far = 2 * CHECKPOINT_EVERY;
    const result = spliceFile(spans, damaged(layouts, far), changed(3), zlibBlockDeflate);
    const carried = result === null ? null : result.layouts[far]!.checkpoint!.crc;
    // A checkpoint's CRC must be the one of the 32 KiB before its block, whatever the splice kept.
    const sound = stored().layouts[far]!.checkpoint!.crc;
    expect(carried === null || carried === sound).toBe(true);
  });
});
