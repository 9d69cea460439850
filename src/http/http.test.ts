import { describe, expect, it } from "vitest";
import { acceptsGzip } from "./encoding.ts";
import { parseSitemapPath } from "./paths.ts";

describe("acceptsGzip", () => {
  it.each([
    [null, false],
    ["", false],
    ["gzip", true],
    ["GZIP", true],
    ["br, gzip;q=0.5", true],
    ["gzip;q=0", false],
    ["gzip; q=0.000", false],
    ["identity", false],
    ["br", false],
    ["*", true],
    ["*;q=0", false],
    ["gzip;q=0, *", false],
    ["x-gzip", true],
    ["deflate, *;q=0.1", true],
  ])("%j → %s", (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe("parseSitemapPath", () => {
  it("knows the index and shard forms", () => {
    expect(parseSitemapPath("/sitemap.xml")).toEqual({ kind: "index" });
    expect(parseSitemapPath("/sitemap-pages-1.xml")).toEqual({ kind: "shard", section: "pages", n: 1, file: "xml" });
    expect(parseSitemapPath("/sitemap-new-in-12.xml.gz")).toEqual({ kind: "shard", section: "new-in", n: 12, file: "xml.gz" });
  });

  it.each(["/sitemap-pages-0.xml", "/sitemap-pages-01.xml", "/sitemap-Pages-1.xml", "/sitemap-pages-1.xml.br", "/sitemap--1.xml", "/sitemap-pages-1.xmlx", "/sitemap-pages-1234567890.xml", "/x/sitemap-pages-1.xml"])(
    "rejects %s",
    (path) => {
      expect(parseSitemapPath(path)).toBeNull();
    },
  );
});
