/**
 * The dashboard on a phone: headless Chromium (Debian's `chromium`, driven by playwright-core) at
 * 390 × 844 CSS pixels, signed in through the token form, against the real Worker after a cron run
 * (three sections, shard tables, runs, Search Console's report from a stand-in on 127.0.0.1):
 * - the page never scrolls sideways: every wide table scrolls inside its own box;
 * - every summary figure shows its value with its label under it, and no two figures overlap.
 * Screenshots (the first screen, the whole page) are written to a temporary directory (its path is
 * logged) for a person to look at.
 */
import { mkdtempSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { close, forwardingProxy, listen } from "./support/local-servers.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

const CHROMIUM = "/usr/bin/chromium";
/** This suite's ports (the machine's other suites keep to theirs). */
const FAKE_PORT = 18560;
const PROXY_PORT = 18561;
const SITE = `http://localhost:${PROXY_PORT}`;
const FAKE = `http://127.0.0.1:${FAKE_PORT}`;
const ADMIN_TOKEN = "dashboard-phone-admin-token-0123456789abcdef";
const PHONE = { width: 390, height: 844 };

let worker: RunningWorker;
let fake: Server;
let proxy: Server;
let browser: Browser;

/** Google's token endpoint and Search Console API: one sitemap with errors, so its table is drawn. */
function startFake(): Server {
  return createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const json = (body: unknown) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
      if (req.url === "/token") return json({ access_token: "ya29.dashboard-phone-test", expires_in: 3599 });
      if (req.method === "GET" && req.url === `/webmasters/v3/sites/${encodeURIComponent(`${SITE}/`)}/sitemaps`) {
        return json({
          sitemap: [
            {
              path: `${SITE}/sitemap.xml`,
              lastSubmitted: "2026-02-28T08:00:00.000Z",
              lastDownloaded: "2026-03-01T08:00:00.000Z",
              isPending: false,
              isSitemapsIndex: true,
              errors: "2",
              warnings: "0",
              contents: [{ type: "web", submitted: "2600" }],
            },
          ],
        });
      }
      if (req.method === "PUT") return res.writeHead(204).end();
      res.writeHead(404).end();
    });
  });
}

beforeAll(async () => {
  fake = startFake();
  await listen(fake, FAKE_PORT);
  proxy = forwardingProxy(() => worker.url);
  await listen(proxy, PROXY_PORT);
  const { generateKeyPairSync } = await import("node:crypto");
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const serviceAccount = JSON.stringify({ type: "service_account", client_email: "sitemaps@test.iam.gserviceaccount.com", private_key: privateKey });
  worker = await startWorker(
    { SITES: SITE, GSC_TOKEN_URL: `${FAKE}/token`, GSC_API_BASE: FAKE, NOTIFY_SETTLE_SECONDS: "0", MAX_URLS_PER_SHARD: "500" },
    { secrets: { ADMIN_TOKEN, GSC_SERVICE_ACCOUNT: serviceAccount } },
  );
  await worker.seed([...demoSection(SITE, "pages", 700), ...demoSection(SITE, "products", 1_400), ...demoSection(SITE, "blog", 500)]);
  const run = await worker.harness.getWorker().scheduled({ cron: "17 * * * *", scheduledTime: new Date() });
  expect(run.outcome).toBe("ok");
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--host-resolver-rules=MAP localhost 127.0.0.1",
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.close();
  await close(proxy);
  await close(fake);
});

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}
const overlap = (a: Box, b: Box): boolean => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

describe("the dashboard on a phone (390 × 844)", () => {
  it("signed in: no sideways scroll of the page, tables scroll in their box, every figure keeps its label", { timeout: 60_000 }, async () => {
    const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${SITE}/sitemap-admin/`);
    await page.fill("#token", ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${SITE}/sitemap-admin/`), page.click("button[type=submit]")]);
    expect(await page.locator('[data-figure="urls"]').textContent()).toBe("2,600");

    const shots = mkdtempSync(join(tmpdir(), "edge-sitemaps-phone-"));
    await page.screenshot({ path: join(shots, "dashboard-390-first-screen.png") });
    await page.screenshot({ path: join(shots, "dashboard-390-full.png"), fullPage: true });
    console.log(`dashboard at 390 × 844 (the first screen, the whole page): ${shots}`);

    const layout = await page.evaluate(() => {
      const box = (el: Element) => {
        const r = el.getBoundingClientRect();
        return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
      };
      return {
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
        tables: [...document.querySelectorAll("table")].map((table) => {
          const scroller = table.parentElement!;
          return {
            box: box(scroller),
            overflowX: getComputedStyle(scroller).overflowX,
            wide: table.scrollWidth > scroller.clientWidth,
          };
        }),
        groups: [...document.querySelectorAll(".figures")].map((group) =>
          [...group.querySelectorAll(".figure")].map((figure) => ({
            box: box(figure),
            value: figure.querySelector(".value") ? box(figure.querySelector(".value")!) : null,
            label: figure.querySelector(".label") ? box(figure.querySelector(".label")!) : null,
            labelText: figure.querySelector(".label")?.textContent ?? "",
            valueText: figure.querySelector(".value")?.textContent ?? "",
          })),
        ),
      };
    });

    expect(layout.clientWidth).toBe(PHONE.width);
    expect(layout.scrollWidth).toBeLessThanOrEqual(layout.clientWidth);

    // The shard tables (three sections), runs, Search Console: each in a box of the page's width that scrolls.
    expect(layout.tables.length).toBeGreaterThanOrEqual(5);
    expect(layout.tables.some((t) => t.wide)).toBe(true); // at 390 px some table is wider than its box…
    for (const table of layout.tables) {
      expect(table.box.right).toBeLessThanOrEqual(PHONE.width); // …and its box stays on the page
      expect(table.box.left).toBeGreaterThanOrEqual(0);
      expect(table.overflowX).toBe("auto");
    }

    // The summary figures (at least the page's five, each section's three, regeneration's three).
    const figures = layout.groups.flat();
    expect(figures.length).toBeGreaterThanOrEqual(5 + 3 * 3 + 3);
    for (const group of layout.groups) {
      expect(group.length).toBeGreaterThan(0); // the figures are inside their group (valid markup)
      for (const [i, figure] of group.entries()) {
        expect(figure.labelText, figure.valueText).not.toBe("");
        expect(figure.value, figure.labelText).not.toBeNull();
        expect(figure.label, figure.labelText).not.toBeNull();
        // The label under its value, inside the figure's box, on the page.
        expect(figure.label!.top, figure.labelText).toBeGreaterThanOrEqual(figure.value!.bottom - 1);
        expect(figure.box.right, figure.labelText).toBeLessThanOrEqual(PHONE.width);
        for (const other of group.slice(i + 1)) expect(overlap(figure.box, other.box), `${figure.labelText} / ${other.labelText}`).toBe(false);
      }
    }
    expect(figures.map((f) => f.labelText)).toEqual(expect.arrayContaining(["shards", "URLs", "XML", "snapshots", "index stored"]));
    await context.close();
  });
});
