/**
 * Protocol extensions through the real Worker entry: namespaces declared per shard, byte accounting
 * with extension markup, ingest rejections, the news sitemap (2-day window, 1,000 per file, 404 and
 * unlisted when empty) and date-only lastmod per site.
 */
import { XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { RecordValidationError } from "../../src/core/errors.ts";
import { EXT_IMAGE, EXT_NEWS, EXT_VIDEO, EXT_XHTML } from "../../src/core/extensions/kinds.ts";
import { services } from "../../src/services.ts";
import { currentManifest, rebuildManifest } from "../../src/sitemaps.ts";
import { d1Fixture, sourceFixtures } from "./fixtures/sources.ts";
import { call, document, freshOrigin, locsOf, range, seedSite, validRecords } from "./support.ts";

const NS = {
  image: 'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"',
  video: 'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"',
  news: 'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"',
  xhtml: 'xmlns:xhtml="http://www.w3.org/1999/xhtml"',
};

const HOUR = 3_600_000;

function urlsetHead(xml: string): string {
  const start = xml.indexOf("<urlset");
  return xml.slice(start, xml.indexOf(">", start) + 1);
}

function video(origin: string, i: number) {
  return {
    thumbnail_loc: `${origin}/v/${i}.jpg`,
    title: `Video ${i}`,
    description: "A short film & more",
    player_loc: `https://player.example.net/${i}?a=1&b=2`,
  };
}

function article(origin: string, i: number, publishedAt: number, extra: Record<string, unknown> = {}) {
  return {
    loc: `${origin}/news/${i}`,
    section: "articles",
    news: { publication: { name: "The Example Times", language: "en" }, publication_date: new Date(publishedAt).toISOString(), title: `Story ${i} & co` },
    ...extra,
  };
}

describe.each(sourceFixtures)("extensions from $name", (fixture) => {
  const site = (inputs: (origin: string) => unknown[], vars: Record<string, string> = {}) => seedSite(fixture, `ext-${fixture.name}`, inputs, vars);

  it("declares on each shard exactly the namespaces its records use", async () => {
    const { origin, env } = await site(
      (o) => [
        ...range(3).map((i) => ({ loc: `${o}/plain/${i}`, section: "plain" })),
        // gallery: 10 records with images, then 10 without (MAX_URLS_PER_SHARD 10 → two shards)
        ...range(20).map((i) => ({ loc: `${o}/gallery/${i}`, section: "gallery", ...(i < 10 ? { images: [`${o}/img/${i}.jpg`] } : {}) })),
        ...range(2).map((i) => ({
          loc: `${o}/films/${i}`,
          section: "films",
          videos: [video(o, i)],
          alternates: [
            { hreflang: "en", href: `${o}/films/${i}` },
            { hreflang: "x-default", href: `${o}/films/${i}` },
          ],
          // news data is written only in the news sitemap, never in section shards
          news: article(o, i, Date.now()).news,
        })),
      ],
      { MAX_URLS_PER_SHARD: "10" },
    );
    const manifest = await currentManifest(services(env), origin);
    expect(manifest.shards.map((s) => [s.section, s.n, s.extKinds])).toEqual([
      ["films", 1, EXT_VIDEO | EXT_XHTML | EXT_NEWS],
      ["gallery", 1, EXT_IMAGE],
      ["gallery", 2, 0],
      ["plain", 1, 0],
    ]);

    const plain = await document(env, `${origin}/sitemap-plain-1.xml`);
    expect(urlsetHead(plain)).toBe('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');

    const gallery1 = await document(env, `${origin}/sitemap-gallery-1.xml`);
    expect(urlsetHead(gallery1)).toBe(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" ${NS.image}>`);
    expect(gallery1.match(/<image:image><image:loc>/g)).toHaveLength(10);
    const gallery2 = await document(env, `${origin}/sitemap-gallery-2.xml`);
    expect(urlsetHead(gallery2)).toBe('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');

    const films = await document(env, `${origin}/sitemap-films-1.xml`);
    expect(urlsetHead(films)).toBe(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" ${NS.video} ${NS.xhtml}>`);
    expect(films).toContain(`<video:player_loc>https://player.example.net/0?a=1&amp;b=2</video:player_loc>`);
    expect(films).toContain(`<xhtml:link rel="alternate" hreflang="x-default" href="${origin}/films/1"/>`);
    expect(films).not.toContain("news:");
    for (const xml of [plain, gallery1, gallery2, films]) expect(XMLValidator.validate(xml)).toBe(true);
  });

  it("declares the namespace on the elements of a record written after the manifest was built", async () => {
    const { origin, env } = await site((o) => range(3).map((i) => ({ loc: `${o}/p/${i}` })));
    // Stamped after the manifest was built (which was now): the rows moved past its version.
    await fixture.upsert(env, validRecords(env, [{ loc: `${origin}/p/1`, videos: [video(origin, 1)] }]), Date.now() + 1_000);
    const xml = await document(env, `${origin}/sitemap-pages-1.xml`);
    expect(urlsetHead(xml)).not.toContain("xmlns:video");
    expect(xml).toContain(`<video:video ${NS.video}><video:thumbnail_loc>`);
    expect(XMLValidator.validate(xml)).toBe(true);

    await rebuildManifest(services(env), origin);
    const rebuilt = await document(env, `${origin}/sitemap-pages-1.xml`);
    expect(urlsetHead(rebuilt)).toContain(NS.video);
    expect(rebuilt).toContain("<video:video><video:thumbnail_loc>");
  });

  it("counts extension markup in shard bytes: shards split by it and stay under the limit", async () => {
    const maxBytes = 60_000;
    const images = (o: string, i: number) => range(40).map((k) => ({ loc: `${o}/images/${i}/${k}.jpg`, title: `Image ${k} of item ${i}` }));
    const { origin, env } = await site((o) => range(40).map((i) => ({ loc: `${o}/items/${i}`, images: images(o, i) })), {
      MAX_BYTES_PER_SHARD: String(maxBytes),
    });
    const manifest = await currentManifest(services(env), origin);
    // Without the image markup, 40 short URLs would fit in one shard many times over.
    expect(manifest.shards.length).toBeGreaterThanOrEqual(3);
    let served = 0;
    for (const shard of manifest.shards) {
      const bytes = new TextEncoder().encode(await document(env, `${origin}/sitemap-pages-${shard.n}.xml`)).byteLength;
      expect(bytes).toBeLessThanOrEqual(maxBytes);
      expect(bytes).toBeLessThanOrEqual(shard.byteCount);
      expect(bytes).toBeGreaterThan(shard.byteCount - 400);
      served += shard.urlCount;
    }
    expect(served).toBe(40);
  });
});

describe("ingest of extension data", () => {
  it("rejects 1,001 images with a typed issue and writes nothing", async () => {
    const origin = freshOrigin("ext-ingest");
    const env = d1Fixture.env({ SITES: origin });
    const images = range(1_001).map((i) => `${origin}/i/${i}.jpg`);
    const inputs = [{ loc: `${origin}/ok` }, { loc: `${origin}/many`, images }];
    expect(() => validRecords(env, inputs)).toThrow(RecordValidationError);

    const response = await call(env, `${origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" },
      body: JSON.stringify(inputs),
    });
    expect(response.status).toBe(422);
    const body = JSON.stringify(await response.json());
    expect(body).toContain('"rule":"max-count"');
    expect(body).toContain('"field":"images"');
    const stored = await env.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1").bind(origin).first<{ n: number }>();
    expect(stored?.n).toBe(0);
  });

  it("stores normalised extension JSON and the element size including its markup", async () => {
    const origin = freshOrigin("ext-store");
    const env = d1Fixture.env({ SITES: origin });
    await d1Fixture.upsert(env, validRecords(env, [{ loc: `${origin}/a`, images: [`${origin.toUpperCase().replace("HTTPS", "https")}/x.jpg`] }]));
    const row = await env.DB.prepare("SELECT ext, size, ext_kinds FROM urls WHERE loc = ?1")
      .bind(`${origin}/a`)
      .first<{ ext: string; size: number; ext_kinds: number }>();
    expect(JSON.parse(row!.ext)).toEqual({ images: [{ loc: `${origin}/x.jpg` }] });
    expect(row!.ext_kinds).toBe(EXT_IMAGE);
    expect(row!.size).toBe(`<url><loc>${origin}/a</loc><image:image><image:loc>${origin}/x.jpg</image:loc></image:image></url>\n`.length);
  });
});

describe("news sitemap", () => {
  async function newsSite(inputs: (origin: string, now: number) => unknown[], vars: Record<string, string> = {}) {
    const origin = freshOrigin("news");
    const env = d1Fixture.env({ SITES: origin, ...vars });
    const now = Date.now();
    await d1Fixture.upsert(env, validRecords(env, inputs(origin, now)), now - 10 * HOUR);
    await rebuildManifest(services(env), origin);
    return { origin, env, now };
  }

  it("lists only articles published in the last 2 days, newest first, and is listed in the index", async () => {
    const { origin, env } = await newsSite((o, now) => [
      { loc: `${o}/about` },
      article(o, 1, now - 1 * HOUR),
      article(o, 2, now - 47 * HOUR),
      article(o, 3, now - 49 * HOUR), // too old
      article(o, 4, now + 2 * HOUR), // not published yet
      article(o, 5, now - 5 * HOUR, { images: [`${o}/img/5.jpg`] }),
    ]);
    const res = await call(env, `${origin}/sitemap-news.xml`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    const xml = await res.text();
    expect(urlsetHead(xml)).toBe(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" ${NS.news}>`);
    expect(locsOf(xml)).toEqual([`${origin}/news/1`, `${origin}/news/5`, `${origin}/news/2`]);
    expect(xml).toContain("<news:title>Story 1 &amp; co</news:title>");
    expect(xml).toMatch(/<news:publication_date>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/news:publication_date>/);
    expect(xml).not.toContain("image:");
    expect(XMLValidator.validate(xml)).toBe(true);

    const index = await (await call(env, `${origin}/sitemap.xml`)).text();
    expect(locsOf(index)).toEqual([`${origin}/sitemap-articles-1.xml`, `${origin}/sitemap-pages-1.xml`, `${origin}/sitemap-news.xml`]);
    expect((await call(env, `${origin}/sitemap-news2.xml`)).status).toBe(404);
    // Section shards keep every article, old or new, without news markup.
    expect(locsOf(await (await call(env, `${origin}/sitemap-articles-1.xml`)).text())).toHaveLength(5);
  });

  it("puts 1,001 articles in two files, both listed; the gzip file form works too", async () => {
    const { origin, env } = await newsSite((o, now) => range(1_001).map((i) => article(o, i, now - 60_000 - i * 1_000)));
    const first = locsOf(await (await call(env, `${origin}/sitemap-news.xml`)).text());
    const second = locsOf(await (await call(env, `${origin}/sitemap-news2.xml`)).text());
    expect(first).toHaveLength(1_000);
    expect(second).toEqual([`${origin}/news/1000`]);
    expect(new Set([...first, ...second]).size).toBe(1_001);
    expect((await call(env, `${origin}/sitemap-news3.xml`)).status).toBe(404);
    const index = locsOf(await (await call(env, `${origin}/sitemap.xml`)).text());
    expect(index.filter((l) => l.includes("sitemap-news"))).toEqual([`${origin}/sitemap-news.xml`, `${origin}/sitemap-news2.xml`]);
    const gz = await call(env, `${origin}/sitemap-news2.xml.gz`);
    expect(gz.headers.get("content-type")).toBe("application/gzip");
  });

  it("is 404 and absent from the index when no article is recent, never an empty urlset", async () => {
    const { origin, env } = await newsSite((o, now) => [{ loc: `${o}/about` }, article(o, 1, now - 72 * HOUR)]);
    const res = await call(env, `${origin}/sitemap-news.xml`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("404 Not Found: no news articles from the last 2 days\n");
    const index = await (await call(env, `${origin}/sitemap.xml`)).text();
    expect(index).not.toContain("sitemap-news");

    const plain = await newsSite((o) => [{ loc: `${o}/about` }]);
    expect((await call(plain.env, `${plain.origin}/sitemap-news.xml`)).status).toBe(404);
    expect(await (await call(plain.env, `${plain.origin}/sitemap.xml`)).text()).not.toContain("sitemap-news");
  });

  it("changes the news sitemap's and the index's ETag when an article is added", async () => {
    const { origin, env, now } = await newsSite((o, t) => [article(o, 1, t - HOUR)]);
    const before = await call(env, `${origin}/sitemap-news.xml`);
    const indexBefore = await call(env, `${origin}/sitemap.xml`);
    await d1Fixture.upsert(env, validRecords(env, [article(origin, 2, now - 2 * HOUR)]), now);
    await rebuildManifest(services(env), origin);
    const after = await call(env, `${origin}/sitemap-news.xml`);
    const indexAfter = await call(env, `${origin}/sitemap.xml`);
    expect(after.headers.get("etag")).not.toBe(before.headers.get("etag"));
    expect(indexAfter.headers.get("etag")).not.toBe(indexBefore.headers.get("etag"));
    expect(locsOf(await after.text())).toEqual([`${origin}/news/1`, `${origin}/news/2`]);
    expect(Date.parse(after.headers.get("last-modified")!)).toBeGreaterThanOrEqual(Math.floor(now / 1000) * 1000);
  });
});

describe("date-only lastmod per site", () => {
  it("writes YYYY-MM-DD for the sites in DATE_ONLY_SITES only", async () => {
    const a = freshOrigin("dateonly");
    const b = freshOrigin("fulltime");
    const env = d1Fixture.env({ SITES: `${a} ${b}`, DATE_ONLY_SITES: a });
    const records = (o: string) => [{ loc: `${o}/x`, lastmod: "2026-03-04T05:06:07+02:00" }];
    await d1Fixture.upsert(env, validRecords(env, [...records(a), ...records(b)]));
    for (const o of [a, b]) await rebuildManifest(services(env), o);
    expect(await (await call(env, `${a}/sitemap-pages-1.xml`)).text()).toContain("<lastmod>2026-03-04</lastmod>");
    expect(await (await call(env, `${b}/sitemap-pages-1.xml`)).text()).toContain("<lastmod>2026-03-04T05:06:07+02:00</lastmod>");
    const bad = await call(d1Fixture.env({ SITES: a, DATE_ONLY_SITES: "https://elsewhere.example" }), `${a}/sitemap.xml`);
    expect(bad.status).toBe(503);
    expect(await bad.text()).not.toContain("DATE_ONLY_SITES");
  });
});
