/**
 * The real Worker, started from Node, with demo data carrying every protocol extension:
 * - every document it serves (index, section shards, news sitemaps; with the xml-stylesheet PI)
 *   validates against the official XSDs, image/video/news/xhtml included (libxml2 via xmllint-wasm);
 * - headless Chromium (Debian's `chromium`, driven by playwright-core) opens the index and a shard
 *   through the browser view (XSLT) and shows the expected rows and links; screenshots are kept in
 *   test-results/.
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
    const upstream = request({ host: hostname, port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers as IncomingHttpHeaders);
      up.pipe(res);
    });
    upstream.on("error", (error) => res.destroy(error));
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

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

beforeAll(async () => {
  proxy = await startProxy(() => worker.url);
  const port = (proxy.address() as AddressInfo).port;
  site = `http://127.0.0.1:${port}`;
  host = `127.0.0.1:${port}`;
  worker = await startWorker({ SITES: site, BROWSER_VIEW: "true", MAX_URLS_PER_SHARD: "250" });
  await worker.seed(records(site));
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
    for (const url of listed) {
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

describe("browser view in headless Chromium", () => {
  let context: BrowserContext;
  let profile: string;

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
      ],
    });
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("renders the index as a page listing every sitemap with its link and lastmod", async () => {
    const xml = (await get("/sitemap.xml")).body.toString("utf8");
    const expected = locs(xml);
    const page = await context.newPage();
    const response = await page.goto(`${site}/sitemap.xml`);
    expect(response?.status()).toBe(200);
    await page.waitForSelector("table#sitemaps");
    expect(await page.title()).toBe("Sitemap index");
    expect(await page.locator("#count").textContent()).toBe(String(expected.length));
    const rows = page.locator("table#sitemaps tbody tr");
    expect(await rows.count()).toBe(expected.length);
    const hrefs = await page.locator("table#sitemaps tbody tr a").evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href));
    expect(hrefs).toEqual(expected);
    const lastmods = await page.locator("table#sitemaps tbody td.date").allTextContents();
    expect(lastmods).toEqual([...xml.matchAll(/<lastmod>([^<]*)<\/lastmod>/g)].map((m) => m[1]));
    await screenshot(page, "browser-index.png", true);
    await page.close();
  });

  it("renders a shard with its URLs (escaped right, & and quotes included), lastmods and extensions", async () => {
    const xml = (await get("/sitemap-pages-1.xml")).body.toString("utf8");
    const expected = locs(xml);
    expect(expected).toContain(site + TRICKY_NORMALISED);

    const page = await context.newPage();
    await page.goto(`${site}/sitemap.xml`);
    await page.waitForSelector("table#sitemaps");
    // Follow the index's link, as a person would.
    await Promise.all([page.waitForURL(`${site}/sitemap-pages-1.xml`), page.locator(`a[href="${site}/sitemap-pages-1.xml"]`).click()]);
    await page.waitForSelector("table#urls");
    expect(await page.locator("#count").textContent()).toBe(String(expected.length));
    expect(await page.locator("table#urls tbody tr").count()).toBe(expected.length);
    const links = await page
      .locator("table#urls tbody tr td:nth-child(2) > a")
      .evaluateAll((as) => as.map((a) => ({ href: a.getAttribute("href"), text: a.textContent })));
    expect(links.map((l) => l.href)).toEqual(expected);
    expect(links.map((l) => l.text)).toEqual(expected);
    expect(links).toContainEqual({ href: site + TRICKY_NORMALISED, text: site + TRICKY_NORMALISED });

    const tricky = page.locator("table#urls tbody tr", { has: page.locator(`a[href="${site}${TRICKY_NORMALISED.replaceAll('"', '\\"')}"]`) });
    expect(await tricky.locator("td.date").textContent()).toBe("2026-01-02T03:04:05Z");
    expect(await tricky.locator(".tag.images").textContent()).toBe("1 images");
    const hreflangs = await page.locator("table#urls tbody tr").first().locator("a.hreflang").allTextContents();
    expect(hreflangs).toEqual(["en", "de", "fr", "x-default"]);
    await screenshot(page, "browser-shard.png", false);

    await page.goto(`${site}/sitemap-news.xml`);
    await page.waitForSelector("table#urls");
    expect(await page.locator("h1").textContent()).toBe("News sitemap");
    expect(await page.locator("table#urls tbody tr").count()).toBe(40);
    expect(await page.locator("table#urls .news").first().textContent()).toContain("The Demo Times");
    await screenshot(page, "browser-news.png", false);
    await page.close();
  });
});
