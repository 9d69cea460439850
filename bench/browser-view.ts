/**
 * The browser view (docs/browser-view.md) in headless Chromium (Debian's `chromium`, driven by
 * playwright-core), against the real Worker in workerd (wrangler's test harness, as the browser test
 * runs it; local D1) with one full 50,000-URL shard: time from the
 * start of the navigation to the first row of the table on screen (the row's element attached and
 * visible), once in Chromium with native XSLT and once started with `--disable-blink-features=XSLT`.
 * For comparison, the pre-view path: the XML transformed by the browser through /sitemap.xsl, which
 * a browser without Fetch Metadata still gets (a proxy strips the `Sec-Fetch-*` headers).
 */
import { type IncomingHttpHeaders, type Server, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium } from "playwright-core";
import { demoSection } from "../src/demo/demo-data.ts";
import { startWorker } from "../test/node/support/worker.ts";
import { type BenchOptions, type Row, type Section, int, median, ms, now } from "./lib.ts";

const CHROMIUM = "/usr/bin/chromium";
const FULL = 50_000;
const SHARD = "/sitemap-products-1.xml";
const FIRST_ROW = "table#urls tbody tr a";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A loopback proxy to `target` that drops `Sec-Fetch-*`: a browser without Fetch Metadata. */
function stripFetchMetadata(target: URL): Promise<Server> {
  const server = createServer((req, res) => {
    const headers = { ...req.headers, host: target.host };
    for (const name of Object.keys(headers)) if (name.startsWith("sec-fetch-")) delete (headers as Record<string, unknown>)[name];
    const up = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers as IncomingHttpHeaders);
      answer.pipe(res);
    });
    up.on("error", (error) => res.destroy(error));
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** Navigation start → first row visible, ms; a fresh page each time (no cache: the HTML is no-store, the XML revalidates). */
async function firstRow(browser: Browser, url: string, timeout: number, selector = FIRST_ROW): Promise<number> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  try {
    const t = now();
    await page.goto(url, { waitUntil: "commit", timeout });
    await page.locator(selector).first().waitFor({ state: "visible", timeout });
    return now() - t;
  } finally {
    await context.close();
  }
}

export async function browserViewBench(options: BenchOptions): Promise<Section> {
  const worker = await startWorker({}, { servesOwnOrigin: true });
  const browsers: Browser[] = [];
  let proxy: Server | null = null;
  try {
    const records = demoSection(worker.origin, "products", FULL);
    for (let i = 0; i < FULL; i += 2_000) await worker.seed(records.slice(i, i + 2_000));
    proxy = await stripFetchMetadata(worker.url);
    // The proxy passes the Worker's Host on, so the Worker sees the configured site either way.
    const legacy = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const base = worker.origin;
    const runs = options.runs;
    const rows: Row[] = [];
    for (const [label, extra] of [
      ["native XSLT", []],
      ["XSLT disabled", ["--disable-blink-features=XSLT"]],
    ] as const) {
      const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...ARGS, ...extra] });
      browsers.push(browser);
      await firstRow(browser, base + SHARD, 30_000); // warm: isolate, manifest copy, browser process
      const cases = [
        { name: `full shard (50,000 URLs), page 1, HTML view, Chromium ${label}: first row on screen`, path: SHARD, target: "≤ 1,000 ms" },
        { name: `  same, last page (?page=50: its own 1,000 rows, by the manifest's page starts)`, path: `${SHARD}?page=50` },
        { name: `  same, filter matching the last URLs (?q=…: the shard once per version, then the view's cache)`, path: `${SHARD}?q=-49999%3F` },
        { name: `  index view (links and fill of every sitemap)`, path: "/sitemap.xml", selector: "table#sitemaps tbody tr a" },
      ];
      for (const c of cases) {
        const times: number[] = [];
        for (let i = 0; i < runs; i++) {
          times.push(await firstRow(browser, base + c.path, 30_000, c.selector));
        }
        const value = median(times);
        rows.push({
          name: c.name,
          value: ms(value),
          detail: `${runs} runs, min ${ms(Math.min(...times))}, max ${ms(Math.max(...times))}`,
          ...(c.target ? { target: c.target, met: value <= 1_000 } : {}),
        });
      }
      if (extra.length === 0) {
        // The XSLT path as it was the only view: one run, it takes many seconds.
        const xslt = await firstRow(browser, legacy + SHARD, 120_000);
        rows.push({
          name: "  for comparison: the XML through /sitemap.xsl (no Fetch Metadata), native XSLT: first row on screen",
          value: ms(xslt),
          detail: "1 run",
        });
      }
    }
    return {
      title: "Browser view: first row on screen (headless Chromium, workerd, local D1)",
      note: `One full shard of ${int(FULL)} URLs; navigation start to the first table row visible, median of ${runs} runs after one warm-up, a fresh browser context each run. ${CHROMIUM}, playwright-core.`,
      rows,
    };
  } finally {
    for (const b of browsers) await b.close();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await worker.close();
  }
}
