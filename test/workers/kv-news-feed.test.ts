/**
 * News sitemaps and the Atom feed of recent changes on the KV source (from the indexes of each
 * site's writer object): the same history written into D1 and into KV serves byte-identical
 * `/sitemap-news.xml`, `/sitemap-feed.atom` and index (which lists both).
 */
import { XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { kvFixture } from "./fixtures/kv.ts";
import { d1Fixture } from "./fixtures/sources.ts";
import { call, freshOrigin, locsOf, range, validRecords } from "./support.ts";

const HOUR = 3_600_000;

const article = (origin: string, i: number, publishedAt: number) => ({
  loc: `${origin}/news/${i}`,
  section: "articles",
  news: { publication: { name: "The Example Times", language: "en" }, publication_date: new Date(publishedAt).toISOString(), title: `Story ${i} & co` },
});

describe("news sitemap and Atom feed on KV", () => {
  it("serve what D1 serves for the same history, byte for byte, and are listed in the index", async () => {
    const origin = freshOrigin("kvnews");
    const vars = { SITES: origin, EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0", FEED_SIZE: "10", FEED_IN_INDEX: "true" };
    const now = Date.now();
    const t0 = now - 10 * HOUR;
    const history = (e: Env) => ({
      first: validRecords(e, [
        ...demoSection(origin, "pages", 30),
        ...range(5).map((i) => article(origin, i, now - (i + 1) * HOUR)),
        article(origin, 9, now - 72 * HOUR),
      ]),
      // A recent change, a deleted article, a new article.
      second: validRecords(e, [{ loc: `${origin}/${"pages"}-changed`, lastmod: "2026-01-02" }, article(origin, 7, now - 30 * 60_000)]),
      gone: [`${origin}/news/3`],
    });
    const bodies = new Map<string, string[]>();
    for (const fixture of [d1Fixture, kvFixture]) {
      const e = fixture.env(vars);
      const h = history(e);
      await fixture.upsert(e, h.first, t0);
      await fixture.upsert(e, h.second, t0 + 1_000);
      await fixture.delete(e, h.gone, t0 + 2_000);
      await rebuildManifest(services(e), origin);
      const texts: string[] = [];
      for (const path of ["/sitemap-news.xml", "/sitemap-feed.atom", "/sitemap.xml"]) {
        const res = await call(e, `${origin}${path}`, { headers: { "Accept-Encoding": "identity" } });
        expect(res.status, `${fixture.name} ${path}`).toBe(200);
        texts.push(await res.text());
      }
      bodies.set(fixture.name, texts);
    }
    const [news, feed, index] = bodies.get("kv")!;
    expect(bodies.get("kv")).toEqual(bodies.get("d1"));

    // Articles of the last 2 days, newest first; the deleted one and the old one are not there.
    expect(locsOf(news!)).toEqual([7, 0, 1, 2, 4].map((i) => `${origin}/news/${i}`));
    expect(XMLValidator.validate(news!)).toBe(true);
    // The newest changes first: the deleted article is gone, the changed page and the new article lead.
    expect(feed).toContain(`<id>${origin}/${"pages"}-changed</id>`);
    expect(feed!.indexOf(`${origin}/news/7`)).toBeLessThan(feed!.indexOf(`${origin}/news/0`));
    expect(feed).not.toContain(`${origin}/news/3<`);
    expect(locsOf(index!)).toEqual(expect.arrayContaining([`${origin}/sitemap-news.xml`, `${origin}/sitemap-feed.atom`]));
  });
});
