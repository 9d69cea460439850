/**
 * The browser view (docs/browser-view.md) through the real Worker entry, D1 and the Cache API:
 * top-level browser navigations get HTML that no cache keeps; every other request gets the XML,
 * byte for byte, with its validators; the Cache API never holds HTML under the XML's key, whichever
 * of crawler and browser comes first.
 */
import { describe, expect, it } from "vitest";
import { edgeKey } from "../../src/cache/edge.ts";
import { services } from "../../src/services.ts";
import { d1Fixture } from "./fixtures/sources.ts";
import { bytesOf, call, gunzip, locsOf, range, seedSite, text } from "./support.ts";

const NAVIGATE = {
  "Sec-Fetch-Dest": "document",
  "Sec-Fetch-Mode": "navigate",
  "Sec-Fetch-Site": "none",
  Accept: "text/html,application/xml;q=0.9,*/*;q=0.8",
};
const browser = (env: Env, url: string, headers: Record<string, string> = {}) => call(env, url, { headers: { ...NAVIGATE, ...headers } });
const crawler = (env: Env, url: string) => call(env, url, { headers: { "Accept-Encoding": "identity" } });

/** The `<a href>` values of a table's rows (HTML-decoded the way the page's own escaping needs). */
function hrefs(html: string, table: string): string[] {
  const body = html.slice(html.indexOf(`<table id="${table}">`), html.indexOf("</table>", html.indexOf(`<table id="${table}">`)));
  return [...body.matchAll(/<tr><td class="n">\d+<\/td><(?:td|th scope="row")><a href="([^"]*)"/g)].map((m) =>
    m[1]!.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&amp;", "&"),
  );
}

const tricky = (o: string) => ({ loc: `${o}/quotes/it's?q="a"&b=<c>`, section: "pages", lastmod: "2026-01-02" });

