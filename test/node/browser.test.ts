/**
 * The real Worker, started from Node, with demo data carrying every protocol extension and one full
 * 50,000-URL shard:
 * - every document it serves (index, section shards, news sitemaps; with the xml-stylesheet PI)
 *   validates against the official XSDs, image/video/news/xhtml included (libxml2 via xmllint-wasm),
 *   and stays byte-identical (same bytes, same ETag) whatever browsers did in between;
 * - headless Chromium (Debian's `chromium`, driven by playwright-core), once with native XSLT and
 *   once started with `--disable-blink-features=XSLT` (Chrome after XSLT's removal), opens the
 *   browser view (docs/browser-view.md): the index with a link per listed sitemap, shards, the full
 *   shard's first page, the filter form, news and feed; screenshots are kept in test-results/.
 *
 * The browser talks to a small pass-through proxy on 127.0.0.1 whose origin is the configured site,
 * so the page, its links and the stylesheet are all real same-origin HTTP through the Worker.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { type IncomingHttpHeaders, type Server, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { type BrowserContext, type Page, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoSection, withDemoExtensions } from "../../src/demo/demo-data.ts";
import { readableUrl } from "../../src/formats/view/readable-url.ts";
import { type RunningWorker, rawGet, startWorker } from "./support/worker.ts";
import { validateXml } from "./support/xsd.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = new URL("../../test-results/", import.meta.url);

let worker: RunningWorker;
let proxy: Server;
let site: string;
let host: string;

/**
 * Forwards every request unchanged (Host included) to the Worker, so the Worker sees the site's
 * origin. Listens first: its port is part of the site's origin, which the Worker's SITES needs.
 */
function startProxy(target: () => URL): Promise<Server> {
  const server = createServer((req, res) => {
    const { hostname, port } = target();
    const headers = { ...req.headers };
    // `?no-fetch-metadata` plays a browser that sends no Sec-Fetch-* (Safari before 16.4): it gets
    // the XML and its stylesheet, as before the HTML view existed. The Worker ignores the query.
    if (req.url?.includes(LEGACY)) for (const name of Object.keys(headers)) if (name.startsWith("sec-fetch-")) delete headers[name];
    const upstream = request({ host: hostname, port, path: req.url, method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers as IncomingHttpHeaders);
      up.pipe(res);
    });
    upstream.on("error", (error) => res.destroy(error));
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const LEGACY = "?no-fetch-metadata";
/** The full shard: 50,000 URLs in a section of their own (`catalog-1`). */
const FULL = 50_000;
const fullRecords = (origin: string) => Array.from({ length: FULL }, (_, i) => ({ loc: `${origin}/catalog/item-${i}?ref=a&b=1`, section: "catalog" }));

const TRICKY = '/quotes/it\'s?q="a"&b=<c>';
const TRICKY_NORMALISED = "/quotes/it's?q=%22a%22&b=%3Cc%3E";
const TRICKY_RECORD = (origin: string) => ({
  loc: origin + TRICKY,
  section: "pages",
  lastmod: "2026-01-02T03:04:05Z",
  images: [`${origin}/img/q.jpg?a=1&b=2`],
});

function records(origin: string): unknown[] {
  const now = Date.now();
  return [
    ...withDemoExtensions("pages", demoSection(origin, "pages", 120), now),
    TRICKY_RECORD(origin),
    ...withDemoExtensions("products", demoSection(origin, "products", 600), now),
    ...withDemoExtensions("blog", demoSection(origin, "blog", 60), now),
  ];
}

/**
 * Chromium (since 2025) overlays a banner announcing XSLT's removal on XSLT-rendered pages; it is
 * browser UI, not our page, so screenshots are taken without it (docs/extensions.md has the story).
 */
async function screenshot(page: Page, name: string, fullPage: boolean): Promise<void> {
  await page.evaluate(() => document.querySelector("xslt-warning-banner")?.remove());
  await page.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage });
}

const get = (path: string) => rawGet(new URL(path, worker.url), {}, host);
const locs = (xml: string) =>
  [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) =>
    m[1]!.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&amp;", "&"),
  );

/** Every document the index lists, as a path, the index first. */
async function listed(): Promise<string[]> {
  return ["/sitemap.xml", ...locs((await get("/sitemap.xml")).body.toString("utf8")).map((url) => new URL(url).pathname)];
}

