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
 * is: its bytes come back from the stored file; more only while the blocks after it are smaller
 * than the 32 KiB window) and a splice of the stored bytes: the other blocks are copied as they
 * are, and the result is byte for byte what building the file from scratch gives. To read a stored
 * block back, its dictionary must be known, which is the block before it read back, and so on: so
 * every CHECKPOINT_EVERY-th block's layout keeps its dictionary (deflated alone, ~5 KB), and a
 * splice inflates from the nearest checkpoint before its change, never from the file's start.
 *
 * Pure: the deflate itself is handed in (RawDeflate; node:zlib in workerd and Node,
 * src/snapshots/block-deflate.ts), as CompressionStream cannot end a stream without its final bit.
 */

import { concatBytes } from "./bytes.ts";
import { crc32Combine } from "./crc32-combine.ts";

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

/**
 * Blocks between two that keep their dictionary (a checkpoint): a splice inflates at most this many
 * stored blocks before its change (~0.45 ms each for 1,000 URLs) instead of every one before it.
 */
export const CHECKPOINT_EVERY = 8;

/** The 32 KiB of document before a block (its dictionary), deflated on its own, and the CRC-32 of those bytes. */
export interface Checkpoint {
  deflated: Uint8Array;
  crc: number;
}

/**
 * One block of a stored file as its table describes it: where its bytes end (their length), what
 * the trailer needs of its document bytes, a CRC-32 of the stored bytes themselves (so a block
 * copied into a spliced file unread is still checked), and on every CHECKPOINT_EVERY-th block its
 * dictionary.
 */
