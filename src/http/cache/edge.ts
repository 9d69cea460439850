/**
 * The edge cache layer: the per-location Cache API (`caches.default`), in front of snapshots and
 * live rendering. Keys are normalised and versioned: site origin and registration + canonical path +
 * representation + content version (built by src/documents/cache-keys.ts). Query strings and request headers never reach the key (so
 * `?x=1` cannot fill the cache with copies), another site's key is another origin, and a new
 * version is a new key: changed data makes old entries unreachable without a purge.
 *
 * Only complete documents are stored: a copy is taken while the body streams to the client and
 * put in `waitUntil` only once the body ended without error. (The Cache API itself would keep a
 * partial body: a stream that errors midway is stored truncated.)
 */
import { concatBytes } from "../../core/bytes.ts";
import { type CachedSite, cacheKey } from "../../documents/cache-keys.ts";
import type { Representation } from "../encoding.ts";

/** Larger bodies are served but not copied into the cache (the copy is held in memory). */
const EDGE_CACHE_MAX_BYTES = 32 * 1024 * 1024;

function edgeCache(): Cache | null {
  // Workers' CacheStorage has `default`; the cast keeps this module type-checking under DOM types too.
  return typeof caches === "undefined" ? null : (caches as unknown as { default: Cache }).default;
}

/** `https://example.com/sitemap-pages-1.xml?edge-sitemaps=doc.<registration>.g.<version>`: one entry per representation and version. */
export function edgeKey(site: CachedSite, path: string, representation: Representation, version: string): string {
  return cacheKey(site, path, "doc", representation[0]!, version);
}

/** The cached body of a key, or null. */
export async function edgeMatch(key: string): Promise<{ body: ReadableStream<Uint8Array>; length: number | null } | null> {
  const cache = edgeCache();
  if (!cache) return null;
  const hit = await cache.match(new Request(key));
  if (hit?.status !== 200 || !hit.body) return null;
  // The stored copy's length, sent on: a body of known length goes out in one piece, not chunked.
  const length = hit.headers.get("Content-Length");
  return { body: hit.body as ReadableStream<Uint8Array>, length: length !== null && /^\d+$/.test(length) ? Number(length) : null };
}

/**
 * Returns the stream to send; a copy of it is stored under `key` (for `ttl` seconds) once, and
 * only if, the whole body went through without error. The copy is taken by a pass-through
 * transform (not `tee()`, whose branches do not reliably both see an upstream error here): its
 * `flush` runs only after the last chunk of a body that ended normally; an error or a cancelled
 * transfer never reaches it.
 */
export function storeWhenComplete(
  waitUntil: (promise: Promise<unknown>) => void,
  key: string,
  body: ReadableStream<Uint8Array>,
  ttl: number,
): ReadableStream<Uint8Array> {
  const cache = edgeCache();
  if (!cache || ttl <= 0) return body;
  let chunks: Uint8Array[] | null = [];
  let size = 0;
  const tap = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (chunks) {
        size += chunk.byteLength;
        if (size > EDGE_CACHE_MAX_BYTES) {
          chunks = null; // served, but too large to copy
        } else {
          chunks.push(chunk.slice());
        }
      }
      controller.enqueue(chunk);
    },
    flush() {
      if (!chunks) return;
      const bytes = concatBytes(chunks, size);
      chunks = null;
      waitUntil(
        cache
          .put(new Request(key), new Response(bytes, { headers: { "Cache-Control": `public, max-age=${ttl}` } }))
          .catch((err: unknown) => console.error("edge cache put failed", err)),
      );
    },
  });
  return body.pipeThrough(tap);
}