/** What a crawler gets: status, validators and the exact bytes on the wire (gzip asked for, as crawlers do). */
async function crawlerCopy(path: string): Promise<{ status: number; etag: unknown; type: unknown; body: Buffer }> {
  const res = await rawGet(new URL(path, worker.url), { "accept-encoding": "gzip", "user-agent": "Googlebot/2.1" }, host);
  return { status: res.status, etag: res.headers.etag, type: res.headers["content-type"], body: res.body };
}
const before = new Map<string, Awaited<ReturnType<typeof crawlerCopy>>>();

beforeAll(async () => {
  proxy = await startProxy(() => worker.url);
  const port = (proxy.address() as AddressInfo).port;
  site = `http://127.0.0.1:${port}`;
  host = `127.0.0.1:${port}`;
  // Default shard size (the protocol's 50,000): each demo section is one shard, the catalog one full shard.
  worker = await startWorker({ SITES: site, BROWSER_VIEW: "true", FEED_IN_INDEX: "true" });
  await worker.seed(records(site));
  const full = fullRecords(site);
  for (let i = 0; i < full.length; i += 2_000) await worker.seed(full.slice(i, i + 2_000));
});

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await worker?.close();
});

describe("documents with every extension", () => {
  it("validate against the official XSDs, with the xml-stylesheet PI, news sitemap included", async () => {
    const index = await get("/sitemap.xml");
    expect(index.status).toBe(200);
    const indexXml = index.body.toString("utf8");
    expect(indexXml).toContain('<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>');
    expect(await validateXml(indexXml, "siteindex")).toEqual({ valid: true, errors: [] });

    const listed = locs(indexXml);
    expect(listed).toContain(`${site}/sitemap-news.xml`);
    const seen = { image: 0, video: 0, news: 0, xhtml: 0 };
    for (const url of listed.filter((u) => !u.endsWith(".atom"))) {
      const doc = await get(new URL(url).pathname);
      expect(doc.status, url).toBe(200);
      const xml = doc.body.toString("utf8");
      expect(xml.split("\n")[1], url).toBe('<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>');
      expect(await validateXml(xml, "urlset"), url).toEqual({ valid: true, errors: [] });
      seen.image += (xml.match(/<image:image>/g) ?? []).length;
      seen.video += (xml.match(/<video:video>/g) ?? []).length;
      seen.news += (xml.match(/<news:news>/g) ?? []).length;
      seen.xhtml += (xml.match(/<xhtml:link /g) ?? []).length;
    }
    expect(seen.news).toBe(40);
    expect(seen.video).toBe(1);
    expect(seen.image).toBeGreaterThan(10);
    expect(seen.xhtml).toBe(9 * 4);
  });

  it("stays valid when a record gains extensions before the manifest is rebuilt (namespace on the element)", async () => {
    // The tricky record (in pages shard 1, built without the video namespace) gains a video.
    await worker.seed([
      {
        ...TRICKY_RECORD(site),
        videos: [{ thumbnail_loc: `${site}/t.jpg`, title: "Late", description: "Added after the manifest", content_loc: `${site}/v.mp4` }],
      },
    ]);
    // The .xml.gz form was not requested before, so no edge-cached copy answers: a live render
    // from the records under the unchanged manifest entry.
    const shard = await get("/sitemap-pages-1.xml.gz");
    expect(shard.headers["x-sitemap-source"]).toBe("live");
    const xml = gunzipSync(shard.body).toString("utf8");
    expect(xml).toContain('<video:video xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">');
    expect(await validateXml(xml, "urlset")).toEqual({ valid: true, errors: [] });
  });
});

describe("crawlers before the browsers", () => {
  it("get every listed document (the copies the last test compares with)", async () => {
    for (const path of await listed()) {
      const copy = await crawlerCopy(path);
      expect(copy.status, path).toBe(200);
      before.set(path, copy);
    }
    expect(before.get("/sitemap-catalog-1.xml")?.type).toBe("application/xml; charset=utf-8");
  });
});

const MODES = [
  { name: "native XSLT", args: [] as string[] },
  { name: "XSLT removed (--disable-blink-features=XSLT)", args: ["--disable-blink-features=XSLT"] },
] as const;

