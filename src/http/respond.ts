/** Sitemap HTTP responses: representation choice, headers, validators. */
import { httpDate } from "../core/datetime-format.ts";
import { gzip } from "../core/render.ts";
import { clientAcceptsGzip } from "./encoding.ts";

/** `xml` identity, `xml` gzip-encoded, or the `.xml.gz` file: three representations, three ETags. */
export type Representation = "identity" | "gzip" | "file";

export interface DocumentMeta {
  /** Content version of the document (manifest entry / manifest version). */
  version: string;
  /** Newest change in the document (ms). */
  lastChange: number;
  /** Path form requested: `.xml` negotiates encoding, `.xml.gz` is a gzip file. */
  file: "xml" | "xml.gz";
}

export function chooseRepresentation(request: Request, file: "xml" | "xml.gz"): Representation {
  if (file === "xml.gz") return "file";
  return clientAcceptsGzip(request) ? "gzip" : "identity";
}

/** Strong ETag from the content version and the representation (never from hashing the body). */
export function etagFor(version: string, representation: Representation): string {
  return `"${version}-${representation === "identity" ? "i" : representation === "gzip" ? "g" : "f"}"`;
}

export const CACHE_CONTROL = "public, max-age=300, no-transform";

export function sitemapHeaders(meta: DocumentMeta, representation: Representation): Headers {
  const headers = new Headers({
    "Content-Type": representation === "file" ? "application/gzip" : "application/xml; charset=utf-8",
    "X-Robots-Tag": "noindex",
    ETag: etagFor(meta.version, representation),
    "Last-Modified": httpDate(meta.lastChange),
    // no-transform: the edge must not re-encode, or the strong ETag would name other bytes.
    "Cache-Control": CACHE_CONTROL,
  });
  if (representation === "gzip") headers.set("Content-Encoding", "gzip");
  if (meta.file === "xml") headers.set("Vary", "Accept-Encoding");
  return headers;
}

/**
 * A sitemap response. `render` is called only for GET (HEAD gets the same headers, no body, and no
 * record is read). A gzip body is already compressed: `encodeBody: "manual"` stops the runtime from
 * compressing it again.
 */
export function sitemapResponse(
  request: Request,
  meta: DocumentMeta,
  render: () => ReadableStream<Uint8Array>,
): Response {
  const representation = chooseRepresentation(request, meta.file);
  const headers = sitemapHeaders(meta, representation);
  if (request.method === "HEAD") return new Response(null, { status: 200, headers });
  const xml = render();
  const body = representation === "identity" ? xml : gzip(xml);
  return new Response(body, { status: 200, headers, encodeBody: representation === "gzip" ? "manual" : "automatic" });
}

export function notFound(reason: string): Response {
  return new Response(`404 Not Found: ${reason}\n`, {
    status: 404,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "public, max-age=60", "X-Robots-Tag": "noindex" },
  });
}

export function plainError(status: number, message: string): Response {
  return new Response(`${message}\n`, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
  });
}
