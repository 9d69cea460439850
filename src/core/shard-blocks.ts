/**
 * A shard's document cut into the slices the block codec deflates one by one (core/gzip-blocks.ts):
 * block `i` holds the `<url>`s of the rows keyed up to `lastKeys[i]` (and past the block before),
 * the first block opens with the urlset head, the last ends with its tail. Cut along keys fixed
 * when the shard is planned, so a deletion or an insertion changes its own block's bytes only.
 * Joined, the slices are exactly what renderUrlRows streams for the same rows and options.
 */
import type { UrlRecord, UrlRow } from "./types.ts";
import { type RenderOptions, URLSET_CLOSE, urlElement, urlRowElement, urlsetOpen } from "./writers.ts";

const encoder = new TextEncoder();

/** One slice of `rows` (key order) per block; `lastKeys` ascending, the last covering the shard's last row. */
export function blockSlices(rows: readonly UrlRow[], lastKeys: readonly number[], options: RenderOptions = {}): Uint8Array[] {
  const slices: Uint8Array[] = [];
  let from = 0;
  for (let i = 0; i < lastKeys.length; i++) {
    let to = from;
    while (to < rows.length && rows[to]![0] <= lastKeys[i]!) to++;
    const last = i === lastKeys.length - 1;
    if (last && to < rows.length) throw new RangeError(`row key ${rows[to]![0]} is past the last block's last key ${lastKeys[i]}`);
    slices.push(blockSlice(rows.slice(from, to), { head: i === 0, tail: last }, options));
    from = to;
  }
  return slices;
}

/** One block's slice from its own rows: the urlset head when it is the shard's first block, the tail when its last. */
export function blockSlice(rows: readonly UrlRow[], at: { head: boolean; tail: boolean }, options: RenderOptions = {}): Uint8Array {
  const parts: string[] = at.head ? [urlsetOpen(options.namespaces ?? 0, options.stylesheet ?? false)] : [];
  for (const row of rows) parts.push(urlRowElement(row, options));
  if (at.tail) parts.push(URLSET_CLOSE);
  return encoder.encode(parts.join(""));
}

/** Block boundaries for rows in key order: the key of every `perBlock`-th row, the last block to `lastKey`. */
export function planBlocks(keys: readonly number[], perBlock: number, lastKey: number): number[] {
  const lastKeys: number[] = [];
  for (let i = perBlock - 1; i < keys.length - 1; i += perBlock) lastKeys.push(keys[i]!);
  lastKeys.push(lastKey);
  return lastKeys;
}

/** The same slice from records (what a store's range scan gives): the renderer's bytes for them. */
export function recordsSlice(records: readonly UrlRecord[], at: { head: boolean; tail: boolean }, options: RenderOptions = {}): Uint8Array {
  const parts: string[] = at.head ? [urlsetOpen(options.namespaces ?? 0, options.stylesheet ?? false)] : [];
  for (const record of records) parts.push(urlElement(record, options));
  if (at.tail) parts.push(URLSET_CLOSE);
  return encoder.encode(parts.join(""));
}
