/**
 * Issue 52 review (break52), item 2 as the check states it: a site registered through the platform
 * API (POST /sitemap-admin/sites with the platform's ADMIN_TOKEN) signs in on its own plain-http
 * `.test` host with its own token, in Chromium, and gets a cookie the browser keeps; the new site
 * serves and takes writes at once (the isolate that created it), and the 201 says when it serves
 * everywhere.
 *
 * The real Worker runs through wrangler's test harness (workerd, local D1/KV) on 127.0.0.1; Chromium
 * reaches `t4.test` there through a host resolver rule, so the Worker sees `Host: t4.test:PORT` as
 * it would under `npm start -- --demo-sites` with the host in /etc/hosts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, startWorker } from "./support/worker.ts";

const CHROMIUM = "/usr/bin/chromium";
const ADMIN_TOKEN = "break52-platform-token-0123456789abcdef";

let worker: RunningWorker;
let browser: Browser;
let profile: string;

/** A request to the Worker on 127.0.0.1 with the given Host. */
function call(
  method: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: worker.url.port, path, method, headers: { host, ...(body ? { "content-type": "application/json" } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

beforeAll(async () => {
  worker = await startWorker({ SITES: "http://localhost:8787" }, { secrets: { ADMIN_TOKEN }, servesOwnOrigin: true });
  profile = mkdtempSync(join(tmpdir(), "edge-sitemaps-break52-signin-"));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--host-resolver-rules=MAP *.test 127.0.0.1",
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Registers `origin` through the platform API on the Worker's own host; its 201 body. */
async function register(origin: string): Promise<{ token: string; servesEverywhereBy?: string; site: { origin: string } }> {
  const res = await call("POST", "/sitemap-admin/sites", worker.url.host, { authorization: `Bearer ${ADMIN_TOKEN}` }, JSON.stringify({ origin }));
  expect(res.status, res.text).toBe(201);
  return JSON.parse(res.text);
}

describe("a site registered through the platform API, on its plain-http .test host", () => {
  it("serves and takes its own token's writes at once, and the 201 says when it serves everywhere", async () => {
    const host = `t5.test:${worker.url.port}`;
    const before = Date.now();
    const created = await register(`http://${host}`);
    expect(created.site.origin).toBe(`http://${host}`);
    expect(created.token).toMatch(/^esk_/);
    expect(Date.parse(created.servesEverywhereBy ?? "")).toBeGreaterThan(before);

    const put = await call(
      "PUT",
      "/sitemap-admin/urls",
      host,
      { authorization: `Bearer ${created.token}` },
      JSON.stringify([{ loc: `http://${host}/hello`, section: "pages" }]),
    );
    expect(put.status, put.text).toBe(200);
    const index = await call("GET", "/sitemap.xml", host);
    expect(index.status, index.text).toBe(200);
    expect(index.text).toContain(`<loc>http://${host}/sitemap-pages-1.xml</loc>`);
  });

  it("signs in with the site's own token in Chromium; the cookie is kept and the dashboard reads after a reload", async () => {
    const host = `t4.test:${worker.url.port}`;
    const { token } = await register(`http://${host}`);
    const context = await browser.newContext();
    const page = await context.newPage();
    const first = await page.goto(`http://${host}/sitemap-admin/`);
    expect(first?.status()).toBe(401);
    await page.fill("#token", token);
    await Promise.all([page.waitForURL(`http://${host}/sitemap-admin/`), page.click("button[type=submit]")]);
    const cookies = await context.cookies();
    expect(cookies, JSON.stringify(cookies)).toEqual([
      expect.objectContaining({
        name: "sitemap_admin_session",
        domain: "t4.test",
        secure: false,
        httpOnly: true,
        sameSite: "Strict",
        // Path=/ as the `__Host-` cookie on https must have it (one path for both names; docs/dashboard.md).
        path: "/",
      }),
    ]);
    expect(await page.locator("#token").count()).toBe(0);
    expect(await page.locator('[data-figure="urls"]').count()).toBe(1);
    // Kept: a fresh navigation (no form) is still signed in.
    const again = await page.goto(`http://${host}/sitemap-admin/`);
    expect(again?.status()).toBe(200);
    expect(await page.locator('[data-figure="urls"]').count()).toBe(1);
    await context.close();
  });

  it("the platform's token does not sign in on the registered site's host, and says so", async () => {
    const host = `t6.test:${worker.url.port}`;
    await register(`http://${host}`);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://${host}/sitemap-admin/`);
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    expect(await page.locator("[role=alert]").textContent()).toContain("not accepted");
    expect(await context.cookies()).toEqual([]);
    await context.close();
  });
});
