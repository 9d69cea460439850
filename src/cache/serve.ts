/**
 * Serving a sitemap document with exact HTTP semantics, generic over "a document with a version"
 * (shards, the index, other formats):
 *
 *   validators (per-site strong ETag per representation, Last-Modified)
 *   → conditional request (304, no body, nothing read)
 *   → HEAD (same headers, no body)
 *   → edge cache hit (no D1, no KV)
 *   → snapshot (pre-rendered gzip from KV; identity through DecompressionStream)
 *   → live render
 *
 * and, for the last two, a copy into the edge cache once the body completed. `X-Sitemap-Source`
 * says which of cache / snapshot / live produced the body.
 */
import type { Config } from "../config.ts";
import { gzip } from "../core/render.ts";
import { type ShardFile } from "../http/paths.ts";
import { chooseRepresentation, sitemapHeaders } from "../http/respond.ts";
import type { SnapshotStore } from "../snapshots/store.ts";
import { isNotModified, notModifiedResponse } from "./conditional.ts";
import { edgeKey, edgeMatch, storeWhenComplete } from "./edge.ts";
import { documentCacheControl, documentEtag } from "./headers.ts";

export interface SitemapDocument {
  /** The site (request origin, a configured site). */
  origin: string;
  /** Canonical path of the document: the edge cache key's path. */
  path: string;
  /** `xml` negotiates gzip/identity; `xml.gz` is a gzip file. */
  file: ShardFile;
  /** Content version: ETags and cache keys derive from it. */
  version: string;
  /** Newest change in the document (ms): Last-Modified. */
  lastChange: number;
  /** Cache-Tag values (site, section, shard …). */
  tags: readonly string[];
  /** Key of the pre-rendered gzip bytes of exactly `version`, when stored. */
  snapshot?: string | null;
  /** Identity media type; default `application/xml; charset=utf-8`. */
  contentType?: string;
  /** Live render (identity bytes). Called only when neither cache nor snapshot answers. */
  render: () => ReadableStream<Uint8Array>;
}

export interface ServeContext {
  request: Request;
  config: Config;
  snapshots: SnapshotStore | null;
  waitUntil: (promise: Promise<unknown>) => void;
}

export type BodySource = "cache" | "snapshot" | "live";

export async function serveDocument(ctx: ServeContext, doc: SitemapDocument): Promise<Response> {
  const { request, config } = ctx;
  const representation = chooseRepresentation(request, doc.file);
  const headers = sitemapHeaders({ version: doc.version, lastChange: doc.lastChange, file: doc.file }, representation);
  const etag = documentEtag(doc.origin, doc.version, representation);
  headers.set("ETag", etag);
  headers.set("Cache-Control", documentCacheControl(config.cache));
  if (doc.tags.length > 0) headers.set("Cache-Tag", doc.tags.join(","));
  if (doc.contentType && representation !== "file") headers.set("Content-Type", doc.contentType);

  if (isNotModified(request.headers, etag, doc.lastChange)) return notModifiedResponse(headers);
  if (request.method === "HEAD") return new Response(null, { status: 200, headers });

  const encodeBody = representation === "gzip" ? "manual" : "automatic";
  const key = edgeKey(doc.origin, doc.path, representation, doc.version);
  const ttl = config.cache.edgeTtl;
  if (ttl > 0) {
    const hit = await edgeMatch(key);
    if (hit) {
      headers.set("X-Sitemap-Source", "cache");
      return new Response(hit, { status: 200, headers, encodeBody });
    }
  }

  let body: ReadableStream<Uint8Array> | null = null;
  let source: BodySource = "snapshot";
  if (doc.snapshot && ctx.snapshots) {
    const gz = await ctx.snapshots.get(doc.snapshot).catch((err: unknown) => {
      console.error("snapshot read failed; rendering live", err);
      return null;
    });
    if (gz) body = representation === "identity" ? gz.pipeThrough(new DecompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>) : gz;
  }
  if (!body) {
    source = "live";
    const xml = doc.render();
    body = representation === "identity" ? xml : gzip(xml);
  }
  headers.set("X-Sitemap-Source", source);
  return new Response(storeWhenComplete(ctx.waitUntil, key, body, ttl), { status: 200, headers, encodeBody });
}
