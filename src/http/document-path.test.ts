import { describe, expect, it } from "vitest";
import { parseDocumentPath } from "./document-path.ts";

const KEY = "a1b2c3d4-key";

describe("parseDocumentPath", () => {
  it("knows the index and shard forms", () => {
    expect(parseDocumentPath("/sitemap.xml", null)).toEqual({ kind: "index" });
    expect(parseDocumentPath("/sitemap-pages-1.xml", null)).toEqual({ kind: "shard", section: "pages", n: 1, file: "xml" });
    expect(parseDocumentPath("/sitemap-new-in-12.xml.gz", null)).toEqual({ kind: "shard", section: "new-in", n: 12, file: "xml.gz" });
  });

  it("knows the other formats: text shards, news sitemaps, the feed, the stylesheet", () => {
    expect(parseDocumentPath("/sitemap-pages-3.txt", null)).toEqual({ kind: "text", section: "pages", n: 3 });
    expect(parseDocumentPath("/sitemap-news.xml", null)).toEqual({ kind: "news", n: 1, file: "xml" });
    expect(parseDocumentPath("/sitemap-news.xml.gz", null)).toEqual({ kind: "news", n: 1, file: "xml.gz" });
    expect(parseDocumentPath("/sitemap-news2.xml", null)).toEqual({ kind: "news", n: 2, file: "xml" });
    expect(parseDocumentPath("/sitemap-news10.xml.gz", null)).toEqual({ kind: "news", n: 10, file: "xml.gz" });
    expect(parseDocumentPath("/sitemap-feed.atom", null)).toEqual({ kind: "feed" });
    expect(parseDocumentPath("/sitemap.xsl", null)).toEqual({ kind: "xsl" });
  });

  it("tells sections named like the other formats from those formats", () => {
    expect(parseDocumentPath("/sitemap-news-1.xml", null)).toEqual({ kind: "shard", section: "news", n: 1, file: "xml" });
    expect(parseDocumentPath("/sitemap-news-2.txt", null)).toEqual({ kind: "text", section: "news", n: 2 });
    expect(parseDocumentPath("/sitemap-feed-1.xml", null)).toEqual({ kind: "shard", section: "feed", n: 1, file: "xml" });
    expect(parseDocumentPath("/sitemap-indexnow-1.xml", KEY)).toEqual({ kind: "shard", section: "indexnow", n: 1, file: "xml" });
  });

  it("knows the IndexNow key file only for the configured key; any other such path stays what its form says", () => {
    expect(parseDocumentPath(`/sitemap-indexnow-${KEY}.txt`, KEY)).toEqual({ kind: "indexnow-key" });
    expect(parseDocumentPath(`/sitemap-indexnow-${KEY}.txt`, null)).toBeNull();
    expect(parseDocumentPath("/sitemap-indexnow-other-key.txt", KEY)).toBeNull();
    expect(parseDocumentPath("/sitemap-indexnow-12345678.txt", "12345678")).toEqual({ kind: "indexnow-key" });
    expect(parseDocumentPath("/sitemap-indexnow-12345678.txt", KEY)).toEqual({ kind: "text", section: "indexnow", n: 12345678 });
    expect(parseDocumentPath("/sitemap-indexnow-1.txt", null)).toEqual({ kind: "text", section: "indexnow", n: 1 });
  });

  it.each([
    "/sitemap-pages-0.xml",
    "/sitemap-pages-01.xml",
    "/sitemap-Pages-1.xml",
    "/sitemap-pages-1.xml.br",
    "/sitemap--1.xml",
    "/sitemap-pages-1.xmlx",
    "/sitemap-pages-1234567890.xml",
    "/x/sitemap-pages-1.xml",
    "/sitemap-pages-.xml",
    "/sitemap-pages-1.txt.gz",
    "/sitemap-Pages-1.txt",
    "/sitemap-news1.xml",
    "/sitemap-news02.xml",
    "/sitemap-news.txt",
    "/sitemap-feed.xml",
    "/sitemap.xml.gz",
    "/sitemap.xml/",
    "/sitemap-admin",
    "/sitemap-admin/urls",
    "/sitemap%2Exml",
    "/robots.txt",
  ])("rejects %s", (path) => {
    expect(parseDocumentPath(path, KEY)).toBeNull();
  });
});
