/**
 * The dashboard in headless Chromium (Debian's `chromium`, driven by playwright-core) against the
 * real Worker (wrangler's harness), on http://localhost, a local plain-http host:
 * - signed out, `/sitemap-admin/` shows the sign-in form and no site data;
 * - signed in with the token (the form), and separately with a Cloudflare Access JWT, the page
 *   shows the shard count and URL total status reports, SVG charts, and what the Search Console
 *   stand-in reported after a cron run (errors: 2, the index's lastDownloaded);
 * - the session cookie, on this local plain-http host, is `sitemap_admin_session` without `Secure`
 *   (elsewhere `__Host-` and `Secure`: test/node/session-cookie.test.ts), HttpOnly,
 *   SameSite=Strict, with Path=/, and kept by Chromium;
 * - "Regenerate now" (a form with the session's CSRF token) runs a regeneration; a script on the
 *   page, with the same cookie, can neither write records nor trigger it with fetch(), and
 *   submitting the form itself gets no `?full=1` through and nothing within the cooldown;
 * - after sign-out the old cookie reads nothing;
 * - the CSP lets the stylesheet apply and stops an inline script.
 * Google (token endpoint, Search Console API) and the Access JWKS are one HTTP server on 127.0.0.1.
 */
import { generateKeyPairSync, webcrypto } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "hono/jwt";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { cronAndJobs } from "./support/jobs.ts";
import { close, forwardingProxy, listen } from "./support/local-servers.ts";
import { type RunningWorker, rawGet, startWorker } from "./support/worker.ts";

const CHROMIUM = "/usr/bin/chromium";
/** This suite's ports (the machine's other suites keep to theirs). */
const FAKE_PORT = 18540;
const PROXY_PORT = 18541;
const SITE = `http://localhost:${PROXY_PORT}`;
const FAKE = `http://127.0.0.1:${FAKE_PORT}`;
const ADMIN_TOKEN = "dashboard-test-admin-token-0123456789abcdef";
const AUD = "dashboardaud0123456789";
const DOWNLOADED = "2026-03-01T08:00:00.000Z";

let worker: RunningWorker;
let fake: Server;
let proxy: Server;
let browser: Browser;
let profile: string;
let accessJwt: () => Promise<string>;
const gscReads: string[] = [];

/** Google's token endpoint and Search Console API, and the Access team's JWKS. */
function startFake(jwks: () => unknown): Server {
  return createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = req.url ?? "";
      const json = (body: unknown) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
      if (path === "/token") return json({ access_token: "ya29.dashboard-test", expires_in: 3599 });
      if (path === "/cdn-cgi/access/certs") return json(jwks());
      if (req.method === "GET" && path === `/webmasters/v3/sites/${encodeURIComponent(`${SITE}/`)}/sitemaps`) {
        gscReads.push(path);
        return json({
          sitemap: [
            {
              path: `${SITE}/sitemap.xml`,
              lastSubmitted: "2026-02-28T08:00:00.000Z",
              lastDownloaded: DOWNLOADED,
              isPending: false,
              isSitemapsIndex: true,
              errors: "2",
              warnings: "0",
              contents: [{ type: "web", submitted: "260" }],
            },
          ],
        });
      }
      // The shards under the index (sitemapIndex=): one with its own report.
      if (
        req.method === "GET" &&
        path === `/webmasters/v3/sites/${encodeURIComponent(`${SITE}/`)}/sitemaps?sitemapIndex=${encodeURIComponent(`${SITE}/sitemap.xml`)}`
      ) {
        return json({ sitemap: [{ path: `${SITE}/sitemap-pages-1.xml`, lastDownloaded: DOWNLOADED, errors: "0", warnings: "1", contents: [] }] });
      }
      if (req.method === "PUT") return res.writeHead(204).end();
      res.writeHead(404).end();
    });
  });
}

/** How many regeneration runs status lists. */
async function regenerationRuns(): Promise<number> {
  const res = await rawGet(`http://127.0.0.1:${PROXY_PORT}/sitemap-admin/status`, { authorization: `Bearer ${ADMIN_TOKEN}` }, `localhost:${PROXY_PORT}`);
  return (JSON.parse(res.body.toString("utf8")) as { runs: unknown[] }).runs.length;
}

async function adminStatus(): Promise<{
  manifest: { shards: number; urls: number };
  searchConsole: { sitemaps: { errors: number; lastDownloaded: string }[] };
}> {
  const res = await rawGet(`http://127.0.0.1:${PROXY_PORT}/sitemap-admin/status`, { authorization: `Bearer ${ADMIN_TOKEN}` }, `localhost:${PROXY_PORT}`);
  expect(res.status).toBe(200);
  return JSON.parse(res.body.toString("utf8")) as never;
}

