/**
 * The one place that builds the response headers of a sitemap document (shards, the index, the
 * other formats): media type and encoding, validators (per-site strong ETag per representation,
 * Last-Modified), Cache-Control, Vary, Cache-Tag, X-Robots-Tag, and X-Sitemap-Source saying which of
 * edge cache / snapshot / live rendering produced the body.
 */
import type { CacheConfig } from "../config.ts";
import { httpDate } from "../core/datetime-format.ts";
import { type CachedSite, siteTag } from "../documents/cache-keys.ts";
import type { ShardFile } from "../documents/paths.ts";
import type { Representation } from "./encoding.ts";

/** What the headers of a document derive from. */
export interface DocumentHeaderFields {
  /** The site (request origin, a configured site). */
  origin: string;
  /** When the site was registered; null for a site of SITES (part of its ETags: src/documents/cache-keys.ts). */
  registeredAt: number | null;
  /** `xml` negotiates gzip/identity; `xml.gz` is a gzip file. */
  file: ShardFile;
  /** Content version: ETags derive from it. */
  version: string;
  /** Newest change in the document (ms): Last-Modified. */
  lastChange: number;
  /** Cache-Tag values (site, section, shard …). */
  tags: readonly string[];
  /** Identity media type; default `application/xml; charset=utf-8`. */
  contentType?: string;
}

/** Which layer produced a 200's body; null for HEAD, which has none. */
export type BodySource = "cache" | "snapshot" | "live";

/**
 * Strong ETag of one representation of one version of a site's document: `"<site><version>-<r>"`,
 * from the content version, never from hashing the body. The site part (its origin, and a
 * registered site's registration: src/documents/cache-keys.ts) keeps ETags per site even when two
 * sites' content versions coincide.
 */
export function documentEtag(site: CachedSite, version: string, representation: Representation): string {
  return `"${siteTag(site)}${version}-${representation === "identity" ? "i" : representation === "gzip" ? "g" : "f"}"`;
}

/**
 * `Cache-Control` of a sitemap document: `max-age` for browsers and crawlers, `s-maxage` and
 * `stale-while-revalidate` for shared caches (the tiered Workers Cache honours both), and
 * `no-transform` so the edge never re-encodes bytes a strong ETag names.
 */
function documentCacheControl(cache: CacheConfig): string {
  const parts = ["public", `max-age=${cache.maxAge}`, `s-maxage=${cache.sMaxAge}`];
  if (cache.staleWhileRevalidate > 0) parts.push(`stale-while-revalidate=${cache.staleWhileRevalidate}`);
  parts.push("no-transform");
  return parts.join(", ");
}

/** Headers of a 200 (GET with its body's source, or HEAD with none). */
export function documentHeaders(doc: DocumentHeaderFields, representation: Representation, cache: CacheConfig, source: BodySource | null): Headers {
  const headers = new Headers({
    "Content-Type": representation === "file" ? "application/gzip" : (doc.contentType ?? "application/xml; charset=utf-8"),
    "X-Robots-Tag": "noindex",
    ETag: documentEtag(doc, doc.version, representation),
    "Last-Modified": httpDate(doc.lastChange),
    "Cache-Control": documentCacheControl(cache),
  });
  if (representation === "gzip") headers.set("Content-Encoding", "gzip");
  if (doc.file === "xml") headers.set("Vary", "Accept-Encoding");
  if (doc.tags.length > 0) headers.set("Cache-Tag", doc.tags.join(","));
  if (source !== null) headers.set("X-Sitemap-Source", source);
  return headers;
}

/**
 * Headers of a live render whose rows moved past the document's version (src/http/cache/serve.ts): the
 * same body headers, but no ETag or Last-Modified (they would name the version's bytes, not these)
 * and `no-store`, so no cache keeps them; the next regeneration gives the document a new version.
 */
export function unversionedHeaders(doc: DocumentHeaderFields, representation: Representation, cache: CacheConfig): Headers {
  const headers = documentHeaders(doc, representation, cache, "live");
  headers.delete("ETag");
  headers.delete("Last-Modified");
  headers.set("Cache-Control", "no-store");
  return headers;
}

/**
 * Headers of a 304: those of the 200 it stands for that RFC 9110 §15.4.5 has it repeat (validators,
 * caching, Vary, tags; no body headers), and `X-Sitemap-Source: not-modified`.
 */
export function notModifiedHeaders(doc: DocumentHeaderFields, representation: Representation, cache: CacheConfig): Headers {
  const full = documentHeaders(doc, representation, cache, null);
  const headers = new Headers();
  for (const name of ["etag", "last-modified", "cache-control", "vary", "cache-tag", "x-robots-tag"]) {
    const value = full.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set("X-Sitemap-Source", "not-modified");
  return headers;
}

/**
 * Headers of the browser view's HTML (docs/browser-view.md), served on the XML's URL to top-level
 * browser navigations only. Shared caches (Cloudflare's included) ignore `Vary` but for
 * `Accept-Encoding`, so the HTML must never be stored anywhere: `private, no-store` keeps it out of
 * every cache, and it has no validators (a browser's conditional request cannot turn it into the
 * XML's 304). The page has no script: the policy forbids any, and inline styles only.
 */
export function viewHeaders(): Headers {
  return new Headers({
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "private, no-store",
    Vary: "Sec-Fetch-Dest, Sec-Fetch-Mode",
    "X-Robots-Tag": "noindex",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Sitemap-Source": "view",
  });
}
