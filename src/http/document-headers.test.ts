import { describe, expect, it } from "vitest";
import type { CacheConfig } from "../config.ts";
import { documentEtag, documentHeaders, notModifiedHeaders } from "./document-headers.ts";

const cache: CacheConfig = { maxAge: 300, sMaxAge: 3600, staleWhileRevalidate: 60, edgeTtl: 0, manifestTtl: 0 };
const doc = {
  origin: "https://example.com",
  registeredAt: null,
  file: "xml" as const,
  version: "v1",
  lastChange: Date.UTC(2026, 0, 2, 3, 4, 5),
  tags: ["a", "b"],
};

const entries = (headers: Headers): Record<string, string> => Object.fromEntries(headers.entries());

describe("documentHeaders", () => {
  it("builds every header of a gzip-encoded .xml answer, with its body's source", () => {
    expect(entries(documentHeaders(doc, "gzip", cache, "live"))).toEqual({
      "cache-control": "public, max-age=300, s-maxage=3600, stale-while-revalidate=60, no-transform",
      "cache-tag": "a,b",
      "content-encoding": "gzip",
      "content-type": "application/xml; charset=utf-8",
      etag: documentEtag(doc, "v1", "gzip"),
      "last-modified": "Fri, 02 Jan 2026 03:04:05 GMT",
      vary: "Accept-Encoding",
      "x-robots-tag": "noindex",
      "x-sitemap-source": "live",
    });
  });

  it("gives the .xml.gz file its own media type, no Vary and no Content-Encoding; HEAD has no source", () => {
    const headers = entries(documentHeaders({ ...doc, file: "xml.gz", tags: [], contentType: "text/plain" }, "file", cache, null));
    expect(headers["content-type"]).toBe("application/gzip");
    expect(headers).not.toHaveProperty("vary");
    expect(headers).not.toHaveProperty("content-encoding");
    expect(headers).not.toHaveProperty("cache-tag");
    expect(headers).not.toHaveProperty("x-sitemap-source");
  });

  it("uses the document's own identity media type and leaves stale-while-revalidate out at 0", () => {
    const text = { ...doc, contentType: "text/plain; charset=utf-8" };
    const headers = documentHeaders(text, "identity", { ...cache, staleWhileRevalidate: 0 }, "cache");
    expect(headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(headers.get("Cache-Control")).toBe("public, max-age=300, s-maxage=3600, no-transform");
  });

  it("keeps ETags apart per site, per registration at one origin, and per representation", () => {
    const a = { origin: "https://a.example", registeredAt: null };
    const etags = new Set([
      documentEtag(a, "v1", "identity"),
      documentEtag(a, "v1", "gzip"),
      documentEtag(a, "v1", "file"),
      documentEtag({ origin: "https://b.example", registeredAt: null }, "v1", "identity"),
      documentEtag({ origin: "https://a.example", registeredAt: 1_000 }, "v1", "identity"),
      documentEtag({ origin: "https://a.example", registeredAt: 2_000 }, "v1", "identity"),
    ]);
    expect(etags.size).toBe(6);
    expect(documentEtag(a, "v1", "identity")).toMatch(/^"[0-9a-f]{8}v1-i"$/);
  });
});

describe("notModifiedHeaders", () => {
  it("repeats the validators, caching, Vary and tags of the 200, and no body headers", () => {
    expect(entries(notModifiedHeaders(doc, "gzip", cache))).toEqual({
      "cache-control": "public, max-age=300, s-maxage=3600, stale-while-revalidate=60, no-transform",
      "cache-tag": "a,b",
      etag: documentEtag(doc, "v1", "gzip"),
      "last-modified": "Fri, 02 Jan 2026 03:04:05 GMT",
      vary: "Accept-Encoding",
      "x-robots-tag": "noindex",
      "x-sitemap-source": "not-modified",
    });
  });
});
