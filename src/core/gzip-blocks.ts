/**
 * A gzip file made of independently replaceable deflate blocks (issue 53, "blocks"). Each block is
 * the raw deflate of one slice of the document, ended by a full flush (byte-aligned, not final,
 * the compressor's state reset), and primed with the document's last 32 KiB before it as its
 * dictionary, so it compresses almost as well as one stream (+0.1 % measured) while depending on
 * nothing but its own bytes and the 32 KiB before them. The file is one gzip member: a fixed
 * 10-byte header, the blocks in order, an empty final block, then the CRC-32 of the whole document
 * (combined from the blocks' own, crc32Combine) and its length (the blocks' summed). Any gunzip
 * reads it, DecompressionStream included.
 *
 * So a change to one slice costs two deflates (its block, and the next one, whose dictionary it
 * is: its bytes come back from the stored file, blockText; more only while the blocks after it are
 * smaller than the 32 KiB window) and a splice of the stored bytes: the other blocks are copied as
 * they are, and the result is byte for byte what building the file from scratch gives.
 *
 * Pure: the deflate itself is handed in (RawDeflate; node:zlib in workerd and Node,
 * src/snapshots/block-deflate.ts), as CompressionStream cannot end a stream without its final bit.
 */

import { concatBytes } from "./bytes.ts";

/** What the codec needs of a deflate implementation. */
export interface RawDeflate {
  /** Raw deflate (level 6) of `input` primed with `dictionary`, ended by a full flush, never final. */
  deflate(input: Uint8Array, dictionary: Uint8Array | null): Uint8Array;
  /** The document bytes of one such block, primed with the same dictionary. */
  inflate(deflated: Uint8Array, dictionary: Uint8Array | null): Uint8Array;
  crc32(input: Uint8Array): number;
}

/** Deflate's window: the most of the previous block a dictionary can use. */
const BLOCK_DICTIONARY_BYTES = 32 * 1024;

/** One block as stored: its deflated bytes and what the trailer needs of its document bytes. */
export interface DeflatedBlock {
  deflated: Uint8Array;
  /** CRC-32 of the block's document bytes. */
  crc: number;
  /** Length of the block's document bytes. */
  size: number;
}

/** gzip header: magic, deflate, no flags, no mtime, no extra flags, OS unknown (the same bytes everywhere). */
const HEADER = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
const GZIP_HEADER_BYTES = HEADER.byteLength;
/** An empty final block (fixed Huffman, end of block): what ends the deflate stream after the last full flush. */
const FINAL_BLOCK = new Uint8Array([0x03, 0x00]);

/**
 * The block of `xml`, primed with the document bytes before it (`preceding`: all of them, or at
 * least their last 32 KiB, as DeflateWindow keeps them; null or empty: the first block).
 */
export function deflateBlock(xml: Uint8Array, preceding: Uint8Array | null, codec: RawDeflate): DeflatedBlock {
  return { deflated: codec.deflate(xml, dictionaryOf(preceding)), crc: codec.crc32(xml), size: xml.byteLength };
}

function dictionaryOf(preceding: Uint8Array | null): Uint8Array | null {
  return preceding === null || preceding.byteLength === 0 ? null : preceding.subarray(Math.max(0, preceding.byteLength - BLOCK_DICTIONARY_BYTES));
}

/**
 * The last 32 KiB of a document so far: the next block's dictionary. Across blocks, not just the
 * previous one, so a block after a small or emptied one is primed as fully as one stream would be.
 */
class DeflateWindow {
  #bytes = new Uint8Array(0);

