/**
 * A shard snapshot's block table as stored in KV (src/snapshots/store.ts StoredBlocks), after the
 * gzip bytes in the snapshot's own value (snapshot-store.ts): JSON, each block an array of numbers (~90 bytes a block, ~4.5 KB for a 50,000-URL shard), far
 * under KV's value limit. A table that does not read back as one is no table (the shard is then
 * rendered whole), never a wrong splice.
 */
import type { StoredBlocks } from "../../snapshots/store.ts";

/** Format tag: a table of another shape is not misread. */
const FORMAT = 1;

type Row = [number, number, number, number, number, number, number, number, number, number, number, number];

export function encodeBlocks(table: StoredBlocks): string {
  const rows: Row[] = table.blocks.map((b) => [
    b.start,
    b.count,
    b.bytes,
    b.kinds,
    b.lastChange,
    b.hash[0],
    b.hash[1],
    b.keys[0],
    b.keys[1],
    b.deflatedBytes,
    b.crc,
    b.size,
  ]);
  return JSON.stringify({ f: FORMAT, v: table.version, b: rows });
}

export function decodeBlocks(text: string): StoredBlocks | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const value = parsed as { f?: unknown; v?: unknown; b?: unknown };
  if (value.f !== FORMAT || typeof value.v !== "string" || !Array.isArray(value.b)) return null;
  const blocks: StoredBlocks["blocks"] = [];
  for (const row of value.b as unknown[]) {
    if (!Array.isArray(row) || row.length !== 12 || !row.every((n) => Number.isSafeInteger(n))) return null;
    const [start, count, bytes, kinds, lastChange, h0, h1, k0, k1, deflatedBytes, crc, size] = row as Row;
    blocks.push({ start, count, bytes, kinds, lastChange, hash: [h0, h1], keys: [k0, k1], deflatedBytes, crc, size });
  }
  return { version: value.v, blocks };
}
