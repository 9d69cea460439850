/**
 * Behavioural suite of the core product, run against every record source: index, shards, limits,
 * stability, escaping, gzip representations and 404s, through the real Worker entry.
 */
import { describe, expect, it } from "vitest";
import { MAX_SITEMAP_BYTES } from "../../src/core/limits.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { sourceFixtures } from "./fixtures/sources.ts";
import { bytesOf, call, document, gunzip, locsOf, range, seedSite, text, validRecords } from "./support.ts";

describe.each(sourceFixtures)("sitemaps from $name", (fixture) => {
  /** A new site with the given records, manifest built as after a write. */
  const site = (inputs: (origin: string) => unknown[], vars: Record<string, string> = {}, now = Date.UTC(2026, 0, 1)) =>
    seedSite(fixture, fixture.name, inputs, vars, now, "https://other.example");

  it("serves an index whose every shard resolves, with every record exactly once", async () => {
    const { origin, env } = await site((o) => [...demoSection(o, "pages", 1_200), ...demoSection(o, "products", 2_500), ...demoSection(o, "blog", 300)], {
      MAX_URLS_PER_SHARD: "1000",
    });
    const index = await document(env, `${origin}/sitemap.xml`);
    // The browser view (on in wrangler.jsonc) adds an xml-stylesheet processing instruction.
    expect(index).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<\?xml-stylesheet type="text\/xsl" href="\/sitemap.xsl"\?>\n<sitemapindex xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">/,
    );
    const shardUrls = locsOf(index);
    expect(shardUrls).toEqual([
      `${origin}/sitemap-blog-1.xml`,
      `${origin}/sitemap-pages-1.xml`,
      `${origin}/sitemap-pages-2.xml`,
      `${origin}/sitemap-products-1.xml`,
      `${origin}/sitemap-products-2.xml`,
      `${origin}/sitemap-products-3.xml`,
    ]);
    expect(index.match(/<lastmod>2026-01-01T00:00:00Z<\/lastmod>/g)).toHaveLength(6);
    const served: string[] = [];
    for (const url of shardUrls) {
      const xml = await document(env, url);
      expect(xml.endsWith("</urlset>\n")).toBe(true);
      served.push(...locsOf(xml));
    }
    const expected = validRecords(env, [
      ...demoSection(origin, "pages", 1_200),
      ...demoSection(origin, "products", 2_500),
      ...demoSection(origin, "blog", 300),
    ]).map((r) => r.loc);
    expect(served).toHaveLength(expected.length);
    expect(new Set(served)).toEqual(new Set(expected));
  });

  it("escapes & < > \" ' in every value and keeps non-ASCII paths percent-encoded", async () => {
    const { origin, env } = await site((o) => [
      { loc: `${o}/search?q=a&b=<c>&d="e"&f='g'`, lastmod: "2024-05-01T10:00:00+02:00", changefreq: "daily", priority: 0.8 },
      { loc: `${o}/café/straße/日本` },
      { loc: `${o}/rock'n'roll&more` },
    ]);
    const xml = await document(env, `${origin}/sitemap-pages-1.xml`);
    expect(xml).toContain(`<loc>${origin}/search?q=a&amp;b=%3Cc%3E&amp;d=%22e%22&amp;f=%27g%27</loc>`);
    expect(xml).toContain("<lastmod>2024-05-01T10:00:00+02:00</lastmod><changefreq>daily</changefreq><priority>0.8</priority>");
    expect(xml).toContain(`<loc>${origin}/caf%C3%A9/stra%C3%9Fe/%E6%97%A5%E6%9C%AC</loc>`);
    expect(xml).toContain(`<loc>${origin}/rock&apos;n&apos;roll&amp;more</loc>`);
    // Nothing unescaped is left between the tags.
    for (const value of xml.matchAll(/>([^<]*)</g)) expect(value[1]).not.toMatch(/&(?!amp;|lt;|gt;|quot;|apos;)|[<>"']/);
  });

  it("puts exactly 50,000 records in one shard and 50,001 in two", async () => {
    const exact = await site((o) => range(50_000).map((i) => ({ loc: `${o}/p/${i}` })));
    expect(locsOf(await document(exact.env, `${exact.origin}/sitemap.xml`))).toEqual([`${exact.origin}/sitemap-pages-1.xml`]);
    const one = await document(exact.env, `${exact.origin}/sitemap-pages-1.xml`);
    expect(one.match(/<url>/g)).toHaveLength(50_000);

    const over = await site((o) => range(50_001).map((i) => ({ loc: `${o}/p/${i}` })));
    const shards = locsOf(await document(over.env, `${over.origin}/sitemap.xml`));
    expect(shards).toEqual([`${over.origin}/sitemap-pages-1.xml`, `${over.origin}/sitemap-pages-2.xml`]);
    expect((await document(over.env, shards[0]!)).match(/<url>/g)).toHaveLength(50_000);
    const second = await document(over.env, shards[1]!);
    expect(locsOf(second)).toEqual([`${over.origin}/p/50000`]);
  });

  it("splits by bytes when 52,428,800 bytes come before 50,000 URLs", async () => {
    // ~2,040-character URLs: about 25,000 of them fill 50 MiB.
    const pad = "x".repeat(1_990);
    const { origin, env } = await site((o) => range(30_000).map((i) => ({ loc: `${o}/${pad}/${i}`, lastmod: "2024-01-01T00:00:00Z" })));
    const shards = locsOf(await document(env, `${origin}/sitemap.xml`));
    expect(shards).toHaveLength(2);
    let total = 0;
    for (const url of shards) {
      const bytes = await bytesOf(await call(env, url));
      const count = text(bytes).match(/<url>/g)?.length ?? 0;
      expect(bytes.byteLength).toBeLessThanOrEqual(MAX_SITEMAP_BYTES);
      expect(count).toBeLessThanOrEqual(50_000);
      total += count;
    }
    expect(total).toBe(30_000);
    // The first shard is filled up to the byte limit, not cut early.
    const first = await bytesOf(await call(env, shards[0]!));
    expect(first.byteLength).toBeGreaterThan(MAX_SITEMAP_BYTES - 2_100);
  });

  it("keeps earlier full shards byte-identical when records are appended", async () => {
    const vars = { MAX_URLS_PER_SHARD: "1000" };
    const { origin, env } = await site((o) => demoSection(o, "products", 2_500), vars);
    const before = await Promise.all([1, 2].map(async (n) => text(await bytesOf(await call(env, `${origin}/sitemap-products-${n}.xml`)))));
    const etags = await Promise.all(
      [1, 2].map(async (n) => (await call(env, `${origin}/sitemap-products-${n}.xml`, { method: "HEAD" })).headers.get("etag")),
    );

    await fixture.upsert(env, validRecords(env, demoSection(origin, "products", 1_500, 2_500)), Date.UTC(2026, 1, 1));
    await rebuildManifest(services(env), origin);

    const index = locsOf(await document(env, `${origin}/sitemap.xml`));
    expect(index).toEqual([1, 2, 3, 4].map((n) => `${origin}/sitemap-products-${n}.xml`));
    for (const [i, n] of [1, 2].entries()) {
      const res = await call(env, `${origin}/sitemap-products-${n}.xml`);
      expect(res.headers.get("etag")).toBe(etags[i]);
      expect(await res.text()).toBe(before[i]);
    }
    expect((await document(env, `${origin}/sitemap-products-3.xml`)).match(/<url>/g)).toHaveLength(1_000);
    expect((await document(env, `${origin}/sitemap-products-4.xml`)).match(/<url>/g)).toHaveLength(1_000);
  });

  it("drops deleted records, and a shard whose records are all gone is 404 and unlisted", async () => {
    const vars = { MAX_URLS_PER_SHARD: "10" };
    const { origin, env } = await site((o) => range(25).map((i) => ({ loc: `${o}/p/${i}` })), vars);
    await fixture.delete(
      env,
      range(10)
        .map((i) => `${origin}/p/${i}`)
        .concat(`${origin}/p/12`),
      Date.UTC(2026, 2, 1),
    );
    await rebuildManifest(services(env), origin);
    expect(locsOf(await document(env, `${origin}/sitemap.xml`))).toEqual([`${origin}/sitemap-pages-2.xml`, `${origin}/sitemap-pages-3.xml`]);
    expect((await call(env, `${origin}/sitemap-pages-1.xml`)).status).toBe(404);
    const second = locsOf(await document(env, `${origin}/sitemap-pages-2.xml`));
    expect(second).toHaveLength(9);
    expect(second).not.toContain(`${origin}/p/12`);
    // A deletion is a change: the shard's lastmod in the index moves to the deletion time.
    expect(await document(env, `${origin}/sitemap.xml`)).toContain(
      `<sitemap><loc>${origin}/sitemap-pages-2.xml</loc><lastmod>2026-03-01T00:00:00Z</lastmod></sitemap>`,
    );
  });

  it("serves gzip three ways that decompress to the identity bytes", async () => {
    const { origin, env } = await site((o) => demoSection(o, "products", 300));
    const url = `${origin}/sitemap-products-1.xml`;
    const identity = await call(env, url);
    expect(identity.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(identity.headers.get("content-encoding")).toBeNull();
    const plain = await bytesOf(identity);
    expect(text(plain.subarray(0, 5))).toBe("<?xml");

    const encoded = await call(env, url, { headers: { "Accept-Encoding": "br, gzip;q=0.8" } });
    expect(encoded.headers.get("content-encoding")).toBe("gzip");
    expect(encoded.headers.get("vary")).toBe("Accept-Encoding");
    const encodedBytes = await bytesOf(encoded);
    expect([encodedBytes[0], encodedBytes[1]]).toEqual([0x1f, 0x8b]);
    expect(await gunzip(encodedBytes)).toEqual(plain);

    const file = await call(env, `${url}.gz`, { headers: { "Accept-Encoding": "gzip" } });
    expect(file.headers.get("content-type")).toBe("application/gzip");
    expect(file.headers.get("content-encoding")).toBeNull();
    expect(await gunzip(await bytesOf(file))).toEqual(plain);

    const refused = await call(env, url, { headers: { "Accept-Encoding": "gzip;q=0, identity" } });
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(await bytesOf(refused)).toEqual(plain);

    const etags = new Set([identity, encoded, file].map((r) => r.headers.get("etag")));
    expect(etags.size).toBe(3);
  });

  it("sets the sitemap headers and answers HEAD with no body", async () => {
    const { origin, env } = await site((o) => demoSection(o, "pages", 5));
    for (const path of ["/sitemap.xml", "/sitemap-pages-1.xml"]) {
      const get = await call(env, origin + path);
      const head = await call(env, origin + path, { method: "HEAD" });
      expect(get.headers.get("x-robots-tag")).toBe("noindex");
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
      for (const name of ["content-type", "etag", "last-modified", "x-robots-tag"]) {
        expect(head.headers.get(name), name).toBe(get.headers.get(name));
      }
      await get.body?.cancel();
    }
  });

  it("links the .xml.gz form from the index when configured", async () => {
    const { origin, env } = await site((o) => demoSection(o, "pages", 5), { INDEX_LINK_FORM: "xml.gz" });
    expect(locsOf(await document(env, `${origin}/sitemap.xml`))).toEqual([`${origin}/sitemap-pages-1.xml.gz`]);
  });

  it("answers 404 with a plain-text reason for unknown hosts, sections, shards and paths", async () => {
    const { origin, env } = await site((o) => demoSection(o, "pages", 5));
    const cases = [
      "https://unknown.example/sitemap.xml",
      "https://unknown.example/sitemap-pages-1.xml",
      `${origin}/sitemap-nosuch-1.xml`,
      `${origin}/sitemap-pages-0.xml`,
      `${origin}/sitemap-pages-2.xml`,
      `${origin}/sitemap-pages-01.xml`,
      `${origin}/sitemap-pages-1.xml.br`,
      `${origin}/sitemap-Pages-1.xml`,
      `${origin}/sitemap-../etc/passwd`,
      `${origin}/sitemaps.xml`,
      `${origin}/index.html`,
      `${origin}/`,
    ];
    for (const url of cases) {
      const res = await call(env, url);
      expect(res.status, url).toBe(404);
      expect(res.headers.get("content-type"), url).toBe("text/plain; charset=utf-8");
      expect(await res.text(), url).toMatch(/^404 Not Found: .+\n$/);
    }
    // A configured site with no records has no index: an empty sitemapindex would be invalid.
    expect((await call(env, "https://other.example/sitemap.xml")).status).toBe(404);
  });

  it("never answers one site's request with another site's data", async () => {
    const a = await site((o) => [{ loc: `${o}/only-a` }]);
    const env = fixture.env({ SITES: `${a.origin} https://b.example` });
    await fixture.upsert(env, validRecords(env, [{ loc: "https://b.example/only-b" }]));
    await rebuildManifest(services(env), "https://b.example");
    const xmlA = await document(env, `${a.origin}/sitemap-pages-1.xml`);
    const xmlB = await document(env, "https://b.example/sitemap-pages-1.xml");
    expect(locsOf(xmlA)).toEqual([`${a.origin}/only-a`]);
    expect(locsOf(xmlB)).toEqual(["https://b.example/only-b"]);
    // X-Forwarded-Host is not a way in.
    const spoofed = await call(env, "https://evil.example/sitemap-pages-1.xml", { headers: { "X-Forwarded-Host": a.origin.slice(8) } });
    expect(spoofed.status).toBe(404);
  });
});
