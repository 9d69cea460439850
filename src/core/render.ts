/**
 * Document renderers: an async sequence of records in, a `ReadableStream` of UTF-8 chunks out.
 *
 * Pull-based: a chunk is built only when the consumer asks for one, so memory holds at most one
 * chunk (~32 KiB) however large the document, and a slow client slows the source down instead of
 * filling memory. Limits are enforced while streaming: a document that would break one errors the
 * stream (a broken transfer) rather than ending as a valid-looking but wrong file.
 */
import type { BlockCutter } from "./block-plan.ts";
import { EmptySitemapError, SitemapLimitError } from "./errors.ts";
import { utf8Length } from "./escape.ts";
import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, RENDER_CHUNK_BYTES } from "./limits.ts";
import { type Source, SourceReader } from "./source.ts";
import type { SitemapRef, StoredRecord, UrlRecord, UrlRow } from "./types.ts";
import {
  type RenderOptions,
  SITEMAPINDEX_CLOSE,
  URLSET_CLOSE,
  sitemapElement,
  sitemapIndexOpen,
  urlElement,
  urlRowElement,
  urlsetOpen,
} from "./writers.ts";

export interface RenderLimits {
  maxUrls?: number;
  maxBytes?: number;
  /**
   * What a record past a limit does: "error" (the default) errors the stream; "end" ends the
   * document before it, valid and within the limits, the rest left out (a pinned shard's rendering,
   * whose rows past its limits are the ones written after the index listing it was read).
   */
  overflow?: "error" | "end";
}

/**
 * A shard rendered in blocks (core/block-plan.ts): `blocks` cuts its rows, and the document's
 * chunks never straddle a block's end, so the gzip of its bytes can deflate block by block
 * (core/gzip-blocks.ts) without parsing them.
 */
export interface RenderBlocks {
  blocks?: BlockCutter;
}

/**
 * A rendered document. `blockCuts`, when rendered in blocks: the byte offset where each block but
 * the last ends, pushed before the chunk that ends there is enqueued (an empty block repeats its
 * predecessor's offset).
 */
export type RenderedXml = ReadableStream<Uint8Array> & { readonly blockCuts?: readonly number[] };

const encoder = new TextEncoder();

interface DocumentSpec<T> {
  head: string;
  tail: string;
  element: (item: T) => string;
  kind: "urlset" | "sitemapindex";
  /** The stable key of an item, when its rows are cut in blocks. */
  keyOf?: (item: T) => number;
}

function renderDocument<T>(items: Source<T>, spec: DocumentSpec<T>, limits: RenderLimits & RenderBlocks): RenderedXml {
  const maxEntries = Math.min(limits.maxUrls ?? MAX_URLS_PER_SITEMAP, MAX_URLS_PER_SITEMAP);
  const maxBytes = Math.min(limits.maxBytes ?? MAX_SITEMAP_BYTES, MAX_SITEMAP_BYTES);
  // Read without an `await` per record where the source allows it (source.ts).
  const reader = new SourceReader(items);
  const ends = limits.overflow === "end";
  const tailBytes = utf8Length(spec.tail);
  let entries = 0;
  let bytes = 0;
  let started = false;
  const cutter = spec.keyOf ? limits.blocks : undefined;
  const cuts: number[] = [];

  const emit = (controller: ReadableStreamDefaultController<Uint8Array>, text: string, blocksEnded = 0): void => {
    const chunk = encoder.encode(text);
    bytes += chunk.byteLength;
    if (bytes > maxBytes) {
      throw new SitemapLimitError("bytes", maxBytes, `${spec.kind} exceeds ${maxBytes} bytes`);
    }
    for (let i = 0; i < blocksEnded; i++) cuts.push(bytes);
    if (chunk.byteLength > 0) controller.enqueue(chunk);
  };

  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Join parts once per chunk: cheaper than growing one string element by element.
        const parts: string[] = [];
        let size = 0;
        // UTF-8 bytes of `parts`, counted only when a record past a limit ends the document.
        let partBytes = 0;
        if (!started) {
          started = true;
          parts.push(spec.head);
          size += spec.head.length;
          if (ends) partBytes += utf8Length(spec.head);
        }
        const end = async (): Promise<void> => {
          if (entries === 0) throw new EmptySitemapError(`refusing to emit an empty ${spec.kind}`);
          parts.push(spec.tail);
          emit(controller, parts.join(""));
          controller.close();
        };
        while (size < RENDER_CHUNK_BYTES) {
          const read = reader.next();
          const next = read instanceof Promise ? await read : read;
          if (next.done) return end();
          if (ends && entries >= maxEntries) {
            await reader.return();
            return end();
          }
          const blocksEnded = cutter ? cutter.next(spec.keyOf!(next.value)) : 0;
          if (blocksEnded > 0) {
            // The blocks before this item end here: their bytes go out as one chunk of their own.
            emit(controller, parts.join(""), blocksEnded);
            parts.length = 0;
            size = 0;
            partBytes = 0;
          }
          const xml = spec.element(next.value);
          if (ends) {
            const xmlBytes = utf8Length(xml);
            if (bytes + partBytes + xmlBytes + tailBytes > maxBytes) {
              await reader.return();
              return end();
            }
            partBytes += xmlBytes;
          }
          if (++entries > maxEntries) {
            throw new SitemapLimitError("urls", maxEntries, `${spec.kind} exceeds ${maxEntries} entries`);
          }
          parts.push(xml);
          size += xml.length;
        }
        emit(controller, parts.join(""));
      },
      async cancel() {
        await reader.return();
      },
    },
    { highWaterMark: 1 },
  );
  return cutter ? Object.assign(stream, { blockCuts: cuts as readonly number[] }) : stream;
}

/** `<urlset>` of the given records. Errors the stream on an empty set, and on a broken limit unless `overflow` is "end". */
export function renderUrlset(records: Source<UrlRecord>, options: RenderOptions & RenderLimits & RenderBlocks = {}): RenderedXml {
  return renderDocument(
    records,
    {
      head: urlsetOpen(options.namespaces ?? 0, options.stylesheet ?? false),
      tail: URLSET_CLOSE,
      element: (r) => urlElement(r, options),
      kind: "urlset",
      // Blocks cut stored records (a key each); plain records are never rendered in blocks.
      keyOf: (r) => (r as Partial<StoredRecord>).key ?? Number.NaN,
    },
    options,
  );
}

/** The same `<urlset>` from a store's row arrays (core/types.ts UrlRow): no record objects built. */
export function renderUrlRows(rows: Source<UrlRow>, options: RenderOptions & RenderLimits & RenderBlocks = {}): RenderedXml {
  return renderDocument(
    rows,
    {
      head: urlsetOpen(options.namespaces ?? 0, options.stylesheet ?? false),
      tail: URLSET_CLOSE,
      element: (r) => urlRowElement(r, options),
      kind: "urlset",
      keyOf: (r) => r[0],
    },
    options,
  );
}

/** `<sitemapindex>` of the given sitemap references (`stylesheet`: link the browser view). */
export function renderSitemapIndex(refs: Source<SitemapRef>, limits: RenderLimits & { stylesheet?: boolean } = {}): ReadableStream<Uint8Array> {
  return renderDocument(
    refs,
    { head: sitemapIndexOpen(limits.stylesheet ?? false), tail: SITEMAPINDEX_CLOSE, element: sitemapElement, kind: "sitemapindex" },
    limits,
  );
}
