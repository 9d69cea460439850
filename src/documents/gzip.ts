/**
 * How a document's bytes are gzipped, the same way wherever they are (a live response, a stored
 * snapshot): a shard rendered in blocks (core/render.ts `blockCuts`) as deflate blocks
 * (core/gzip-blocks.ts, node:zlib: src/snapshots/block-deflate.ts), so that its stored file can be
 * spliced block by block and a live render sends the very bytes a snapshot holds (one ETag, one
 * body); any other document through the platform's CompressionStream.
 */
import { type BlockLayout, blockGzipStream } from "../core/gzip-blocks.ts";
import type { RenderedXml } from "../core/render.ts";
import { zlibBlockDeflate } from "../snapshots/block-deflate.ts";

/** The gzip of `xml`; `cuts`: its block ends when rendered in blocks (default: the stream's own). */
export function gzipDocument(
  xml: ReadableStream<Uint8Array>,
  cuts: readonly number[] | undefined = (xml as RenderedXml).blockCuts,
  onBlock?: (layout: BlockLayout) => void,
): ReadableStream<Uint8Array> {
  if (cuts === undefined) return xml.pipeThrough(new CompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
  return xml.pipeThrough(blockGzipStream(cuts, zlibBlockDeflate, onBlock));
}
