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
 * and, for the last two, a copy into the edge cache once the body completed. The headers of every
 * answer come from src/http/document-headers.ts.
 */
import type { Config } from "../config.ts";
import { gzip } from "../core/render.ts";
import { type DocumentHeaderFields, documentEtag, documentHeaders, notModifiedHeaders, unversionedHeaders } from "../http/document-headers.ts";
import { chooseRepresentation } from "../http/encoding.ts";
import type { SnapshotStore } from "../snapshots/store.ts";
import { isNotModified } from "./conditional.ts";
import { edgeKey, edgeMatch, storeWhenComplete } from "./edge.ts";

export interface SitemapDocument extends DocumentHeaderFields {
  /** Canonical path of the document: the edge cache key's path. */
  path: string;
  /** Key of the pre-rendered gzip bytes of exactly `version`, when stored. */
  snapshot?: string | null;
  /** Live render (identity bytes). Called only when neither cache nor snapshot answers. */
  render: () => ReadableStream<Uint8Array>;
  /**
   * Before a live render: do the rows still hold exactly `version`? false (they moved on since the
   * manifest was made): the render goes out without validators and is never cached, because the
   * ETag of `version` would name other bytes. Absent: not checked.
   */
  current?: () => Promise<boolean>;
}

export interface ServeContext {
  request: Request;
  config: Config;
  snapshots: SnapshotStore | null;
  waitUntil: (promise: Promise<unknown>) => void;
}

function gunzip(): ReadableWritablePair<Uint8Array, Uint8Array> {
  return new DecompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>;
}

export async function serveDocument(ctx: ServeContext, doc: SitemapDocument): Promise<Response> {
  return (await serveWithoutRender(ctx, doc)) ?? renderDocument(ctx, doc);
}

/**
 * The answers that need no body of this request's making: 304, HEAD, an edge cache hit; null
 * otherwise. A caller that knows a version from a cached copy of its validators answers
 * repetition with this alone, before any query (src/formats/routes.ts).
 */
export async function serveWithoutRender(ctx: ServeContext, doc: Omit<SitemapDocument, "render">): Promise<Response | null> {
  const { request, config } = ctx;
  const representation = chooseRepresentation(request, doc.file);
  const etag = documentEtag(doc.origin, doc.version, representation);

  if (isNotModified(request.headers, etag, doc.lastChange)) {
    return new Response(null, { status: 304, headers: notModifiedHeaders(doc, representation, config.cache) });
  }
  if (request.method === "HEAD") {
    return new Response(null, { status: 200, headers: documentHeaders(doc, representation, config.cache, null) });
  }

  if (config.cache.edgeTtl > 0) {
    const hit = await edgeMatch(edgeKey(doc.origin, doc.path, representation, doc.version));
    const encodeBody = representation === "gzip" ? "manual" : "automatic";
    if (hit) return new Response(hit, { status: 200, headers: documentHeaders(doc, representation, config.cache, "cache"), encodeBody });
  }
  return null;
}

/** Snapshot or live render, copied into the edge cache once complete. */
async function renderDocument(ctx: ServeContext, doc: SitemapDocument): Promise<Response> {
  const { request, config } = ctx;
  const representation = chooseRepresentation(request, doc.file);
  const encodeBody = representation === "gzip" ? "manual" : "automatic";
  const key = edgeKey(doc.origin, doc.path, representation, doc.version);
  const ttl = config.cache.edgeTtl;
  let body: ReadableStream<Uint8Array> | null = null;
  if (doc.snapshot && ctx.snapshots) {
    const gz = await ctx.snapshots.get(doc.snapshot).catch((err: unknown) => {
      console.error("snapshot read failed; rendering live", err);
      return null;
    });
    if (gz) body = representation === "identity" ? gz.pipeThrough(gunzip()) : gz;
  }
  const source = body ? "snapshot" : "live";
  if (!body) {
    // Rendered either way; started first, so its first read is in flight during the check.
    const xml = doc.render();
    const encoded = representation === "identity" ? xml : gzip(xml);
    let current = true;
    try {
      if (doc.current) current = await doc.current();
    } catch (err) {
      await encoded.cancel().catch(() => {});
      throw err;
    }
    if (!current) {
      return new Response(encoded, { status: 200, headers: unversionedHeaders(doc, representation, config.cache), encodeBody });
    }
    body = encoded;
  }
  const headers = documentHeaders(doc, representation, config.cache, source);
  return new Response(storeWhenComplete(ctx.waitUntil, key, body, ttl), { status: 200, headers, encodeBody });
}