describe.each(MODES)("browser view in headless Chromium, $name", ({ name, args }) => {
  let context: BrowserContext;
  let profile: string;
  const shot = (page: Page, file: string, fullPage = false) => screenshot(page, `${args.length ? "no-xslt-" : "xslt-"}${file}`, fullPage);

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), "edge-sitemaps-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        ...args,
      ],
    });
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("runs with XSLT as the mode says", async () => {
    const page = await context.newPage();
    await page.goto(`${site}/robots.txt`);
    expect(await page.evaluate(() => typeof (globalThis as { XSLTProcessor?: unknown }).XSLTProcessor)).toBe(args.length ? "undefined" : "function");
    await page.close();
  });

  it("shows the index with a clickable link, fill and lastmod per listed sitemap", async () => {
    const xml = (await get("/sitemap.xml")).body.toString("utf8");
    const expected = locs(xml);
    const page = await context.newPage();
    const response = await page.goto(`${site}/sitemap.xml`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-type"]).toBe("text/html; charset=utf-8");
    await page.waitForSelector("table#sitemaps");
    expect(await page.title()).toBe(`Sitemap index of ${host}`);
    expect(await page.locator("#count").textContent()).toBe(String(expected.length));
    const links = page.locator("table#sitemaps tbody tr th a");
    expect(await links.count()).toBe(expected.length);
    expect(await links.evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href))).toEqual(expected);
    expect(await links.allTextContents()).toEqual(expected);
    const lastmods = await page.locator("table#sitemaps tbody td.date").allTextContents();
    expect(lastmods).toEqual([...xml.matchAll(/<lastmod>([^<]*)<\/lastmod>/g)].map((m) => m[1]));
    const full = page.locator("table#sitemaps tbody tr", { has: page.locator(`a[href="/sitemap-catalog-1.xml"]`) });
    expect(await full.locator("meter").first().getAttribute("value")).toBe(String(FULL));
    expect(await full.textContent()).toContain("100.0% of 50,000");
    await shot(page, "index.png", true);
    await page.close();
  });

  it("follows the index to a shard: URLs (escaped right, & and quotes included), lastmods and extensions", async () => {
    const xml = (await get("/sitemap-pages-1.xml")).body.toString("utf8");
    const expected = locs(xml);
    expect(expected).toContain(site + TRICKY_NORMALISED);
    const page = await context.newPage();
    await page.goto(`${site}/sitemap.xml`);
    await Promise.all([page.waitForURL(`${site}/sitemap-pages-1.xml`), page.locator(`a[href="/sitemap-pages-1.xml"]`).click()]);
    await page.waitForSelector("table#urls");
    expect(await page.locator("#count").textContent()).toBe(String(expected.length));
    const links = await page
      .locator("table#urls tbody tr td:nth-child(2) > a")
      .evaluateAll((as) => as.map((a) => ({ href: a.getAttribute("href"), text: a.textContent })));
    expect(links.map((l) => l.href)).toEqual(expected);
    // Shown as a person reads it (non-ASCII decoded), linked exactly as listed.
    expect(links.map((l) => l.text)).toEqual(expected.map(readableUrl));
    const encoded = links.find((l) => /%C3%[89AB][0-9A-F]/.test(l.href ?? ""));
    expect(encoded?.text).toMatch(/[À-ÿ]/);
    expect(encoded?.text).not.toContain("%C3");
    const tricky = page.locator("table#urls tbody tr", { has: page.locator(`a[href="${site}${TRICKY_NORMALISED.replaceAll('"', '\\"')}"]`) });
    expect(await tricky.locator("td.date").textContent()).toBe("2026-01-02T03:04:05Z");
    expect(await tricky.locator(".tag.images").textContent()).toBe("1 image");
    expect(await page.locator("table#urls tbody tr").first().locator("a.hreflang").allTextContents()).toEqual(["en", "de", "fr", "x-default"]);
    await shot(page, "shard.png");
    await page.close();
  });

  it("shows the full 50,000-URL shard's first URL, pages with real links and filters with a plain form", async () => {
    const page = await context.newPage();
    await page.goto(`${site}/sitemap-catalog-1.xml`, { waitUntil: "commit" });
    const first = page.locator(`table#urls a[href="${site}/catalog/item-0?ref=a&b=1"]`);
    await first.waitFor({ timeout: 5_000 });
    expect(await first.textContent()).toBe(`${site}/catalog/item-0?ref=a&b=1`);
    await page.waitForLoadState("load");
    expect(await page.locator("table#urls tbody tr").count()).toBe(1_000);
    expect(await page.locator("#position").textContent()).toBe("Rows 1–1,000, page 1 of 50.");
    await shot(page, "full-shard.png");
    await Promise.all([page.waitForURL(`${site}/sitemap-catalog-1.xml?page=2`), page.locator('a[rel="next"]').first().click()]);
    expect(await page.locator("table#urls tbody tr td.n").first().textContent()).toBe("1001");
    expect(await page.locator("table#urls tbody tr td:nth-child(2) > a").first().textContent()).toBe(`${site}/catalog/item-1000?ref=a&b=1`);
    await page.fill("#q", "item-4999");
    await Promise.all([page.waitForURL(/\?q=item-4999$/), page.press("#q", "Enter")]);
    // item-4999 and item-49990 … item-49999
    expect(await page.locator("table#urls tbody tr td:nth-child(2) > a").allTextContents()).toEqual(
      [4999, ...Array.from({ length: 10 }, (_, i) => 49_990 + i)].map((i) => `${site}/catalog/item-${i}?ref=a&b=1`),
    );
    await page.close();
  });

  it("shows the news sitemap and the feed", async () => {
    const page = await context.newPage();
    await page.goto(`${site}/sitemap-news.xml`);
    await page.waitForSelector("table#urls");
    expect(await page.locator("h1").textContent()).toBe("News sitemap");
    expect(await page.locator("table#urls tbody tr").count()).toBe(40);
    expect(await page.locator("table#urls .news").first().textContent()).toContain("The Demo Times");
    await shot(page, "news.png");
    await page.goto(`${site}/sitemap-feed.atom`);
    await page.waitForSelector("table#urls");
    expect(await page.locator("h1").textContent()).toBe("Recently changed URLs");
    expect(await page.locator("table#urls tbody tr").count()).toBe(100);
    await page.close();
  });

  it(
    name === "native XSLT"
      ? "still renders the XML through the stylesheet for a browser without Fetch Metadata"
      : "shows the XML (no view) to a browser with neither Fetch Metadata nor XSLT",
    async () => {
      const page = await context.newPage();
      const response = await page.goto(`${site}/sitemap.xml${LEGACY}`);
      expect(response?.headers()["content-type"]).toBe("application/xml; charset=utf-8");
      if (args.length === 0) {
        await page.waitForSelector("table#sitemaps");
        expect(await page.locator("table#sitemaps tbody tr a").count()).toBe(locs((await get("/sitemap.xml")).body.toString("utf8")).length);
      } else {
        expect(await page.locator("table#sitemaps").count()).toBe(0);
      }
      await page.close();
    },
  );
});

