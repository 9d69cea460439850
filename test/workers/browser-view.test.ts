/**
 * The browser view (docs/browser-view.md) through the real Worker entry, D1 and the Cache API:
 * top-level browser navigations get HTML that no cache keeps; every other request gets the XML,
 * byte for byte, with its validators; the Cache API never holds HTML under the XML's key, whichever
 * of crawler and browser comes first. A page of a shard reads its own rows, a filter reads the shard
 * once per version, on D1 and on KV, and both show what a scan of the records shows.
 */

import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { plural } from "../../src/core/plural.ts";
import type { StoredRecord } from "../../src/core/types.ts";
import { readableUrl } from "../../src/formats/view/readable-url.ts";
import { VIEW_CACHE_NAME, viewEntryKey } from "../../src/formats/view/view-cache.ts";
import { edgeKey } from "../../src/http/cache/edge.ts";
import worker from "../../src/index.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { d1Fixture, sourceFixtures } from "./fixtures/sources.ts";
import { bytesOf, call, gunzip, locsOf, range, seedSite, text, validRecords } from "./support.ts";

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
    expect(html).toMatch(/<meter min="0" max="50000" optimum="50000" value="10"/);
    expect(html).toMatch(/<meter min="0" max="52428800" optimum="52428800" value="\d+"/);
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
      const keys = (["identity", "gzip"] as const).map((r) => edgeKey({ origin, registeredAt: null }, "/sitemap-pages-1.xml", r, shard.version));
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

  it("shows each URL decoded for reading and links the exact loc; hidden, ASCII and malformed escapes stay as written", async () => {
    // Path, then what the row shows of it (after the origin).
    const cases: [string, string][] = [
      ["/stra%C3%9Fe-jalape%C3%B1o", "/straße-jalapeño"],
      ["/caf%C3%A9/%F0%9F%98%80", "/café/😀"], // a 4-byte character
      ["/a%20b/%3Cb%3E/%2F/%25C3%25A9", "/a%20b/%3Cb%3E/%2F/%25C3%25A9"], // ASCII escapes: as written
      ["/bidi/%E2%80%AEtxt.exe%C3%A9", "/bidi/%E2%80%AEtxt.exeé"], // RIGHT-TO-LEFT OVERRIDE stays encoded
      ["/hidden/a%E2%80%8Bb%C2%A0c%C2%ADd%EF%B8%8Fe%E3%80%80f", "/hidden/a%E2%80%8Bb%C2%A0c%C2%ADd%EF%B8%8Fe%E3%80%80f"], // ZWSP, NBSP, soft hyphen, VS16, ideographic space
      ["/bad/%C3%28%FF%C0%AF%E2%82/%ED%A0%80%C3%A9", "/bad/%C3%28%FF%C0%AF%E2%82/%ED%A0%80é"], // malformed, overlong, truncated, surrogate
    ];
    const { origin, env } = await seedSite(d1Fixture, "view-readable", (o) => cases.map(([path]) => ({ loc: `${o}${path}`, section: "pages" })));
    const res = await browser(env, `${origin}/sitemap-pages-1.xml`);
    const html = await res.text();
    const rows = [...html.matchAll(/<tr><td class="n">\d+<\/td><td><a href="([^"]*)">([^<]*)<\/a>/g)].map((m) => ({ href: m[1], text: m[2] }));
    const expected = cases.map(([path, shown]) => ({ href: `${origin}${path}`, text: `${origin}${shown}` }));
    expect(rows).toHaveLength(cases.length);
    expect(rows).toEqual(expect.arrayContaining(expected));
    // The XML (what crawlers read) is untouched.
    const xml = text(await bytesOf(await crawler(env, `${origin}/sitemap-pages-1.xml`)));
    expect(locsOf(xml).sort()).toEqual(expected.map((e) => e.href).sort());

    // The filter finds what is shown, typed either way.
    const filter = async (q: string) => hrefs(await (await browser(env, `${origin}/sitemap-pages-1.xml?q=${encodeURIComponent(q)}`)).text(), "urls");
    expect(await filter("STRASSE".toLowerCase())).toEqual([]);
    expect(await filter("Straße-JALAPEÑO")).toEqual([`${origin}/stra%C3%9Fe-jalape%C3%B1o`]);
    expect(await filter("stra%c3%9fe")).toEqual([`${origin}/stra%C3%9Fe-jalape%C3%B1o`]);
    expect(await filter("%E2%80%AE")).toEqual([`${origin}/bidi/%E2%80%AEtxt.exe%C3%A9`]);

    // Decoding never makes markup, and never hides a character.
    expect(readableUrl("/%3Cscript%3E%22%27")).toBe("/%3Cscript%3E%22%27");
    for (const hidden of ["%E2%80%8F", "%E2%81%A6", "%D8%9C", "%EF%BB%BF", "%E1%85%9F", "%F3%A0%80%81", "%EE%80%80", "%C2%85", "%E2%80%A8"]) {
      expect(readableUrl(`/x${hidden}y`), hidden).toBe(`/x${hidden}y`);
    }
    expect(readableUrl("/no-escapes/ü")).toBe("/no-escapes/ü");
    expect(readableUrl("/caf%c3%a9")).toBe("/café"); // lowercase hex, as a typed filter may have it
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

  for (const fixture of sourceFixtures) {
    describe(`cost on ${fixture.name}`, () => {
      const PAGES = 5_400; // two chunks of the view cache (5,000 rows each)
      /** `pages` records with `blog` records (another section) among their keys, so a shard's range has gaps. */
      const inputs = (o: string) => [
        ...range(PAGES).flatMap((i) => [
          { loc: `${o}/p/${i}`, section: "pages", lastmod: "2026-01-02", ...(i % 7 === 0 ? { changefreq: "daily", priority: 0.8 } : {}) },
          ...(i % 10 === 0 ? [{ loc: `${o}/blog/${i}`, section: "blog" }] : []),
        ]),
        tricky(o),
      ];
      /** Tombstones inside the range too. */
      const deleted = (o: string) => range(PAGES / 45).map((i) => `${o}/p/${i * 45 + 3}`);

      async function site(label: string) {
        const seeded = await seedSite(fixture, label, inputs, { MAX_URLS_PER_SHARD: "50000" });
        await fixture.delete(seeded.env, deleted(seeded.origin), Date.UTC(2026, 0, 2));
        const s = services(seeded.env);
        const manifest = await rebuildManifest(s, seeded.origin);
        const shard = manifest.shards.find((x) => x.section === "pages")!;
        // What a scan of the shard's records shows: the rows, in order.
        const all: StoredRecord[] = [];
        for await (const page of s.store.reader.recordPages({
          origin: seeded.origin,
          section: "pages",
          firstKey: shard.firstKey,
          lastKey: shard.lastKey,
        })) {
          all.push(...page);
        }
        expect(all).toHaveLength(PAGES + 1 - PAGES / 45);
        return { ...seeded, all, url: `${seeded.origin}/sitemap-pages-1.xml` };
      }

      /**
       * The page as a browser gets it, with what the record store read for it. After-work that
       * the streamed body starts (the view cache's puts) is awaited after the body, as the runtime does.
       */
      async function view(env: Env, url: string): Promise<{ html: string; read: number }> {
        const counted = countingEnv(env);
        const ctx = createExecutionContext();
        const request = new Request(url, { headers: NAVIGATE }) as Request<unknown, IncomingRequestCfProperties>;
        const res = await worker.fetch(request, counted.env, ctx);
        expect(res.status, url).toBe(200);
        expect(res.headers.get("cache-control")).toBe("private, no-store");
        const html = await res.text();
        await waitOnExecutionContext(ctx);
        return { html, read: counted.read() };
      }

      const tbody = (html: string) => html.slice(html.indexOf("<tbody>"), html.indexOf("</tbody>"));
      const numbers = (html: string) => [...tbody(html).matchAll(/<tr><td class="n">(\d+)<\/td>/g)].map((m) => Number(m[1]));

      const showsPage = (all: StoredRecord[], html: string, page: number) => {
        const expected = all.slice((page - 1) * 1_000, page * 1_000);
        expect(hrefs(html, "urls"), `page ${page}`).toEqual(expected.map((r) => r.loc));
        expect(numbers(html)).toEqual(range(expected.length, (page - 1) * 1_000 + 1));
        expect([...tbody(html).matchAll(/<td class="date">([^<]*)<\/td>/g)].map((m) => m[1])).toEqual(expected.map((r) => r.lastmod));
        expect(html.includes('rel="next"')).toBe(page < 6);
      };
      /** About one page: D1 rows of the page's key range (its tombstones too); KV keys of the blocks it spans. */
      const onePage = fixture.name === "d1" ? 1_050 : 3;

      it("reads only a page's own key range, from the first view on, and shows what a scan shows", async () => {
        const { origin, env, url, all } = await site(`view-cost-${fixture.name}`);
        const shard = (await services(env).manifests.load(origin))!.shards.find((x) => x.section === "pages")!;
        expect(shard.pageStarts).toEqual(range(6).map((i) => all[i * 1_000]!.key));
        for (const page of [4, 2, 6, 1, 5, 4]) {
          const { html, read } = await view(env, `${url}?page=${page}`);
          showsPage(all, html, page);
          expect(read, `page ${page}`).toBeLessThanOrEqual(onePage);
          expect(read, `page ${page}`).toBeGreaterThan(0);
          if (page === 6) {
            expect(hrefs(html, "urls").at(-1)).toBe(`${origin}/quotes/it's?q=%22a%22&b=%3Cc%3E`);
            expect(html).toContain(`/quotes/it&apos;s?q=%22a%22&amp;b=%3Cc%3E">`);
          }
        }
        const beyond = await view(env, `${url}?page=9`);
        expect(beyond.html).toContain("No URL on this page.");
        expect(beyond.read).toBe(0);
      });

      it("without page starts (a manifest planned before them) reads the version through once, then a page's own rows or none", async () => {
        const { origin, env, url, all } = await site(`view-old-${fixture.name}`);
        const s = services(env);
        const manifest = (await s.manifests.load(origin))!;
        await s.manifests.save({ ...manifest, shards: manifest.shards.map(({ pageStarts: _starts, ...rest }) => rest) });
        const shard = (await s.manifests.load(origin))!.shards.find((x) => x.section === "pages")!;
        expect(shard.pageStarts).toBeUndefined();
        const whole = await view(env, `${url}?page=4`);
        showsPage(all, whole.html, 4);
        // The whole shard, once: every row (D1) or every block (KV, ~1,000 keys a block).
        expect(whole.read).toBeGreaterThanOrEqual(fixture.name === "d1" ? all.length : 5);
        for (const page of [4, 2, 6, 1]) {
          const { html, read } = await view(env, `${url}?page=${page}`);
          showsPage(all, html, page);
          // Each page of the version is kept as shown: no record read.
          expect(read, `page ${page}`).toBe(0);
          if (page === 4) expect(tbody(html)).toBe(tbody(whole.html));
        }
        // A page whose entry is gone reads its own key range only, from the digest's page starts.
        const cache = await caches.open(VIEW_CACHE_NAME);
        for (const page of [5, 1]) {
          expect(await cache.delete(viewEntryKey({ origin, registeredAt: null }, "/sitemap-pages-1.xml", shard.version, `p${page - 1}`))).toBe(true);
          const { html, read } = await view(env, `${url}?page=${page}`);
          showsPage(all, html, page);
          expect(read, `page ${page}`).toBeLessThanOrEqual(onePage);
          expect(read).toBeGreaterThan(0);
        }
      });

      it("reads the shard once per version for any number of filters, and shows what a scan shows", async () => {
        const { origin, env, url, all } = await site(`view-filter-${fixture.name}`);
        const filter = async (q: string, page = 1) => view(env, `${url}?q=${encodeURIComponent(q)}${page > 1 ? `&page=${page}` : ""}`);
        const expectMatches = (html: string, q: string, page = 1) => {
          const matches = all.filter((r) => r.loc.toLowerCase().includes(q.toLowerCase()));
          const shown = matches.slice((page - 1) * 1_000, page * 1_000);
          expect(hrefs(html, "urls"), q).toEqual(shown.map((r) => r.loc));
          expect(numbers(html)).toEqual(range(shown.length, (page - 1) * 1_000 + 1));
          expect(html).toContain(`${plural(matches.length, "URL")} ${matches.length === 1 ? "contains" : "contain"}`);
          expect(html.includes('rel="next"')).toBe(matches.length > page * 1_000);
        };

        const first = await filter("/P/12");
        expectMatches(first.html, "/P/12");
        const wholeShard = fixture.name === "d1" ? all.length : 5;
        expect(first.read).toBeGreaterThanOrEqual(wholeShard);
        // The same filter again, other filters, a later page of one: no record read.
        const again = await filter("/P/12");
        expect(again.read).toBe(0);
        expect(tbody(again.html)).toBe(tbody(first.html));
        for (const [q, page] of [
          ["/p/1", 1],
          ["/p/1", 2],
          ["it's?q=", 1],
          ['"><script>', 1],
          ["p", 5],
          ["p", 6],
          ["/p/52", 1],
        ] as const) {
          const { html, read } = await filter(q, page);
          expect(read, q).toBe(0);
          expectMatches(html, q, page);
        }
        const escaped = await filter("it's?q=");
        expect(escaped.html).toContain(`<a href="${origin}/quotes/it&apos;s?q=%22a%22&amp;b=%3Cc%3E">`);
        expect(escaped.html).not.toContain("<c>");
        const none = await filter('"><script>');
        expect(none.html).toContain("No URL contains “&quot;&gt;&lt;script&gt;”");
        expect(none.html).not.toContain("<script>");

        // An entry gone from the cache: the filter reads the shard again rather than show part of an answer.
        const shard = (await services(env).manifests.load(origin))!.shards.find((x) => x.section === "pages")!;
        // (its locs, or a page holding rows it shows: /p/5200… are on page 6)
        for (const entry of ["m1", "p5"]) {
          expect(
            await (await caches.open(VIEW_CACHE_NAME)).delete(viewEntryKey({ origin, registeredAt: null }, "/sitemap-pages-1.xml", shard.version, entry)),
          ).toBe(true);
          const evicted = await filter("/p/52");
          expect(evicted.read, entry).toBeGreaterThanOrEqual(wholeShard);
          expectMatches(evicted.html, "/p/52");
          expect((await filter("/p/52")).read).toBe(0);
        }

        // A new version is read again, and shows the change.
        await fixture.upsert(env, validRecords(env, [{ loc: `${origin}/p/12?new`, section: "pages" }]), Date.UTC(2026, 0, 3));
        await rebuildManifest(services(env), origin);
        const changed = await filter("/p/12");
        expect(changed.read).toBeGreaterThanOrEqual(wholeShard);
        expect(hrefs(changed.html, "urls").at(-1)).toBe(`${origin}/p/12?new`);
        expect((await filter("/p/12")).read).toBe(0);
      });
    });
  }
});

