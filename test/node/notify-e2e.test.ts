/**
 * Notification end to end: the real Worker (wrangler's test harness: workerd, real local D1) with
 * IndexNow, two ping endpoints and the robots.txt origin pointing at a real node:http server on
 * 127.0.0.1 run by this test. Records change, the cron trigger runs (`scheduled`), and the
 * assertions are on what that server received over the wire.
 */
import { type IncomingHttpHeaders, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestHarness, createTestHarness } from "wrangler";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { parseConfig } from "../../src/config.ts";
import { validateBatch } from "../../src/core/validate.ts";
import { cronAndJobs } from "./support/jobs.ts";

const SITE = "https://shop.example";
const KEY = "e2e-indexnow-key-5f3a9c";
const ADMIN = "e2e-admin-token-0123456789abcdef";

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let base: string;
const received: Received[] = [];
/** Status the fake IndexNow endpoint answers with. */
let indexNowStatus = 200;

let harness: TestHarness;
let env: Env;
let writer: D1RecordWriter;
let config: ReturnType<typeof parseConfig>;

const pathsOf = (prefix: string) => received.filter((r) => r.path.startsWith(prefix));

async function write(inputs: readonly unknown[], now: number): Promise<void> {
  await writer.upsert(validateBatch(inputs, { sites: config.sites, defaultSection: config.defaultSection }), now);
}

async function cron(): Promise<void> {
  const result = await cronAndJobs(harness, env.DB);
  expect(result.outcome).toBe("ok");
}

