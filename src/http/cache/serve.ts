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
 *
 * A live render is started and its first chunk read before the status is chosen: a store that
 * fails before the first byte (or a document with no records) is a `503` with `Retry-After`,
 * never a `200` with an empty body. A failure after the first byte errors the stream (a broken
 * transfer, never stored), as a 200 cannot be taken back.
 */
import type { Config } from "../../config.ts";
import type { RenderedXml } from "../../core/render.ts";
import { gzipDocument } from "../../documents/gzip.ts";
import { invocationStream } from "../../jobs/meter.ts";
import type { SnapshotStore } from "../../snapshots/store.ts";
import { type DocumentHeaderFields, documentEtag, documentHeaders, notModifiedHeaders, unversionedHeaders } from "../document-headers.ts";
import { chooseRepresentation } from "../encoding.ts";
import { isNotModified } from "./conditional.ts";
import { edgeKey, edgeMatch, storeWhenComplete } from "./edge.ts";

/** A document as a route describes it; whose registration it is comes from the serving context. */
export interface SitemapDocument extends Omit<DocumentHeaderFields, "registeredAt"> {
  /** Canonical path of the document: the edge cache key's path. */
  path: string;
  /** Key of the pre-rendered gzip bytes of exactly `version`, when stored. */
  snapshot?: string | null;
  /**
   * Live render (identity bytes). Called only when neither cache nor snapshot answers. `versioned`
   * resolves once the answer is chosen: true when it carries the version's validators (and may be
   * cached), false when it goes out without them. A render that checks its own bytes against the
   * version (src/manifest/version-check.ts) fails only in the first case.
   */
  render: (versioned: Promise<boolean>) => ReadableStream<Uint8Array>;
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
  /** When the request's site was registered; null for a site of SITES: in every cache key and ETag of its documents. */
  registeredAt: number | null;
}

/** How long a crawler should wait after a render failed before its first byte (a store hiccup). */
export const RENDER_RETRY_AFTER_SECONDS = 60;

/**
 * The answer when a document could not be started: 503 (temporary; crawlers retry and keep what
 * they had) with Retry-After, never cached. The body names nothing of ours; the cause is logged.
 */
function unavailable(cause: unknown): Response {
  console.error("document render failed before its first byte", cause);
  return new Response("503 Service Unavailable: the document could not be read; retry later\n", {
    status: 503,
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "no-store",
      "Retry-After": String(RENDER_RETRY_AFTER_SECONDS),
      "X-Robots-Tag": "noindex",
    },
  });
}

class EmptyBodyError extends Error {
  override readonly name = "EmptyBodyError";
}

/** A body whose first chunk is being read before the status is chosen. */
interface StartedBody {
  /** The same bytes as the source, once its first chunk is in; rejects when there is none. */
  ready: Promise<ReadableStream<Uint8Array>>;
  /** Gives up on the source (its pending read, if any, ends). */
  cancel(reason: unknown): Promise<void>;
}

/**
 * Starts reading `stream`'s first chunk now. `ready` rejects when the first read fails or the
 * stream ends without a byte, so the caller still chooses the status; later failures error the
 * returned stream, and cancelling that stream cancels `stream`.
 */
function startBody(stream: ReadableStream<Uint8Array>): StartedBody {
  const reader = stream.getReader();
  const readFirst = async (): Promise<Uint8Array> => {
    for (;;) {
      const read = await reader.read();
      if (read.done) throw new EmptyBodyError("the document ended before its first byte");
      if (read.value.byteLength > 0) return read.value;
    }
  };
  const ready = readFirst().then(
    (chunk) => {
      let first: Uint8Array | undefined = chunk;
      // Pulled by the runtime after the handler returned: in this request's invocation, so its reads count against its own meter.
      return invocationStream(
        new ReadableStream<Uint8Array>(
          {
            async pull(controller) {
              if (first) {
                controller.enqueue(first);
                first = undefined;
                return;
              }
              const read = await reader.read();
              if (read.done) controller.close();
              else controller.enqueue(read.value);
            },
            cancel: (reason) => reader.cancel(reason),
          },
          { highWaterMark: 0 },
        ),
      );
    },
    async (err: unknown) => {
      await reader.cancel(err).catch(() => {});
      throw err;
    },
  );
  ready.catch(() => {}); // observed by the caller, possibly only after the check
  return { ready, cancel: (reason) => reader.cancel(reason).catch(() => {}) };
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
 * repetition with this alone, before any query (src/http/formats.ts).
 */
export async function serveWithoutRender(ctx: ServeContext, described: Omit<SitemapDocument, "render">): Promise<Response | null> {
  const { request, config } = ctx;
  const doc = { ...described, registeredAt: ctx.registeredAt };
  const representation = chooseRepresentation(request, doc.file);
  const etag = documentEtag(doc, doc.version, representation);

  if (isNotModified(request.headers, etag, doc.lastChange)) {
    return new Response(null, { status: 304, headers: notModifiedHeaders(doc, representation, config.cache) });
  }
  if (request.method === "HEAD") {
    return new Response(null, { status: 200, headers: documentHeaders(doc, representation, config.cache, null) });
  }

  if (config.cache.edgeTtl > 0) {
    const hit = await edgeMatch(edgeKey(doc, doc.path, representation, doc.version));
    const encodeBody = representation === "gzip" ? "manual" : "automatic";
    if (hit) {
      const headers = documentHeaders(doc, representation, config.cache, "cache");
      if (hit.length !== null) headers.set("Content-Length", String(hit.length));
      return new Response(hit.body, { status: 200, headers, encodeBody });
    }
  }
  return null;
}

/** Snapshot or live render, copied into the edge cache once complete. */
async function renderDocument(ctx: ServeContext, described: SitemapDocument): Promise<Response> {
  const { request, config } = ctx;
  const doc = { ...described, registeredAt: ctx.registeredAt };
  const representation = chooseRepresentation(request, doc.file);
  const encodeBody = representation === "gzip" ? "manual" : "automatic";
  const key = edgeKey(doc, doc.path, representation, doc.version);
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
    let choose: (versioned: boolean) => void = () => {};
    const rendered: RenderedXml = doc.render(new Promise<boolean>((resolve) => (choose = resolve)));
    const started = startBody(rendered);
    let current = true;
    try {
      if (doc.current) current = await doc.current();
    } catch (err) {
      choose(true);
      await started.cancel(err);
      return unavailable(err);
    }
    choose(current);
    let xml: ReadableStream<Uint8Array>;
    try {
      xml = await started.ready;
    } catch (err) {
      return unavailable(err);
    }
    // gzip after the first read: a compressor holds its input back, so its first chunk proves nothing.
    const encoded = representation === "identity" ? xml : gzipDocument(xml, rendered.blockCuts);
    if (!current) {
      return new Response(encoded, { status: 200, headers: unversionedHeaders(doc, representation, config.cache), encodeBody });
    }
    body = encoded;
  }
  const headers = documentHeaders(doc, representation, config.cache, source);
  return new Response(storeWhenComplete(ctx.waitUntil, key, body, ttl), { status: 200, headers, encodeBody });
}