/**
 * `env` with the record store's reads counted: D1 rows read by statements on the `urls` table
 * (`meta.rows_read`), or keys read from the KV namespace of records.
 */
function countingEnv(env: Env): { env: Env; read(): number } {
  let read = 0;
  const real = new WeakMap<object, D1PreparedStatement>();
  const statement = (stmt: D1PreparedStatement, records: boolean): D1PreparedStatement => {
    const counted = async <T>(result: Promise<D1Result<T>>) => {
      const r = await result;
      if (records) read += r.meta.rows_read ?? 0;
      return r;
    };
    const wrapped = {
      bind: (...values: unknown[]) => statement(stmt.bind(...values), records),
      all: () => counted(stmt.all()),
      run: () => counted(stmt.run()),
      async first(column?: string) {
        const row = (await counted(stmt.all<Record<string, unknown>>())).results[0];
        return row === undefined ? null : column === undefined ? row : (row[column] ?? null);
      },
      raw: () => {
        throw new Error("countingEnv: raw() is not counted");
      },
    } as unknown as D1PreparedStatement;
    real.set(wrapped, stmt);
    return wrapped;
  };
  const db = {
    prepare: (sql: string) => statement(env.DB.prepare(sql), /\bFROM urls\b/i.test(sql)),
    batch: (statements: D1PreparedStatement[]) => env.DB.batch(statements.map((s) => real.get(s) ?? s)),
    exec: (sql: string) => env.DB.exec(sql),
    withSession: () => {
      throw new Error("countingEnv: withSession is not counted");
    },
  } as unknown as D1Database;
  const urls = new Proxy(env.URLS, {
    get(target, name) {
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (name === "get" || name === "getWithMetadata") read += Array.isArray(args[0]) ? args[0].length : 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { env: { ...env, DB: db, URLS: urls } as Env, read: () => read };
}
