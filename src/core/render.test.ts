import { describe, expect, it } from "vitest";
import { EmptySitemapError, SitemapLimitError } from "./errors.ts";
import { escapeXml, utf8Length } from "./escape.ts";
import { RENDER_CHUNK_BYTES } from "./limits.ts";
import { renderSitemapIndex, renderUrlset } from "./render.ts";
import type { UrlRecord } from "./types.ts";
import { urlElement, urlElementBytes, urlsetOverheadBytes } from "./writers.ts";

async function chunksOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const records = (n: number): UrlRecord[] =>
  Array.from({ length: n }, (_, i) => ({ loc: `https://example.com/p/${i}?a=1&b='2'`, lastmod: "2024-01-01", changefreq: "daily", priority: 0.5 }));

describe("escapeXml", () => {
  it("escapes the five XML special characters and leaves the rest alone", () => {
    expect(escapeXml(`a&b<c>d"e'f`)).toBe("a&amp;b&lt;c&gt;d&quot;e&apos;f");
    expect(escapeXml("&amp;")).toBe("&amp;amp;");
    const plain = "https://example.com/straße";
    expect(escapeXml(plain)).toBe(plain);
  });
});

describe("utf8Length", () => {
  it("counts bytes exactly as TextEncoder encodes them", () => {
    for (const s of ["", "abc", "é", "日本", "😀", "a😀b€", "\ud800x", "x\udc00"]) {
      expect(utf8Length(s), JSON.stringify(s)).toBe(new TextEncoder().encode(s).byteLength);
    }
  });
});

describe("urlElement", () => {
  it("writes children in XSD order and only those present", () => {
    expect(urlElement({ loc: "https://e.com/", lastmod: "2024-01-01T10:00:00Z", changefreq: "weekly", priority: 1 })).toBe(
      "<url><loc>https://e.com/</loc><lastmod>2024-01-01T10:00:00Z</lastmod><changefreq>weekly</changefreq><priority>1.0</priority></url>\n",
    );
    expect(urlElement({ loc: "https://e.com/", priority: 0 })).toBe("<url><loc>https://e.com/</loc><priority>0.0</priority></url>\n");
  });

  it("can emit date-only lastmods", () => {
    expect(urlElement({ loc: "https://e.com/", lastmod: "2024-01-01T10:00:00+02:00" }, { lastmodDateOnly: true })).toContain(
      "<lastmod>2024-01-01</lastmod>",
    );
  });
});

describe("renderUrlset", () => {
  it("emits chunks of tens of KB, not one per element, and the exact bytes", async () => {
    const input = records(5_000);
    const chunks = await chunksOf(renderUrlset(input));
    const total = chunks.reduce((n, c) => n + c.byteLength, 0);
    expect(total).toBe(urlsetOverheadBytes() + input.reduce((n, r) => n + urlElementBytes(r), 0));
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.byteLength).toBeGreaterThanOrEqual(RENDER_CHUNK_BYTES);
      expect(chunk.byteLength).toBeLessThan(RENDER_CHUNK_BYTES + 1_024);
    }
    const xml = new TextDecoder().decode(await new Response(renderUrlset(input)).arrayBuffer());
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')).toBe(true);
    expect(xml.endsWith("</urlset>\n")).toBe(true);
    expect(xml.match(/<url>/g)).toHaveLength(5_000);
  });

  it("pulls records lazily: nothing is read before the consumer asks", async () => {
    let pulled = 0;
    async function* source(): AsyncGenerator<UrlRecord> {
      for (const r of records(100_000)) {
        pulled++;
        yield r;
      }
    }
    const reader = renderUrlset(source()).getReader();
    await reader.read();
    // One chunk (~32 KiB ≈ 300 records) plus the one-chunk read-ahead, not the whole set.
    expect(pulled).toBeLessThan(1_000);
    await reader.cancel();
  });

  it("refuses to emit an empty urlset", async () => {
    await expect(chunksOf(renderUrlset([]))).rejects.toBeInstanceOf(EmptySitemapError);
    await expect(chunksOf(renderSitemapIndex([]))).rejects.toBeInstanceOf(EmptySitemapError);
  });

  it("errors the stream instead of passing a URL or byte limit", async () => {
    await expect(chunksOf(renderUrlset(records(11), { maxUrls: 10 }))).rejects.toBeInstanceOf(SitemapLimitError);
    const err = await chunksOf(renderUrlset(records(2_000), { maxBytes: 50_000 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SitemapLimitError);
    expect((err as SitemapLimitError).limit).toBe("bytes");
  });

  it("with overflow 'end', ends a valid document at the record that would pass a limit, whole records only", async () => {
    const text = async (stream: ReadableStream<Uint8Array>) => new TextDecoder().decode(Buffer.concat(await chunksOf(stream)));
    const byCount = await text(renderUrlset(records(11), { maxUrls: 10, overflow: "end" }));
    expect(byCount.match(/<url>/g)).toHaveLength(10);
    expect(byCount.endsWith("</urlset>\n")).toBe(true);
    // Multi-byte locs so that UTF-16 units and UTF-8 bytes differ; chunks of RENDER_CHUNK_BYTES crossed.
    const wide = Array.from({ length: 3_000 }, (_, i) => ({ loc: `https://example.com/日本/${i}` }));
    for (const maxBytes of [1_000, 50_000, 100_000]) {
      const bytes = Buffer.concat(await chunksOf(renderUrlset(wide, { maxBytes, overflow: "end" })));
      const listed = new TextDecoder().decode(bytes).match(/<url>/g)!.length;
      expect(bytes.byteLength).toBeLessThanOrEqual(maxBytes);
      // The next record would not have fitted.
      expect(bytes.byteLength + utf8Length(urlElement(wide[listed]!))).toBeGreaterThan(maxBytes);
    }
  });

  it("propagates a source failure as a stream error (a broken transfer, never a short document)", async () => {
    async function* failing(): AsyncGenerator<UrlRecord> {
      yield* records(3_000);
      throw new Error("D1 went away");
    }
    await expect(chunksOf(renderUrlset(failing()))).rejects.toThrow("D1 went away");
  });
});