/** Waits until the wall clock has passed `t` (change stamps must be after the last run's time). */
async function settledAfter(t: number): Promise<number> {
  while (Date.now() <= t) await new Promise((r) => setTimeout(r, 2));
  return Date.now();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "";
      received.push({ method: req.method ?? "", path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      if (path === "/indexnow") res.writeHead(indexNowStatus, { "Content-Type": "text/plain" }).end(indexNowStatus === 200 ? "" : "throttled");
      else if (path.startsWith("/ping?")) res.writeHead(200).end("ok");
      else if (path.startsWith("/dead-ping?")) res.writeHead(410).end("Gone");
      else if (path === "/origin/robots.txt") res.writeHead(200, { "Content-Type": "text/plain" }).end("User-agent: *\nDisallow: /checkout\n");
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const vars = {
    SITES: SITE,
    INDEXNOW_ENDPOINT: `${base}/indexnow`,
    PING_URLS: `${base}/ping?sitemap={sitemap} ${base}/dead-ping?u={sitemap}`,
    ROBOTS_ORIGIN_URL: `${base}/origin/robots.txt`,
    // Stamps are written right before each run here; production keeps the 60 s default.
    NOTIFY_SETTLE_SECONDS: "0",
  };
  harness = createTestHarness({ workers: [{ configPath: "./wrangler.jsonc", vars, secrets: { INDEXNOW_KEY: KEY, ADMIN_TOKEN: ADMIN } }] });
  await harness.listen();
  const worker = harness.getWorker<Env>();
  await worker.applyD1Migrations("DB");
  env = await worker.getEnv();
  writer = new D1RecordWriter(env.DB);
  config = parseConfig({ ...env, ...vars, INDEXNOW_KEY: KEY } as unknown as Record<string, unknown>);
});

afterAll(async () => {
  await harness?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe("notifying search engines, end to end", () => {
  const pages = (n: number) => Array.from({ length: n }, (_, i) => ({ loc: `${SITE}/p/${i}`, lastmod: "2026-01-01" }));

  it("announces the changed URLs over IndexNow and pings the live endpoint after each cron run", async () => {
    await write(pages(20), Date.now() - 3_600_000);
    const firstRun = Date.now();
    await cron();
    // IndexNow's first run only sets its cursor: the 20 URLs that existed before are not sent.
    expect(pathsOf("/indexnow")).toHaveLength(0);
    const index = encodeURIComponent(`${SITE}/sitemap.xml`);
    expect(pathsOf("/ping").map((r) => [r.method, r.path])).toEqual([["GET", `/ping?sitemap=${index}`]]);
    expect(pathsOf("/dead-ping").map((r) => [r.method, r.path])).toEqual([["GET", `/dead-ping?u=${index}`]]);

    // Change records: two updated, one deleted, one added, one re-sent unchanged.
    const t = await settledAfter(firstRun);
    await write(
      [
        { loc: `${SITE}/p/3`, lastmod: "2026-02-02" },
        { loc: `${SITE}/p/5`, priority: "0.9" },
        { loc: `${SITE}/p/6`, lastmod: "2026-01-01" },
      ],
      t,
    );
    await writer.delete([`${SITE}/p/9`], t + 1);
    await write([{ loc: `${SITE}/new-arrival?colour=red&size=M` }], t + 2);
    await settledAfter(t + 2);
    await cron();

    const posts = pathsOf("/indexnow");
    expect(posts).toHaveLength(1);
    const post = posts[0]!;
    expect(post.method).toBe("POST");
    expect(post.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(post.body)).toEqual({
      host: "shop.example",
      key: KEY,
      keyLocation: `${SITE}/sitemap-indexnow-${KEY}.txt`,
      urlList: [`${SITE}/p/3`, `${SITE}/p/5`, `${SITE}/p/9`, `${SITE}/new-arrival?colour=red&size=M`],
    });
    expect(pathsOf("/ping")).toHaveLength(2);
    // 410 retired the dead endpoint on the first run: never called again.
    expect(pathsOf("/dead-ping")).toHaveLength(1);

    // The announced index is what the Worker serves.
    const served = await harness.getWorker().fetch(`${SITE}/sitemap.xml`);
    expect(served.status).toBe(200);
    expect(await served.text()).toContain("<sitemapindex");

    // No change, no request.
    const before = received.length;
    await cron();
    expect(received.length).toBe(before);
  });

  it("serves the key file at keyLocation as UTF-8 text", async () => {
    const keyLocation = JSON.parse(pathsOf("/indexnow")[0]!.body).keyLocation as string;
    const res = await harness.getWorker().fetch(keyLocation);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toBe(KEY);
    expect((await harness.getWorker().fetch(`${SITE}/sitemap-indexnow-not-the-key.txt`)).status).toBe(404);
  });

  it("keeps URLs pending through a 429 and sends them once when the engine accepts", async () => {
    const runAt = Date.now();
    const t = await settledAfter(runAt);
    await write([{ loc: `${SITE}/p/11`, lastmod: "2026-03-03" }], t);
    await settledAfter(t);
    indexNowStatus = 429;
    await cron();
    expect(pathsOf("/indexnow")).toHaveLength(2);
    indexNowStatus = 200;
    await cron(); // inside the backoff: nothing sent
    expect(pathsOf("/indexnow")).toHaveLength(2);
    const stillPending = await env.DB.prepare("SELECT failures, last_status FROM notify_targets WHERE target = 'indexnow' AND origin = ?")
      .bind(SITE)
      .first<{ failures: number; last_status: number }>();
    expect(stillPending).toEqual({ failures: 1, last_status: 429 });
    // The next run after the backoff: make it due now (the harness cannot move the Worker's clock).
    await env.DB.prepare("UPDATE notify_targets SET next_attempt_at = 0 WHERE target = 'indexnow' AND origin = ?").bind(SITE).run();
    await cron();
    await cron();
    const posts = pathsOf("/indexnow");
    expect(posts).toHaveLength(3);
    expect(JSON.parse(posts[1]!.body).urlList).toEqual([`${SITE}/p/11`]);
    expect(JSON.parse(posts[2]!.body).urlList).toEqual([`${SITE}/p/11`]);
  });

  it("serves robots.txt: the origin's file fetched over HTTP, plus the Sitemap: line", async () => {
    const res = await harness.getWorker().fetch(`${SITE}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`User-agent: *\nDisallow: /checkout\n\nSitemap: ${SITE}/sitemap.xml\nSitemap: ${SITE}/sitemap-feed.atom\n`);
    const originFetch = pathsOf("/origin/robots.txt");
    expect(originFetch).toHaveLength(1);
    expect(originFetch[0]!.headers["x-edge-sitemaps-robots"]).toBe("1");
  });

  it("reports each target in the admin status endpoint", async () => {
    const res = await harness.getWorker().fetch(`${SITE}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${ADMIN}` } });
    expect(res.status).toBe(200);
    const { notifications } = (await res.json()) as { notifications: { target: string; httpStatus: number; pending: number; retired: boolean }[] };
    expect(notifications.map((n) => [n.target, n.httpStatus, n.pending, n.retired])).toEqual([
      ["indexnow", 200, 0, false],
      [`ping ${base}/ping?sitemap={sitemap}`, 200, 0, false],
      [`ping ${base}/dead-ping?u={sitemap}`, 410, 0, true],
    ]);
  });
});