describe("browser view on a phone (390 × 844) in headless Chromium", () => {
  let context: BrowserContext;
  let profile: string;
  const PHONE = 390;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), "edge-sitemaps-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: PHONE, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** The page's width (what scrolls sideways when over the screen's) and the first link's cell width in the table. */
  const measure = (page: Page, table: string, link: string) =>
    page.evaluate(
      ([t, l]) => {
        const a = document.querySelector(`table#${t} tbody tr ${l}`) as HTMLElement;
        return { scrollWidth: document.documentElement.scrollWidth, cell: a.parentElement!.getBoundingClientRect().width, text: a.textContent };
      },
      [table, link] as const,
    );

  for (const [path, table, link] of [
    ["/sitemap.xml", "sitemaps", "th a"],
    ["/sitemap-pages-1.xml", "urls", "td:nth-child(2) > a"],
    ["/sitemap-catalog-1.xml", "urls", "td:nth-child(2) > a"],
    ["/sitemap-news.xml", "urls", "td:nth-child(2) > a"],
  ] as const) {
    it(`${path}: no sideways scroll, the first URL's cell at least 200 px wide`, async () => {
      const page = await context.newPage();
      await page.goto(`${site}${path}`);
      await page.waitForSelector(`table#${table}`);
      const m = await measure(page, table, link);
      expect(m.scrollWidth, JSON.stringify(m)).toBeLessThanOrEqual(PHONE);
      expect(m.cell, JSON.stringify(m)).toBeGreaterThanOrEqual(200);
      await screenshot(page, `phone-${path.slice(1).replace(/\.xml$/, "")}.png`, path === "/sitemap.xml");
      await page.close();
    });
  }
});

describe("crawlers after the browsers", () => {
  it("get every listed document byte for byte as before, with the same validators", async () => {
    const paths = await listed();
    expect([...before.keys()]).toEqual(paths);
    for (const path of paths) {
      const now = await crawlerCopy(path);
      const then = before.get(path)!;
      expect({ ...now, body: undefined }, path).toEqual({ ...then, body: undefined });
      expect(now.body.equals(then.body), path).toBe(true);
    }
  });
});