export interface BlockLayout {
  deflatedBytes: number;
  /** CRC-32 of the block's document bytes. */
  crc: number;
  /** Length of the block's document bytes. */
  size: number;
  /** CRC-32 of the block's deflated (stored) bytes. */
  zcrc: number;
  checkpoint?: Checkpoint;
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
function deflateBlock(xml: Uint8Array, preceding: Uint8Array | null, codec: RawDeflate): DeflatedBlock {
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
  #bytes: Uint8Array = new Uint8Array(0);

  /** A window that starts as `bytes` (a checkpoint's: at most 32 KiB). */
  static of(bytes: Uint8Array): DeflateWindow {
    const window = new DeflateWindow();
    window.#bytes = bytes;
    return window;
  }

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

/** A block's layout without a checkpoint. */
function plainLayout(block: DeflatedBlock, codec: RawDeflate): BlockLayout {
  return { deflatedBytes: block.deflated.byteLength, crc: block.crc, size: block.size, zcrc: codec.crc32(block.deflated) };
}

/** The layout of block number `index` of a file, deflated after the document bytes `window` (DeflateWindow's). */
function layoutOf(block: DeflatedBlock, index: number, window: Uint8Array, codec: RawDeflate): BlockLayout {
  const layout = plainLayout(block, codec);
  return index > 0 && index % CHECKPOINT_EVERY === 0 ? { ...layout, checkpoint: checkpointOf(window, codec) } : layout;
}

function checkpointOf(window: Uint8Array, codec: RawDeflate): Checkpoint {
  return { deflated: codec.deflate(window, null), crc: codec.crc32(window) };
}

/** A checkpoint's document bytes, or null when they are not the ones it was made of. */
function checkpointText(checkpoint: Checkpoint, codec: RawDeflate): Uint8Array | null {
  try {
    const text = codec.inflate(checkpoint.deflated, null);
    return text.byteLength <= BLOCK_DICTIONARY_BYTES && codec.crc32(text) === checkpoint.crc ? text : null;
  } catch {
    return null;
  }
}

/** The blocks of a whole document, each primed by the document's last 32 KiB before it, and their layouts. */
export function deflateBlocks(slices: readonly Uint8Array[], codec: RawDeflate): { blocks: DeflatedBlock[]; layouts: BlockLayout[] } {
  const window = new DeflateWindow();
  const layouts: BlockLayout[] = [];
  const blocks = slices.map((xml, i) => {
    const block = deflateBlock(xml, window.bytes, codec);
    layouts.push(layoutOf(block, i, window.bytes, codec));
    window.push(xml);
    return block;
  });
  return { blocks, layouts };
}

/** The gzip file of `blocks`, as chunks in order (header, each block, final block and trailer). */
function gzipChunks(blocks: readonly Pick<DeflatedBlock, "deflated" | "crc" | "size">[]): Uint8Array[] {
  return [HEADER, ...blocks.map((b) => b.deflated), trailer(blocks)];
}

/** The same as one array. */
export function gzipOfBlocks(blocks: readonly Pick<DeflatedBlock, "deflated" | "crc" | "size">[]): Uint8Array {
  return concatBytes(gzipChunks(blocks));
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

/**
 * The gzip of a document rendered in blocks (core/render.ts `blockCuts`: where each block but the
 * last ends), deflated block by block as its bytes arrive: the same file gzipOfBlocks makes of its
 * slices. Holds one block's bytes at a time (about BLOCK_ROWS URLs). `onBlock` gets each block's
 * layout (in order), for the snapshot's block table.
 */
export function blockGzipStream(
  cuts: readonly number[],
  codec: RawDeflate,
  onBlock?: (layout: BlockLayout) => void,
): TransformStream<Uint8Array, Uint8Array> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  /** Document bytes before the block being filled. */
  let done = 0;
  let cut = 0;
  const window = new DeflateWindow();
  let crc = 0;
  let size = 0;
  let index = 0;
  const endBlock = (controller: TransformStreamDefaultController<Uint8Array>): void => {
    const xml = concatBytes(pending, pendingBytes);
    const block = deflateBlock(xml, window.bytes, codec);
    onBlock?.(layoutOf(block, index++, window.bytes, codec));
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
 * document bytes of the block or blocks that take its place), in one pass, and their layouts. Each
 * new block is deflated with the new document's last 32 KiB before it. From the nearest checkpoint
 * before a change, stored blocks are inflated in order (their windows are needed) and checked
 * against `stored` (CRC-32, length); a kept block is copied while the 32 KiB before it are what
 * they were, else re-deflated from its stored bytes; once the windows agree again, blocks are
 * copied unread, each checked by its stored bytes' CRC-32 (and its checkpoint by its own). null when any check fails, so a damaged
 * stored file is never carried into a new one (the caller renders the shard whole, which heals
 * it) nor re-deflated into one that reads fine. The file is byte for byte the one deflateBlocks
 * makes of the new document's slices; so are the layouts, but for checkpoints: a block that takes
 * a stored block's place takes its checkpoint (refreshed when its window changed), so the ones
 * after a block split in two stay where they were.
 */
export function spliceFile(
  spans: readonly Uint8Array[],
  stored: readonly BlockLayout[],
  replaced: ReadonlyMap<number, readonly Uint8Array[]>,
  codec: RawDeflate,
): { blocks: DeflatedBlock[]; layouts: BlockLayout[] } | null {
  const changes = [...replaced.keys()].sort((a, b) => a - b);
  /** Where reading back must start for the change at `t`: the nearest block at or before it whose window is known. */
  const startOf = (t: number): number => {
    let c = t;
    while (c > 0 && stored[c]!.checkpoint === undefined) c--;
    return c;
  };
  const blocks: DeflatedBlock[] = [];
  const layouts: BlockLayout[] = [];
  /** Stored block `j` into the new file as it is, its checkpoint checked first (nothing damaged is carried into the table); false: damaged. */
  const keep = (j: number): boolean => {
    const was = stored[j]!;
    if (was.checkpoint && checkpointText(was.checkpoint, codec) === null) return false;
    blocks.push({ deflated: spans[j]!, crc: was.crc, size: was.size });
    layouts.push(was);
    return true;
  };
  /** The old and the new document's windows while blocks are read back; null while they agree and none is needed. */
  let windows: { old: DeflateWindow; new: DeflateWindow } | null = null;
  for (let j = 0; j < spans.length; j++) {
    const span = spans[j]!;
    const was = stored[j]!;
    if (windows === null && changes.some((t) => t >= j && startOf(t) === j)) {
      const text = j === 0 ? new Uint8Array(0) : checkpointText(was.checkpoint!, codec);
      if (text === null) return null;
      windows = { old: DeflateWindow.of(text), new: DeflateWindow.of(text) };
    }
    if (windows === null) {
      // Copied unread: its stored bytes checked by their CRC-32.
      if (codec.crc32(span) !== was.zcrc || !keep(j)) return null;
      continue;
    }
    let oldText: Uint8Array;
    try {
      oldText = codec.inflate(span, dictionaryOf(windows.old.bytes));
    } catch {
      return null;
    }
    if (oldText.byteLength !== was.size || codec.crc32(oldText) !== was.crc || codec.crc32(span) !== was.zcrc) return null;
    // A stored block's checkpoint goes to the block in its place, made again if its window changed.
    const checkpoint = (layout: BlockLayout, keeps: boolean): BlockLayout => {
      if (!keeps || was.checkpoint === undefined) return layout;
      return { ...layout, checkpoint: sameBytes(windows!.old.bytes, windows!.new.bytes) ? was.checkpoint : checkpointOf(windows!.new.bytes, codec) };
    };
    const texts = replaced.get(j);
    if (texts) {
      texts.forEach((text, k) => {
        const block = deflateBlock(text, windows!.new.bytes, codec);
        blocks.push(block);
        layouts.push(checkpoint(plainLayout(block, codec), k === 0));
        windows!.new.push(text);
      });
    } else if (sameBytes(windows.old.bytes, windows.new.bytes)) {
      if (!keep(j)) return null;
      windows.new.push(oldText);
    } else {
      const block = deflateBlock(oldText, windows.new.bytes, codec);
      blocks.push(block);
      layouts.push(checkpoint(plainLayout(block, codec), true));
      windows.new.push(oldText);
    }
    windows.old.push(oldText);
    // Stop reading back once the windows agree again, unless a later change starts from here on.
    const next = changes.find((t) => t > j);
    if (sameBytes(windows.old.bytes, windows.new.bytes) && (next === undefined || startOf(next) > j)) windows = null;
  }
  return { blocks, layouts };
}