beforeAll(async () => {
  // The Access team's signing key (the JWKS serves its public half) and a service account's key.
  const pair = (await webcrypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const priv = (await webcrypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const pub = (await webcrypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  accessJwt = () => {
    const now = Math.floor(Date.now() / 1000);
    return sign(
      { aud: [AUD], iss: FAKE, sub: "owner", email: "owner@example.com", iat: now, exp: now + 600 },
      { ...priv, kid: "team-key", alg: "RS256" },
      "RS256",
    );
  };
  fake = startFake(() => ({ keys: [{ ...pub, kid: "team-key", alg: "RS256", use: "sig" }] }));
  await listen(fake, FAKE_PORT);
  proxy = forwardingProxy(() => worker.url);
  await listen(proxy, PROXY_PORT);

  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const serviceAccount = JSON.stringify({ type: "service_account", client_email: "sitemaps@test.iam.gserviceaccount.com", private_key: privateKey });
  worker = await startWorker(
    {
      SITES: SITE,
      // The Access stand-in on loopback (a deployment takes only https://<team>.cloudflareaccess.com).
      ACCESS_TEST_ISSUER: FAKE,
      ACCESS_AUD: AUD,
      GSC_TOKEN_URL: `${FAKE}/token`,
      GSC_API_BASE: FAKE,
      NOTIFY_SETTLE_SECONDS: "0",
      MAX_URLS_PER_SHARD: "100",
    },
    { secrets: { ADMIN_TOKEN, GSC_SERVICE_ACCOUNT: serviceAccount } },
  );
  await worker.seed([...demoSection(SITE, "pages", 120), ...demoSection(SITE, "products", 140)]);
  // A cron run: regeneration publishes the shards, then Search Console is told and read.
  const run = await cronAndJobs(worker.harness, worker.env.DB);
  expect(run.outcome).toBe("ok");

  profile = mkdtempSync(join(tmpdir(), "edge-sitemaps-dashboard-"));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      `--host-resolver-rules=MAP localhost 127.0.0.1`,
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await worker?.close();
  await close(proxy);
  await close(fake);
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe("the dashboard in Chromium", () => {
  it("signed out: the sign-in form and no site data", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const res = await page.goto(`${SITE}/sitemap-admin/`);
    expect(res?.status()).toBe(401);
    expect(await page.locator("h1").textContent()).toBe("Sitemaps admin");
    expect(await page.locator("#token").count()).toBe(1);
    expect(await page.locator("[data-figure]").count()).toBe(0);
    expect(await page.content()).not.toContain(SITE);
    await context.close();
  });

  it("signed in with the token: status's numbers, SVG charts, Search Console's report, a strict cookie", async () => {
    const status = await adminStatus();
    expect(status.manifest.shards).toBe(4); // 120 + 140 URLs at 100 per shard
    expect(status.manifest.urls).toBe(260);
    expect(gscReads.length).toBe(1);
    expect(status.searchConsole.sitemaps).toEqual([
      expect.objectContaining({ path: `${SITE}/sitemap.xml`, errors: 2, lastDownloaded: DOWNLOADED }),
      expect.objectContaining({ path: `${SITE}/sitemap-pages-1.xml`, errors: 0, warnings: 1 }),
    ]);

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${SITE}/sitemap-admin/`);
    await page.fill("#token", "a-wrong-token-0123456789abcdef-0123");
    await page.click("button[type=submit]");
    expect(await page.locator("[role=alert]").textContent()).toContain("not accepted");
    expect(await context.cookies()).toEqual([]);

    await page.fill("#token", ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${SITE}/sitemap-admin/`), page.click("button[type=submit]")]);
    expect(await page.locator('[data-figure="shards"]').textContent()).toBe(String(status.manifest.shards));
    expect(await page.locator('[data-figure="urls"]').textContent()).toBe(status.manifest.urls.toLocaleString("en-US"));
    expect(await page.locator("svg").count()).toBeGreaterThan(0);
    expect(await page.locator("svg.columns").count()).toBeGreaterThan(0);
    const gsc = page.locator(`tr[data-sitemap="${SITE}/sitemap.xml"]`);
    expect(await gsc.locator('[data-figure="gsc-errors"]').textContent()).toBe("2");
    expect(await gsc.locator('[data-figure="gsc-downloaded"]').textContent()).toBe("2026-03-01 08:00:00Z");
    expect(await gsc.textContent()).toContain("has errors");

    const [cookie, ...others] = await context.cookies();
    expect(others).toEqual([]);
    expect(cookie).toMatchObject({ name: "sitemap_admin_session", httpOnly: true, secure: false, sameSite: "Strict", path: "/" });
    expect(cookie!.value).not.toContain(ADMIN_TOKEN);
    // Scripts cannot read it.
    expect(await page.evaluate(() => document.cookie)).toBe("");

    // The CSP: the stylesheet route applies, an inline script does not run.
    expect(await page.locator('[data-figure="shards"]').evaluate((el) => getComputedStyle(el).fontWeight)).toBe("600");
    await page.evaluate(() => {
      const script = document.createElement("script");
      script.textContent = "document.body.dataset.ran = 'yes'";
      document.head.append(script);
    });
    expect(await page.evaluate(() => document.body.dataset["ran"] ?? null)).toBeNull();

    // "Regenerate now": the form carries the session's CSRF token; back on the dashboard with the outcome.
    const runsBefore = await regenerationRuns();
    // The route queues a job (202); the local queue's consumer runs it in its own invocation.
    await Promise.all([page.waitForURL(`${SITE}/sitemap-admin/?done=regenerate&status=202`), page.click("button[value=regenerate]")]);
    expect(await page.locator('[data-figure="action-outcome"]').textContent()).toBe("Regeneration requested (HTTP 202).");
    const until = Date.now() + 60_000;
    while ((await regenerationRuns()) === runsBefore && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await regenerationRuns()).toBe(runsBefore + 1);
    expect(await page.locator("table.audit").textContent()).toContain("POST /sitemap-admin/regenerate");

    // A script on another page of the site's origin (the dashboard's CSP allows no script and no
    // fetch) rides the same cookie and reads the dashboard's CSRF token, and gets nowhere with them.
    const elsewhere = await context.newPage();
    await elsewhere.goto(`${SITE}/robots.txt`);
    const scripted = await elsewhere.evaluate(async () => {
      const dashboard = await (await fetch("/sitemap-admin/")).text();
      const csrf = /name="csrf" value="([^"]+)"/.exec(dashboard)?.[1] ?? "";
      const put = await fetch("/sitemap-admin/urls", {
        method: "PUT",
        headers: { "Content-Type": "application/x-ndjson" },
        body: JSON.stringify({ loc: `${location.origin}/pages/injected` }),
      });
      const regenerate = await fetch("/sitemap-admin/regenerate", { method: "POST", body: new URLSearchParams({ csrf }) });
      const status = await fetch("/sitemap-admin/status");
      return { csrf: csrf.length, put: put.status, regenerate: regenerate.status, status: status.status };
    });
    expect(scripted).toEqual({ csrf: 43, put: 403, regenerate: 403, status: 200 });
    // Issue 43: the script submits the dashboard's form itself (form.submit(): a same-origin
    // navigation, which carries the token), pointed at ?full=1, twice in a row: refused both times
    // (the action takes no query). Without a query, so soon after the click above: the cooldown.
    const csrf = await elsewhere.evaluate(async () => /name="csrf" value="([^"]+)"/.exec(await (await fetch("/sitemap-admin/")).text())?.[1] ?? "");
    const submit = async (action: string, status: number) => {
      await elsewhere.goto(`${SITE}/robots.txt`);
      await Promise.all([
        elsewhere.waitForURL(`${SITE}/sitemap-admin/?done=regenerate&status=${status}`),
        elsewhere.evaluate(
          ([to, token]) => {
            const form = document.createElement("form");
            form.method = "post";
            form.action = to;
            const field = Object.assign(document.createElement("input"), { type: "hidden", name: "csrf", value: token });
            form.append(field);
            document.body.append(form);
            form.submit();
          },
          [action, csrf] as const,
        ),
      ]);
    };
    const runsAfterClick = await regenerationRuns();
    await submit("/sitemap-admin/regenerate?full=1", 403);
    await submit("/sitemap-admin/regenerate?full=1", 403);
    await submit("/sitemap-admin/regenerate", 429);
    expect(await elsewhere.locator('[data-figure="action-outcome"]').textContent()).toContain("less than 5 minutes ago (HTTP 429)");
    const refused = ((await adminStatus()) as unknown as { audit: { refused: { reason: string; count: number }[] } }).audit.refused;
    const by = (reason: string) => refused.filter((r) => r.reason === reason).reduce((n, r) => n + r.count, 0);
    expect([by("action-query"), by("cooldown"), by("not-for-browsers")]).toEqual([2, 1, 2]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await regenerationRuns()).toBe(runsAfterClick);
    await elsewhere.close();

    // Sign out: back to the form, the cookie gone, and the old cookie reads nothing.
    await Promise.all([page.waitForURL(`${SITE}/sitemap-admin/`), page.click("button:has-text('Sign out')")]);
    expect(await page.locator("#token").count()).toBe(1);
    expect(await context.cookies()).toEqual([]);
    const old = await rawGet(
      `http://127.0.0.1:${PROXY_PORT}/sitemap-admin/status`,
      { cookie: `${cookie!.name}=${cookie!.value}` },
      `localhost:${PROXY_PORT}`,
    );
    expect(old.status).toBe(401);
    await context.close();
  });

  it("signed in by a Cloudflare Access JWT: the same numbers", async () => {
    const status = await adminStatus();
    const context = await browser.newContext({ extraHTTPHeaders: { "Cf-Access-Jwt-Assertion": await accessJwt() } });
    const page = await context.newPage();
    const res = await page.goto(`${SITE}/sitemap-admin/`);
    expect(res?.status()).toBe(200);
    expect(await page.locator('[data-figure="shards"]').textContent()).toBe(String(status.manifest.shards));
    expect(await page.locator('[data-figure="urls"]').textContent()).toBe(status.manifest.urls.toLocaleString("en-US"));
    expect(await page.locator('[data-figure="section-products-urls"]').textContent()).toBe("140");
    await context.close();
  });
});