  push(text: Uint8Array): void {
    if (text.byteLength >= BLOCK_DICTIONARY_BYTES) {
      this.#bytes = text.slice(text.byteLength - BLOCK_DICTIONARY_BYTES);
      return;
    }
    const keep = Math.min(this.#bytes.byteLength, BLOCK_DICTIONARY_BYTES - text.byteLength);
    const next = new Uint8Array(keep + text.byteLength);
    next.set(this.#bytes.subarray(this.#bytes.byteLength - keep));
    next.set(text, keep);
    this.#bytes = next;
  }

  /** The window (empty at the start of a document). */
  get bytes(): Uint8Array {
    return this.#bytes;
  }
}

/** Whether two byte arrays are equal. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The document bytes of stored block `i`, given the document bytes before it (or only their last
 * 32 KiB: all a dictionary uses). So a block after a changed one is re-primed from the stored
 * file, its rows never read again.
 */
export function blockText(file: Uint8Array, table: BlockTable, i: number, preceding: Uint8Array | null, codec: RawDeflate): Uint8Array {
  let at = GZIP_HEADER_BYTES;
  for (let j = 0; j < i; j++) at += table.deflatedBytes[j]!;
  return codec.inflate(file.subarray(at, at + table.deflatedBytes[i]!), dictionaryOf(preceding));
}

/** The blocks of a whole document, each primed by the document's last 32 KiB before it. */
export function deflateBlocks(slices: readonly Uint8Array[], codec: RawDeflate): DeflatedBlock[] {
  const window = new DeflateWindow();
  return slices.map((xml) => {
    const block = deflateBlock(xml, window.bytes, codec);
    window.push(xml);
    return block;
  });
}

/** The gzip file of `blocks`, as chunks in order (header, each block, final block and trailer). */
function gzipChunks(blocks: readonly Pick<DeflatedBlock, "deflated" | "crc" | "size">[]): Uint8Array[] {
  return [HEADER, ...blocks.map((b) => b.deflated), trailer(blocks)];
}

/** The same as one array. */
export function gzipOfBlocks(blocks: readonly Pick<DeflatedBlock, "deflated" | "crc" | "size">[]): Uint8Array {
  return concatBytes(gzipChunks(blocks));
}

/** Where each block's deflated bytes sit in a stored file, and what its trailer was made of. */
export interface BlockTable {
  /** Deflated bytes of each block, in order. */
  deflatedBytes: readonly number[];
  crcs: readonly number[];
  sizes: readonly number[];
}

export function blockTable(blocks: readonly DeflatedBlock[]): BlockTable {
  return { deflatedBytes: blocks.map((b) => b.deflated.byteLength), crcs: blocks.map((b) => b.crc), sizes: blocks.map((b) => b.size) };
}

/**
 * A stored file with some blocks replaced (by index; the count of blocks stays: block ranges are
 * fixed when the shard is planned). The other blocks' bytes are copied from `file` untouched.
 * The caller re-deflates every block whose document bytes changed and each one whose dictionary
 * (the 32 KiB before it) changed: then the result equals gzipOfBlocks of the new blocks, byte for byte.
 */
export function spliceBlocks(file: Uint8Array, table: BlockTable, replaced: ReadonlyMap<number, DeflatedBlock>): { file: Uint8Array; table: BlockTable } {
  const count = table.deflatedBytes.length;
  for (const i of replaced.keys()) if (!(i >= 0 && i < count)) throw new RangeError(`block ${i} is not one of the file's ${count}`);
  const blocks: Pick<DeflatedBlock, "deflated" | "crc" | "size">[] = [];
  let at = GZIP_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const length = table.deflatedBytes[i]!;
    blocks.push(replaced.get(i) ?? { deflated: file.subarray(at, at + length), crc: table.crcs[i]!, size: table.sizes[i]! });
    at += length;
  }
  if (at + FINAL_BLOCK.byteLength + 8 !== file.byteLength)
    throw new RangeError(`the block table does not describe this file (${at} + 10 bytes against ${file.byteLength})`);
  return {
    file: gzipOfBlocks(blocks),
    table: { deflatedBytes: blocks.map((b) => b.deflated.byteLength), crcs: blocks.map((b) => b.crc), sizes: blocks.map((b) => b.size) },
  };
}

/** The final block, then CRC-32 and length (mod 2³²) of the whole document, little-endian. */
function trailer(blocks: readonly Pick<DeflatedBlock, "crc" | "size">[]): Uint8Array {
  let crc = 0;
  let size = 0;
  for (const b of blocks) {
    crc = crc32Combine(crc, b.crc, b.size);
    size = (size + b.size) % 2 ** 32;
  }
  return trailerOf(crc, size);
}

/** The final block, then a document's CRC-32 and length (mod 2³²), little-endian. */
function trailerOf(crc: number, size: number): Uint8Array {
  const out = new Uint8Array(FINAL_BLOCK.byteLength + 8);
  out.set(FINAL_BLOCK);
  const view = new DataView(out.buffer);
  view.setUint32(FINAL_BLOCK.byteLength, crc >>> 0, true);
  view.setUint32(FINAL_BLOCK.byteLength + 4, size, true);
  return out;
}

// CRC-32 combination, as zlib's crc32_combine (1.2.12 and later): polynomials over GF(2), reflected.
const POLY = 0xedb88320;

/** a(x)·b(x) modulo the CRC polynomial. */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  let bb = b >>> 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= bb;
      if ((a & (m - 1)) === 0) break;
    }
    m = m / 2;
    bb = bb & 1 ? (bb >>> 1) ^ POLY : bb >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, k = 0…31. */
const X2N: readonly number[] = (() => {
  const table = [0x40000000];
  for (let k = 1; k < 32; k++) table.push(multModP(table[k - 1]!, table[k - 1]!));
  return table;
})();

/** x^(n·2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000;
  let left = n;
  let bit = k;
  while (left > 0) {
    if (left % 2 === 1) p = multModP(X2N[bit & 31]!, p);
    left = Math.floor(left / 2);
    bit++;
  }
  return p;
}

/** The CRC-32 of A followed by B, from crc(A), crc(B) and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA >>> 0) ^ crcB) >>> 0;
}

/**
 * The gzip of a document rendered in blocks (core/render.ts `blockCuts`: where each block but the
 * last ends), deflated block by block as its bytes arrive: the same file gzipOfBlocks makes of its
 * slices. Holds one block's bytes at a time (about BLOCK_ROWS URLs). `onBlock` sees each block as
 * stored (in order), for the snapshot's block table.
 */