describe("browser view", () => {
  it("shows the index with a real link, fill and lastmod per listed sitemap; the XML is unchanged for crawlers", async () => {
    const { origin, env } = await seedSite(
      d1Fixture,
      "view-index",
      (o) => [...range(30).map((i) => ({ loc: `${o}/p/${i}`, section: "pages" })), tricky(o)],
      {
        MAX_URLS_PER_SHARD: "10",
        FEED_IN_INDEX: "true",
      },
    );
    const before = await crawler(env, `${origin}/sitemap.xml`);
    const xml = await bytesOf(before);
    const res = await browser(env, `${origin}/sitemap.xml`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.headers.get("etag")).toBeNull();
    expect(res.headers.get("x-sitemap-source")).toBe("view");
    const html = await res.text();
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).not.toContain("<script");
    // One link per listed sitemap, in the index's order: shards (4), then the feed.
    const listed = locsOf(text(xml));
    expect(listed).toHaveLength(5);
    expect(hrefs(html, "sitemaps").map((href) => origin + href)).toEqual(listed);
    expect(html).toContain('<strong id="count">5</strong>');
    expect(html).toContain("10 URLs");
    expect(html).toMatch(/<meter min="0" max="50000" value="10"/);
    expect(html).toMatch(/<meter min="0" max="52428800" value="\d+"/);
    const lastmods = [...text(xml).matchAll(/<lastmod>([^<]*)<\/lastmod>/g)].map((m) => m[1]);
    expect([...html.matchAll(/<td class="date">([^<]*)<\/td>/g)].map((m) => m[1])).toEqual(lastmods);

    const after = await crawler(env, `${origin}/sitemap.xml`);
    expect(after.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    expect(after.headers.get("cache-control")).toBe(before.headers.get("cache-control"));
    expect(await bytesOf(after)).toEqual(xml);
  });

  for (const order of ["browser first", "crawler first"] as const) {
    it(`keeps each its own representation, ${order}, and the Cache API only ever holds the XML`, async () => {
      const { origin, env } = await seedSite(d1Fixture, "view-cache", (o) => range(50).map((i) => ({ loc: `${o}/p/${i}`, section: "pages" })));
      const url = `${origin}/sitemap-pages-1.xml`;
      const shard = (await services(env).manifests.load(origin))!.shards[0]!;
      const keys = (["identity", "gzip"] as const).map((r) => edgeKey(origin, "/sitemap-pages-1.xml", r, shard.version));
      const cached = async () => Promise.all(keys.map(async (key) => (await caches.default.match(key))?.text() ?? null));

      const asBrowser = async () => {
        const res = await browser(env, url, { "Accept-Encoding": "gzip, deflate, br" });
        expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
        expect(res.headers.get("cache-control")).toBe("private, no-store");
        expect(await res.text()).toContain(`<a href="${origin}/p/0">`);
      };
      let xml: Uint8Array | null = null;
      const asCrawler = async (source: string) => {
        const res = await crawler(env, url);
        expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
        expect(res.headers.get("x-sitemap-source")).toBe(source);
        const body = await bytesOf(res);
        if (xml) expect(body).toEqual(xml);
        xml = body;
        expect(text(body)).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<\?xml-stylesheet type="text\/xsl" href="\/sitemap\.xsl"\?>\n<urlset /);
      };

      if (order === "browser first") {
        await asBrowser();
        expect(await cached()).toEqual([null, null]);
        await asCrawler("live");
        await asBrowser();
        await asCrawler("cache");
      } else {
        await asCrawler("live");
        await asBrowser();
        await asCrawler("cache");
      }
      const [identity, gz] = await cached();
      expect(identity).toBe(text(xml!));
      expect(gz).toBeNull();
      // Also after a gzip crawler: still no HTML under either key.
      await (await call(env, url, { headers: { "Accept-Encoding": "gzip" } })).arrayBuffer();
      await asBrowser();
      const gzCached = await caches.default.match(keys[1]!);
      expect(gzCached).toBeDefined();
      expect(text(await gunzip(await bytesOf(gzCached!)))).toBe(text(xml!));
    });
  }

  it("is for top-level GET navigations only; a validator of the XML never turns it into a 304", async () => {
    const { origin, env } = await seedSite(d1Fixture, "view-only", (o) => range(5).map((i) => ({ loc: `${o}/p/${i}`, section: "pages" })));
    const url = `${origin}/sitemap-pages-1.xml`;
    const xml = await crawler(env, url);
    const etag = xml.headers.get("etag")!;
    const type = async (res: Response) => {
      await res.arrayBuffer();
      return res.headers.get("content-type");
    };
    expect(await type(await call(env, url, { headers: { "Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors" } }))).toBe("application/xml; charset=utf-8");
    expect(await type(await call(env, url, { headers: { "Sec-Fetch-Dest": "iframe", "Sec-Fetch-Mode": "navigate" } }))).toBe(
      "application/xml; charset=utf-8",
    );
    expect(await type(await call(env, url, { method: "HEAD", headers: NAVIGATE }))).toBe("application/xml; charset=utf-8");
    expect(await type(await browser(env, `${origin}/sitemap-pages-1.xml.gz`))).toBe("application/gzip");
    expect(await type(await browser(env, `${origin}/sitemap-pages-1.txt`))).toBe("text/plain; charset=utf-8");
    const conditional = await browser(env, url, { "If-None-Match": etag });
    expect(conditional.status).toBe(200);
    expect(await type(conditional)).toBe("text/html; charset=utf-8");

    const off = await seedSite(d1Fixture, "view-off", (o) => [{ loc: `${o}/p/1`, section: "pages" }], { BROWSER_VIEW: "false" });
    const res = await browser(off.env, `${off.origin}/sitemap.xml`);
    expect(await type(res)).toBe("application/xml; charset=utf-8");
  });

  it("pages a shard 1,000 rows at a time with real links, filters by URL substring, and escapes", async () => {
    const { origin, env } = await seedSite(d1Fixture, "view-pages", (o) => [
      ...range(2_400).map((i) => ({ loc: `${o}/p/${i}`, section: "pages" })),
      tricky(o),
    ]);
    const url = `${origin}/sitemap-pages-1.xml`;
    const page = async (query: string) => {
      const res = await browser(env, url + query);
      expect(res.status, query).toBe(200);
      return res.text();
    };
    const first = await page("");
    const firstLinks = hrefs(first, "urls");
    expect(firstLinks).toHaveLength(1_000);
    expect(firstLinks[0]).toBe(`${origin}/p/0`);
    expect(first).toContain('<a rel="next" href="/sitemap-pages-1.xml?page=2">');
    expect(first).not.toContain('rel="prev"');
    // Above the table (from the manifest's count) and below it (from the records read).
    expect(first.match(/rel="next"/g)).toHaveLength(2);
    expect(first.indexOf('rel="next"')).toBeLessThan(first.indexOf('<table id="urls">'));
    expect(first).toContain("page 1 of 3");

    const last = await page("?page=3");
    const lastLinks = hrefs(last, "urls");
    expect(lastLinks).toHaveLength(401);
    expect(lastLinks.at(-1)).toBe(`${origin}/quotes/it's?q=%22a%22&b=%3Cc%3E`);
    // The URL is escaped in the attribute and the text: no raw quote or `<` reaches the markup.
    expect(last).toContain(`<a href="${origin}/quotes/it&apos;s?q=%22a%22&amp;b=%3Cc%3E">`);
    expect(last).toContain('<tr><td class="n">2401</td>');
    expect(last).toContain('<a rel="prev" href="/sitemap-pages-1.xml?page=2">');
    expect(last).not.toContain('rel="next"');

    // `/p/12` matches /p/12, /p/120–129 and /p/1200–1299: 111 URLs, one page.
    const filtered = await page("?q=%2Fp%2F12");
    expect(hrefs(filtered, "urls")).toHaveLength(111);
    expect(filtered).toContain("111 URLs contain “/p/12”");
    expect(filtered).toContain('value="/p/12"');
    expect(filtered).not.toContain('rel="next"');
    const none = await page(`?q=${encodeURIComponent('"><script>x')}`);
    expect(none).toContain("No URL contains “&quot;&gt;&lt;script&gt;x”");
    expect(none).toContain('value="&quot;&gt;&lt;script&gt;x"');
    expect(none).not.toContain("<script>");

    const bad = await browser(env, `${url}?page=0`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("page must be a page number");
    expect((await browser(env, `${url}?q=${"x".repeat(201)}`)).status).toBe(400);
  });

  it("shows news sitemaps and the feed", async () => {
    const now = Date.now();
    const { origin, env } = await seedSite(
      d1Fixture,
      "view-news",
      (o) => [
        { loc: `${o}/p/1`, section: "pages" },
        {
          loc: `${o}/news/a?x=1&y=2`,
          section: "news",
          news: {
            publication: { name: "Daily & Co", language: "en" },
            publication_date: new Date(now - 60_000).toISOString(),
            title: 'Big <b>"bold"</b>',
          },
        },
      ],
      {},
      now,
    );
    const index = await (await browser(env, `${origin}/sitemap.xml`)).text();
    expect(hrefs(index, "sitemaps")).toEqual(["/sitemap-news-1.xml", "/sitemap-pages-1.xml", "/sitemap-news.xml"]);
    const news = await browser(env, `${origin}/sitemap-news.xml`);
    expect(news.headers.get("cache-control")).toBe("private, no-store");
    const html = await news.text();
    expect(html).toContain("<h1>News sitemap</h1>");
    expect(html).toContain(`<a href="${origin}/news/a?x=1&amp;y=2">`);
    expect(html).toContain('<div class="news">Big &lt;b&gt;&quot;bold&quot;&lt;/b&gt; (Daily &amp; Co, ');
    const feed = await browser(env, `${origin}/sitemap-feed.atom`);
    expect(feed.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const feedHtml = await feed.text();
    expect(hrefs(feedHtml, "urls")).toEqual([`${origin}/news/a?x=1&y=2`, `${origin}/p/1`]);
    expect((await crawler(env, `${origin}/sitemap-feed.atom`)).headers.get("content-type")).toBe("application/atom+xml; charset=utf-8");
  });
});
