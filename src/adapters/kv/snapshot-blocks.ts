/**
 * A shard snapshot's block table as stored in KV (src/snapshots/store.ts StoredBlocks), after the
 * gzip bytes in the snapshot's own value (snapshot-store.ts): JSON, each block an array of numbers
 * (~100 bytes a block), every CHECKPOINT_EVERY-th block's checkpoint (core/gzip-blocks.ts: its
 * deflated dictionary, ~5 KB) in base64 after them: ~45 KB for a 50,000-URL shard of ~1 MB gzip,
 * far under KV's value limit. A table that does not read back as one, or of an earlier format (no
 * CRC-32 of the stored bytes, no checkpoints), is no table: the shard is then rendered whole, which
 * stores a table of this format, never a wrong splice. The table carries a CRC-32 of its own text
 * (`c`): the splice takes an untouched block's figures (rows, fingerprints, stamps) from it without
 * reading the block's rows, so a damaged figure would go into the manifest entry unseen; with the
 * CRC, damage anywhere in the table makes it no table.
 */
import { crc32 } from "node:zlib";
import type { Checkpoint } from "../../core/gzip-blocks.ts";
import type { StoredBlocks } from "../../snapshots/store.ts";

/** Format tag: a table of another shape is not misread. */
const FORMAT = 2;

type Numbers = [number, number, number, number, number, number, number, number, number, number, number, number, number];
type Row = Numbers | [...Numbers, number, string];

export function encodeBlocks(table: StoredBlocks): string {
  const rows: Row[] = table.blocks.map((b) => {
    const numbers: Numbers = [
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
      b.zcrc,
    ];
    return b.checkpoint ? [...numbers, b.checkpoint.crc, toBase64(b.checkpoint.deflated)] : numbers;
  });
  return JSON.stringify({ f: FORMAT, v: table.version, b: rows, c: checksum(table.version, rows) });
}

export function decodeBlocks(text: string): StoredBlocks | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const value = parsed as { f?: unknown; v?: unknown; b?: unknown; c?: unknown };
  if (value.f !== FORMAT || typeof value.v !== "string" || !Array.isArray(value.b)) return null;
  // JSON.stringify of what JSON.parse read from JSON.stringify's own text is that text again.
  if (value.c !== checksum(value.v, value.b)) return null;
  const blocks: StoredBlocks["blocks"] = [];
  for (const row of value.b as unknown[]) {
    if (!Array.isArray(row) || (row.length !== 13 && row.length !== 15)) return null;
    const numbers = row.slice(0, 13);
    if (!numbers.every((n) => Number.isSafeInteger(n))) return null;
    const [start, count, bytes, kinds, lastChange, h0, h1, k0, k1, deflatedBytes, crc, size, zcrc] = numbers as Numbers;
    let checkpoint: Checkpoint | undefined;
    if (row.length === 15) {
      const [wcrc, deflated] = row.slice(13) as [unknown, unknown];
      const bytesOf = typeof deflated === "string" ? fromBase64(deflated) : null;
      if (!Number.isSafeInteger(wcrc) || bytesOf === null) return null;
      checkpoint = { crc: wcrc as number, deflated: bytesOf };
    }
    blocks.push({
      start,
      count,
      bytes,
      kinds,
      lastChange,
      hash: [h0, h1],
      keys: [k0, k1],
      deflatedBytes,
      crc,
      size,
      zcrc,
      ...(checkpoint ? { checkpoint } : {}),
    });
  }
  return { version: value.v, blocks };
}

/** CRC-32 of the table's version and rows as JSON. */
function checksum(version: string, rows: unknown[]): number {
  return crc32(JSON.stringify([version, rows]));
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  // In slices: String.fromCharCode takes its bytes as arguments.
  for (let i = 0; i < bytes.byteLength; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
