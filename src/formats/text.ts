/**
 * Text sitemaps (sitemaps.org "Text file"): one absolute URL per line, UTF-8, nothing else, the
 * same limits as XML (≤ 50,000 URLs, ≤ 50 MB). Served for every shard as
 * `/sitemap-{section}-{n}.txt`: the same records as the `.xml`, so the lines are exactly its `<loc>`s,
 * unescaped. Streamed pull-based like the XML renderer; a broken limit or an empty shard errors the
 * stream instead of ending it as a wrong file.
 */
import { EmptySitemapError, SitemapLimitError } from "../core/errors.ts";
import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, RENDER_CHUNK_BYTES } from "../core/limits.ts";
import { type Source, SourceReader } from "../core/source.ts";
import type { UrlRecord } from "../core/types.ts";

const encoder = new TextEncoder();

export function renderTextSitemap(records: Source<UrlRecord>, limits: { maxUrls?: number; maxBytes?: number } = {}): ReadableStream<Uint8Array> {
  const maxUrls = Math.min(limits.maxUrls ?? MAX_URLS_PER_SITEMAP, MAX_URLS_PER_SITEMAP);
  const maxBytes = Math.min(limits.maxBytes ?? MAX_SITEMAP_BYTES, MAX_SITEMAP_BYTES);
  const reader = new SourceReader(records);
  let lines = 0;
  let bytes = 0;
  const emit = (controller: ReadableStreamDefaultController<Uint8Array>, text: string): void => {
    const chunk = encoder.encode(text);
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw new SitemapLimitError("bytes", maxBytes, `text sitemap exceeds ${maxBytes} bytes`);
    controller.enqueue(chunk);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let text = "";
        while (text.length < RENDER_CHUNK_BYTES) {
          const read = reader.next();
          const next = read instanceof Promise ? await read : read;
          if (next.done) {
            if (lines === 0) throw new EmptySitemapError("refusing to emit an empty text sitemap");
            if (text) emit(controller, text);
            controller.close();
            return;
          }
          if (++lines > maxUrls) throw new SitemapLimitError("urls", maxUrls, `text sitemap exceeds ${maxUrls} URLs`);
          text += `${next.value.loc}\n`;
        }
        emit(controller, text);
      },
      async cancel() {
        await reader.return();
      },
    },
    { highWaterMark: 1 },
  );
}
