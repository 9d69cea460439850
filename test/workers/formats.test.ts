/**
 * Other formats through the real Worker entry: text sitemaps (lines = the XML's <loc>s, unescaped),
 * the Atom feed (parsed and structure-checked with fast-xml-parser), and the browser view's XSL and
 * processing instruction.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { demoSection, withDemoExtensions } from "../../src/demo/demo-data.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { d1Fixture } from "./fixtures/sources.ts";
import { bytesOf, call, freshOrigin, gunzip, locsOf, range, text, validRecords } from "./support.ts";

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", isArray: (name) => ["entry", "link", "url", "sitemap"].includes(name) });

async function site(inputs: (origin: string) => unknown[], vars: Record<string, string> = {}, now = Date.UTC(2026, 0, 1)) {
  const origin = freshOrigin("formats");
  const env = d1Fixture.env({ SITES: origin, ...vars });
  await d1Fixture.upsert(env, validRecords(env, inputs(origin)), now);
  await rebuildManifest(services(env), origin);
  return { origin, env };
}

const tricky = (o: string) => [
  { loc: `${o}/quotes/it's?q="a"&b=<c>`, section: "pages" },
  { loc: `${o}/caf\u00e9/\u65e5\u672c?x=1&y=2`, section: "pages" },
];

describe("text sitemaps", () => {
  it("list exactly the XML shard's <loc>s, unescaped, one per line, for every shard", async () => {
    const { origin, env } = await site(
      (o) => [...demoSection(o, "pages", 250), ...withDemoExtensions("products", demoSection(o, "products", 600), Date.now()), ...tricky(o)],
      { MAX_URLS_PER_SHARD: "200" },
    );
    const shards = locsOf(await (await call(env, `${origin}/sitemap.xml`)).text());
    expect(shards.length).toBe(5);
    let lines = 0;
    for (const shardUrl of shards) {
      const xml = await (await call(env, shardUrl)).text();
      const res = await call(env, shardUrl.replace(/\.xml$/, ".txt"));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      const body = await res.text();
      expect(body.endsWith("\n")).toBe(true);
      const txt = body.slice(0, -1).split("\n");
      expect(txt).toEqual(locsOf(xml));
      lines += txt.length;
    }
    expect(lines).toBe(852);
    const pages = await (await call(env, `${origin}/sitemap-pages-2.txt`)).text();
    expect(pages).toContain(`${origin}/quotes/it's?q=%22a%22&b=%3Cc%3E\n`);
    expect(pages).toContain(`${origin}/caf%C3%A9/%E6%97%A5%E6%9C%AC?x=1&y=2\n`);
  });

  it("negotiate gzip, carry their own ETag and answer 404 for unknown shards", async () => {
    const { origin, env } = await site((o) => range(5).map((i) => ({ loc: `${o}/p/${i}` })));
    const identity = await call(env, `${origin}/sitemap-pages-1.txt`);
    const gz = await call(env, `${origin}/sitemap-pages-1.txt`, { headers: { "Accept-Encoding": "gzip" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("vary")).toBe("Accept-Encoding");
    const xml = await call(env, `${origin}/sitemap-pages-1.xml`);
    expect(identity.headers.get("etag")).not.toBe(xml.headers.get("etag"));
    expect(identity.headers.get("x-robots-tag")).toBe("noindex");
    expect(text(await bytesOf(identity))).toBe(
      range(5)
        .map((i) => `${origin}/p/${i}\n`)
        .join(""),
    );
    // The test client may hand back the encoded bytes or decode them itself: either way, the same text.
    const gzBytes = await bytesOf(gz);
    const decoded = gzBytes[0] === 0x1f && gzBytes[1] === 0x8b ? await gunzip(gzBytes) : gzBytes;
    expect(text(decoded)).toBe(
      range(5)
        .map((i) => `${origin}/p/${i}\n`)
        .join(""),
    );
    for (const path of ["/sitemap-pages-2.txt", "/sitemap-nosuch-1.txt", "/sitemap-pages-0.txt", "/sitemap-pages-1.txt.gz"]) {
      expect((await call(env, origin + path)).status, path).toBe(404);
    }
    const head = await call(env, `${origin}/sitemap-pages-1.txt`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });
});

describe("Atom feed of recent changes", () => {
  it("is valid Atom: the newest changes first, bounded by FEED_SIZE, with id, title, updated and link per entry", async () => {
    const origin = freshOrigin("feed");
    const env = d1Fixture.env({ SITES: origin, FEED_SIZE: "25" });
    const base = Date.UTC(2026, 2, 1);
    // 40 records changed one minute apart; the newest has news data, one has a tricky URL.
    for (const i of range(40)) {
      const input =
        i === 39
          ? {
              loc: `${origin}/news/latest`,
              news: { publication: { name: "Daily", language: "en" }, publication_date: "2026-03-01T12:00:00Z", title: "Big & bold" },
            }
          : i === 38
            ? tricky(origin)[0]!
            : { loc: `${origin}/page/${i}` };
      await d1Fixture.upsert(env, validRecords(env, [input]), base + i * 60_000);
    }
    await rebuildManifest(services(env), origin);

    const res = await call(env, `${origin}/sitemap-feed.atom`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/atom+xml; charset=utf-8");
    const xml = await res.text();
    expect(XMLValidator.validate(xml)).toBe(true);
    const { feed } = parser.parse(xml) as { feed: Record<string, unknown> & { entry: Record<string, unknown>[]; link: Record<string, string>[] } };
    expect(feed["@xmlns"]).toBe("http://www.w3.org/2005/Atom");
    expect(feed["id"]).toBe(`${origin}/sitemap-feed.atom`);
    expect(String(feed["title"])).toContain(new URL(origin).host);
    expect(feed["updated"]).toBe("2026-03-01T00:39:00Z");
    expect(feed["author"]).toEqual({ name: new URL(origin).host });
    expect(feed.link).toEqual(
      expect.arrayContaining([
        { "@rel": "self", "@type": "application/atom+xml", "@href": `${origin}/sitemap-feed.atom` },
        { "@rel": "alternate", "@type": "text/html", "@href": `${origin}/` },
      ]),
    );

    const entries = feed.entry;
    expect(entries).toHaveLength(25);
    const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/;
    const updated = entries.map((e) => String(e["updated"]));
    for (const [i, entry] of entries.entries()) {
      expect(entry["id"], `entry ${i}`).toBeTruthy();
      expect(entry["title"], `entry ${i}`).toBeTruthy();
      expect(updated[i]).toMatch(RFC3339);
      const links = entry["link"] as Record<string, string>[];
      expect(links).toEqual([{ "@rel": "alternate", "@href": entry["id"] }]);
    }
    expect([...updated].sort().reverse()).toEqual(updated);
    expect(entries[0]).toMatchObject({ id: `${origin}/news/latest`, title: "Big & bold", published: "2026-03-01T12:00:00Z" });
    expect(entries[1]!["id"]).toBe(`${origin}/quotes/it's?q=%22a%22&b=%3Cc%3E`);
    expect(entries.map((e) => e["id"])).not.toContain(`${origin}/page/0`);
    expect(new Set(entries.map((e) => e["id"])).size).toBe(25);
  });

  it("is 404 with FEED_SIZE=0 or when the site has no URLs, and listed in the index only with FEED_IN_INDEX", async () => {
    const { origin, env } = await site((o) => [{ loc: `${o}/a` }]);
    expect(await (await call(env, `${origin}/sitemap.xml`)).text()).not.toContain("sitemap-feed.atom");
    const listed = await call({ ...env, FEED_IN_INDEX: "true" } as Env, `${origin}/sitemap.xml`);
    expect(locsOf(await listed.text())).toEqual([`${origin}/sitemap-pages-1.xml`, `${origin}/sitemap-feed.atom`]);
    expect((await call({ ...env, FEED_SIZE: "0" } as Env, `${origin}/sitemap-feed.atom`)).status).toBe(404);
    const empty = freshOrigin("feed-empty");
    expect((await call(d1Fixture.env({ SITES: empty }), `${empty}/sitemap-feed.atom`)).status).toBe(404);
  });
});

describe("browser view", () => {
  it("serves /sitemap.xsl and links it from the index and every sitemap when BROWSER_VIEW is on", async () => {
    const { origin, env } = await site(
      (o) => [
        ...demoSection(o, "pages", 3),
        {
          loc: `${o}/story`,
          section: "blog",
          news: { publication: { name: "D", language: "de" }, publication_date: new Date().toISOString(), title: "T" },
        },
      ],
      { BROWSER_VIEW: "true" },
    );
    const pi = '<?xml version="1.0" encoding="UTF-8"?>\n<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>\n<';
    for (const path of ["/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-news.xml"]) {
      const xml = await (await call(env, origin + path)).text();
      expect(xml.startsWith(pi), path).toBe(true);
      expect(XMLValidator.validate(xml)).toBe(true);
    }
    const gz = await call(env, `${origin}/sitemap-pages-1.xml.gz`);
    expect(text(await gunzip(await bytesOf(gz))).startsWith(pi)).toBe(true);

    const res = await call(env, `${origin}/sitemap.xsl`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/xsl; charset=utf-8");
    expect(res.headers.get("etag")).toMatch(/^"[^"]+-i"$/);
    const xsl = await res.text();
    expect(XMLValidator.validate(xsl)).toBe(true);
    const parsed = parser.parse(xsl) as Record<string, Record<string, unknown>>;
    expect(parsed["xsl:stylesheet"]?.["@version"]).toBe("1.0");
    expect(xsl).not.toContain("disable-output-escaping");
  });

  it("can be switched off: no processing instruction, no stylesheet", async () => {
    const { origin, env } = await site((o) => demoSection(o, "pages", 3), { BROWSER_VIEW: "false" });
    expect(await (await call(env, `${origin}/sitemap.xml`)).text()).not.toContain("xml-stylesheet");
    expect(await (await call(env, `${origin}/sitemap-pages-1.xml`)).text()).not.toContain("xml-stylesheet");
    expect((await call(env, `${origin}/sitemap.xsl`)).status).toBe(404);
  });

  it("changes shard and index versions when the browser view is switched on", async () => {
    const { origin, env } = await site((o) => demoSection(o, "pages", 3), { BROWSER_VIEW: "false" });
    const before = [
      (await call(env, `${origin}/sitemap.xml`)).headers.get("etag"),
      (await call(env, `${origin}/sitemap-pages-1.xml`)).headers.get("etag"),
    ];
    const on = { ...env, BROWSER_VIEW: "true" } as Env;
    await rebuildManifest(services(on), origin);
    const after = [(await call(on, `${origin}/sitemap.xml`)).headers.get("etag"), (await call(on, `${origin}/sitemap-pages-1.xml`)).headers.get("etag")];
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
  });
});