export function blockGzipStream(
  cuts: readonly number[],
  codec: RawDeflate,
  onBlock?: (block: DeflatedBlock) => void,
): TransformStream<Uint8Array, Uint8Array> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  /** Document bytes before the block being filled. */
  let done = 0;
  let cut = 0;
  const window = new DeflateWindow();
  let crc = 0;
  let size = 0;
  const endBlock = (controller: TransformStreamDefaultController<Uint8Array>): void => {
    const xml = concatBytes(pending, pendingBytes);
    const block = deflateBlock(xml, window.bytes, codec);
    onBlock?.(block);
    crc = crc32Combine(crc, block.crc, block.size);
    size = (size + block.size) % 2 ** 32;
    controller.enqueue(block.deflated);
    window.push(xml);
    done += xml.byteLength;
    pending = [];
    pendingBytes = 0;
  };
  /** Ends the blocks whose end is where the bytes so far end; a cut inside them is a renderer's bug. */
  const endBlocksAt = (controller: TransformStreamDefaultController<Uint8Array>): void => {
    for (; cut < cuts.length && cuts[cut]! <= done + pendingBytes; cut++) {
      if (cuts[cut]! !== done + pendingBytes) throw new RangeError(`a block ends at byte ${cuts[cut]}, inside a chunk`);
      endBlock(controller);
    }
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    start(controller) {
      controller.enqueue(HEADER);
    },
    transform(chunk, controller) {
      // A cut may come after the chunk it ends went by (the renderer's chunk was full before the
      // row that starts the next block was read): it ends the block before this chunk.
      endBlocksAt(controller);
      pending.push(chunk);
      pendingBytes += chunk.byteLength;
      endBlocksAt(controller);
    },
    flush(controller) {
      endBlocksAt(controller);
      if (cut < cuts.length) throw new RangeError(`a block ends at byte ${cuts[cut]}, past the document's ${done + pendingBytes}`);
      endBlock(controller);
      controller.enqueue(trailerOf(crc, size));
    },
  });
}

/** Each block's deflated bytes in a stored file (views, not copies), or null when the sizes do not describe the file. */
export function blockSpans(file: Uint8Array, deflatedBytes: readonly number[]): Uint8Array[] | null {
  const spans: Uint8Array[] = [];
  let at = GZIP_HEADER_BYTES;
  for (const length of deflatedBytes) {
    spans.push(file.subarray(at, at + length));
    at += length;
  }
  const framed = file.byteLength >= GZIP_HEADER_BYTES && file.subarray(0, GZIP_HEADER_BYTES).every((b, i) => b === HEADER[i]);
  return framed && at + FINAL_BLOCK.byteLength + 8 === file.byteLength ? spans : null;
}

/** Whether a stored file's trailer is the one its blocks' CRC-32s and lengths make (its table describes its bytes). */
export function trailerMatches(file: Uint8Array, blocks: readonly Pick<DeflatedBlock, "crc" | "size">[]): boolean {
  const expected = trailer(blocks);
  return file.byteLength >= expected.byteLength && sameBytes(file.subarray(file.byteLength - expected.byteLength), expected);
}

/**
 * The blocks of a stored file after some were replaced (`replaced`: a stored block's index → the
 * document bytes of the block or blocks that take its place), in one pass: each new block deflated
 * with the new document's last 32 KiB before it; each kept block copied while the 32 KiB before it
 * are what they were, else re-deflated from its stored bytes. Every stored block is inflated in
 * order (the windows need the ones before a change; the rest are checked all the same) and checked
 * against `stored` (CRC-32, length): null when one fails, so a damaged stored file is never
 * carried into a new one (the caller renders the shard whole, which heals it) nor re-deflated into
 * one that reads fine. The result is byte for byte the file deflateBlocks makes of the new
 * document's slices.
 */
export function spliceFile(
  spans: readonly Uint8Array[],
  stored: readonly Pick<DeflatedBlock, "crc" | "size">[],
  replaced: ReadonlyMap<number, readonly Uint8Array[]>,
  codec: RawDeflate,
): DeflatedBlock[] | null {
  const oldWindow = new DeflateWindow();
  const newWindow = new DeflateWindow();
  const out: DeflatedBlock[] = [];
  for (let j = 0; j < spans.length; j++) {
    const copy = (): DeflatedBlock => ({ deflated: spans[j]!, crc: stored[j]!.crc, size: stored[j]!.size });
    let oldText: Uint8Array;
    try {
      oldText = codec.inflate(spans[j]!, dictionaryOf(oldWindow.bytes));
    } catch {
      return null;
    }
    if (oldText.byteLength !== stored[j]!.size || codec.crc32(oldText) !== stored[j]!.crc) return null;
    const texts = replaced.get(j);
    if (texts) {
      for (const text of texts) {
        out.push(deflateBlock(text, newWindow.bytes, codec));
        newWindow.push(text);
      }
    } else {
      out.push(sameBytes(oldWindow.bytes, newWindow.bytes) ? copy() : deflateBlock(oldText, newWindow.bytes, codec));
      newWindow.push(oldText);
    }
    oldWindow.push(oldText);
  }
  return out;
}
