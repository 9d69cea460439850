/**
 * Issue 43 items 1–2: what crawlers fetched, recorded after the answer through the Worker's entry
 * with real D1 and Cache API. A verified crawler's fetches become rows (at most one per crawler,
 * document, minute and outcome), a claimed one is only counted, and nothing changes the answer.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1CrawlerLog } from "../../src/adapters/d1/crawler-log.ts";
import { COUNT_FLUSH_MS, CrawlerRecorder, type ObservedFetch } from "../../src/crawlers/recorder.ts";
import type { CrawlersStatus } from "../../src/crawlers/types.ts";
import { housekeep } from "../../src/housekeeping/housekeeping.ts";
import worker from "../../src/index.ts";
import { services } from "../../src/services.ts";
import { bearer, seeded } from "./support/admin.ts";
import { freshOrigin, gunzip } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/150.0 Safari/537.36";
/** Cloudflare's verified-bot flag, as Bot Management fills it. */
const VERIFIED_CF = { verifiedBotCategory: "Search Engine Crawler" };

interface Fetched {
  status: number;
  body: Uint8Array;
  headers: Headers;
}

/** A request through the entry, its body read to the end, then everything it handed to waitUntil awaited. */
async function fetchAs(e: Env, url: string, opts: { ua: string; ip?: string; cf?: object; method?: string }): Promise<Fetched> {
  const ctx = createExecutionContext();
  const request = new Request(url, {
    method: opts.method ?? "GET",
    headers: { "User-Agent": opts.ua, "CF-Connecting-IP": opts.ip ?? "203.0.113.9", "Accept-Encoding": "gzip" },
    ...(opts.cf ? { cf: opts.cf } : {}),
  });
  const res = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, e, ctx);
  const body = new Uint8Array(await res.arrayBuffer());
  await waitOnExecutionContext(ctx);
  return { status: res.status, body, headers: res.headers };
}

async function rows(e: Env, table: "crawler_fetches" | "crawler_counts", origin: string): Promise<number> {
  const r = await e.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE origin = ?1`).bind(origin).first<{ n: number }>();
  return r!.n;
}

async function crawlersOf(e: Env, origin: string): Promise<CrawlersStatus> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`${origin}/sitemap-admin/status`, { headers: bearer }) as Request<unknown, IncomingRequestCfProperties>,
    e,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(res.status).toBe(200);
  return ((await res.json()) as { crawlers: CrawlersStatus }).crawlers;
}

/** A site of three pages in two shards (MAX_URLS_PER_SHARD=2): pages-1, pages-2; pages-3 is past the end. */
const twoShards = () => seeded("crawlers", { MAX_URLS_PER_SHARD: "2" });

describe("a verified crawler's fetches", () => {
  it("the index, two shards and one past the end: status names each document served with its time, status, bytes and source; the 404 is only counted", async () => {
    const { origin, env: e } = await twoShards();
    const before = Date.now();
    const index = await fetchAs(e, `${origin}/sitemap.xml`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    const one = await fetchAs(e, `${origin}/sitemap-pages-1.xml.gz`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    const two = await fetchAs(e, `${origin}/sitemap-pages-2.xml`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    const gone = await fetchAs(e, `${origin}/sitemap-pages-3.xml`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    expect([index.status, one.status, two.status, gone.status]).toEqual([200, 200, 200, 404]);
    expect(new TextDecoder().decode(await gunzip(one.body))).toContain("<urlset");

    const status = await crawlersOf(e, origin);
    expect(status.enabled).toBe(true);
    const google = status.crawlers.find((c) => c.name === "googlebot")!;
    expect(google.index).toMatchObject({ document: "index", path: "/sitemap.xml", status: 200, bytes: index.body.byteLength });
    expect(Date.parse(google.index!.at)).toBeGreaterThanOrEqual(before);
    const docs = Object.fromEntries(google.documents.map((d) => [d.document, d]));
    // The gzip shard's bytes as sent, compressed.
    expect(docs["pages-1"]).toMatchObject({
      path: "/sitemap-pages-1.xml.gz",
      status: 200,
      bytes: one.body.byteLength,
      source: one.headers.get("X-Sitemap-Source"),
    });
    expect(docs["pages-2"]).toMatchObject({ status: 200, bytes: two.body.byteLength });
    // Past the end: a shard the site does not have, named by the path alone (issue 50): no row, no error.
    expect(docs["pages-3"]).toBeUndefined();
    expect(google.errors).toEqual([]);
    expect(google.sections).toEqual([{ section: "pages", shards: 2, fetched: 2, last: expect.objectContaining({ document: "pages-2" }) }]);
    expect(google.requests.verified24h).toBeGreaterThanOrEqual(1);
    // Both listed shards and the index were fetched: nothing is stale.
    expect(status.stale).toEqual({ count: 0, documents: [] });
  });

  it("a document no verified crawler fetched in CRAWLER_STALE_DAYS is stale, once the log is that old", async () => {
    const { origin, env: e } = await twoShards();
    const log = new D1CrawlerLog(e.DB);
    // A new log says nothing is stale: it cannot know what happened before it began.
    expect((await crawlersOf(e, origin)).stale).toEqual({ count: 0, documents: [] });
    const old = Date.now() - 20 * 86400_000;
    await log.recordFetches([
      { origin, crawler: "bingbot", document: "pages-2", path: "/sitemap-pages-2.xml", at: old, status: 200, bytes: 1, source: null },
    ]);
    await fetchAs(e, `${origin}/sitemap-pages-1.xml`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    const status = await crawlersOf(e, origin);
    expect(Date.parse(status.since!)).toBe(old);
    expect(status.stale).toEqual({ count: 2, documents: ["index", "pages-2"] });
  });

  it("a failure stays a problem only while it is the crawler's last answer for the document", async () => {
    const { origin, env: e } = await twoShards();
    const log = new D1CrawlerLog(e.DB);
    const at = Date.now() - 10 * 60_000;
    const f = (document: string, minutes: number, status: number) => ({
      origin,
      crawler: "googlebot",
      document,
      path: `/sitemap-${document}.xml`,
      at: at + minutes * 60_000,
      status,
      bytes: 10,
      source: "live",
    });
    await log.recordFetches([f("pages-1", 0, 503), f("pages-1", 1, 200), f("pages-2", 2, 404)]);
    const google = (await crawlersOf(e, origin)).crawlers.find((c) => c.name === "googlebot")!;
    expect(google.errors.map((x) => [x.document, x.status])).toEqual([["pages-2", 404]]);
    expect(google.documents.map((x) => [x.document, x.status])).toEqual([
      ["pages-2", 404],
      ["pages-1", 200],
    ]);
  });

  it("HEAD and 304 answers are recorded with no body bytes; the answer is the same as without the log", async () => {
    const { origin, env: e } = await twoShards();
    const plain = await fetchAs(e, `${origin}/sitemap-pages-1.xml`, { ua: BROWSER });
    const crawled = await fetchAs(e, `${origin}/sitemap-pages-1.xml`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    expect(crawled.body).toEqual(plain.body);
    expect(crawled.headers.get("ETag")).toBe(plain.headers.get("ETag"));
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${origin}/sitemap-pages-2.xml`, {
        headers: { "User-Agent": GOOGLEBOT, "If-None-Match": plain.headers.get("ETag")!.replace("pages-1", "pages-2") },
        cf: VERIFIED_CF,
      }) as unknown as Request<unknown, IncomingRequestCfProperties>,
      e,
      ctx,
    );
    await res.arrayBuffer();
    await waitOnExecutionContext(ctx);
    const head = await fetchAs(e, `${origin}/sitemap.xml`, { ua: GOOGLEBOT, cf: VERIFIED_CF, method: "HEAD" });
    expect(head.status).toBe(200);
    const google = (await crawlersOf(e, origin)).crawlers.find((c) => c.name === "googlebot")!;
    expect(google.index).toMatchObject({ status: 200, bytes: 0 });
    expect(google.documents.find((d) => d.document === "pages-1")).toMatchObject({ bytes: plain.body.byteLength });
  });

  it("a crawler reading the index 50 times in a minute is one row", async () => {
    const { origin, env: e } = await twoShards();
    for (let i = 0; i < 50; i++) await fetchAs(e, `${origin}/sitemap.xml`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    expect(await rows(e, "crawler_fetches", origin)).toBe(1);
  });

  it("robots.txt fetched by a verified crawler is recorded as robots.txt", async () => {
    const { origin, env: e } = await twoShards();
    // The origin's robots.txt is unreachable here (no server): whatever the answer, it is what the crawler got.
    const got = await fetchAs(e, `${origin}/robots.txt`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    const google = (await crawlersOf(e, origin)).crawlers.find((c) => c.name === "googlebot")!;
    expect(google.robots).toMatchObject({ document: "robots.txt", status: got.status });
  });
});

describe("a request that only claims a crawler", () => {
  it("is counted as unverified and adds no per-document row", async () => {
    const { origin, env: e } = await twoShards();
    await fetchAs(e, `${origin}/sitemap.xml`, { ua: GOOGLEBOT, ip: "198.51.100.7" });
    expect(await rows(e, "crawler_fetches", origin)).toBe(0);
    const google = (await crawlersOf(e, origin)).crawlers.find((c) => c.name === "googlebot")!;
    expect(google.requests).toMatchObject({ verified24h: 0, unverified24h: 1, unverified7d: 1 });
    expect(google.index).toBeNull();
  });

  it("2,000 spoofed requests in a burst add no row of the log and at most one write", async () => {
    const { origin, env: e } = await twoShards();
    await fetchAs(e, `${origin}/sitemap.xml`, { ua: GOOGLEBOT, ip: "198.51.100.7" });
    const before = { fetches: await rows(e, "crawler_fetches", origin), counts: await rows(e, "crawler_counts", origin) };
    let writes = 0;
    const db = e.DB;
    const counting = {
      ...e,
      DB: new Proxy(db, {
        get(t, name) {
          const v = Reflect.get(t, name, t) as unknown;
          if (name === "prepare") {
            return (sql: string) => {
              if (/INSERT[\s\S]*crawler_/.test(sql)) writes++;
              return t.prepare(sql);
            };
          }
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
        },
      }),
    } as Env;
    for (let i = 0; i < 2000; i++) await fetchAs(counting, `${origin}/sitemap.xml`, { ua: GOOGLEBOT, ip: `198.51.${(i >> 8) & 255}.${i & 255}` });
    expect({ fetches: await rows(e, "crawler_fetches", origin), counts: await rows(e, "crawler_counts", origin) }).toEqual(before);
    // The counts go to D1 at most once a minute per isolate: a burst within a minute, at most once.
    expect(writes).toBeLessThanOrEqual(1);
  });

  it("a request with no crawler in its User-Agent is neither counted nor recorded", async () => {
    const { origin, env: e } = await twoShards();
    await fetchAs(e, `${origin}/sitemap.xml`, { ua: BROWSER, cf: VERIFIED_CF });
    expect(await rows(e, "crawler_fetches", origin)).toBe(0);
    expect(await rows(e, "crawler_counts", origin)).toBe(0);
  });
});

describe("Workers Analytics Engine, when bound", () => {
  it("gets one data point per request claiming a crawler, verified or not, and none for others", async () => {
    const { origin, env: seededEnv } = await twoShards();
    const points: { indexes?: string[]; blobs?: string[]; doubles?: number[] }[] = [];
    // The binding's write side (a no-op in local workerd): what the Worker hands it is what is asserted.
    const e = { ...seededEnv, CRAWLER_ANALYTICS: { writeDataPoint: (p: (typeof points)[number]) => points.push(p) } } as unknown as Env;
    await fetchAs(e, `${origin}/sitemap-pages-1.xml`, { ua: GOOGLEBOT, cf: VERIFIED_CF });
    await fetchAs(e, `${origin}/sitemap-pages-9.xml`, { ua: GOOGLEBOT, ip: "198.51.100.7" });
    await fetchAs(e, `${origin}/sitemap.xml`, { ua: BROWSER });
    expect(points).toHaveLength(2);
    expect(points[0]).toMatchObject({
      indexes: [origin],
      blobs: [origin, "googlebot", "cloudflare", "pages-1", expect.any(String), "/sitemap-pages-1.xml"],
    });
    expect(points[0]!.doubles![0]).toBe(200);
    expect(points[1]).toMatchObject({
      blobs: [origin, "googlebot", "unverified", "pages-9", "", "/sitemap-pages-9.xml"],
      doubles: [404, expect.any(Number)],
    });
  });
});

describe("the recorder's bounds", () => {
  const at0 = Date.UTC(2026, 10, 27, 12, 0, 0);
  const fetchOf = (origin: string, at: number, verified: boolean, status = 200): ObservedFetch => ({
    origin,
    crawler: "googlebot",
    verification: verified ? "ip" : null,
    document: "index",
    path: "/sitemap.xml",
    at,
    status,
    bytes: 100,
    source: "cache",
  });

  it("counts go to D1 at once for a database new to the isolate, then a minute after the oldest pending; a slot past its period starts again", async () => {
    const { env: e } = await twoShards();
    const log = new D1CrawlerLog(e.DB);
    const origin = freshOrigin("recorder");
    const recorder = new CrawlerRecorder();
    const stored = async () => (await log.counts(origin)).filter((s) => !s.verified && s.slot.startsWith("h")).reduce((n, s) => n + s.requests, 0);
    await recorder.observe(log, fetchOf(origin, at0, false), null);
    expect(await stored()).toBe(1);
    for (let i = 1; i <= 30; i++) await recorder.observe(log, fetchOf(origin, at0 + i * 1000, false), null);
    expect(await stored()).toBe(1);
    await recorder.observe(log, fetchOf(origin, at0 + COUNT_FLUSH_MS + 1000, false), null);
    expect(await stored()).toBe(32);
    // A day later the hour's slot starts again from the new counts (flushed a minute after the first), never growing.
    const later = at0 + 86400_000 + 2 * COUNT_FLUSH_MS;
    await recorder.observe(log, fetchOf(origin, later, false), null);
    await recorder.observe(log, fetchOf(origin, later + COUNT_FLUSH_MS, false), null);
    const slots = await log.counts(origin);
    expect(slots.filter((s) => s.slot === `h${Math.floor((later + COUNT_FLUSH_MS) / 3600_000) % 24}`)).toEqual([
      expect.objectContaining({ requests: 2, period: Math.floor((later + COUNT_FLUSH_MS) / 3600_000) }),
    ]);
    expect(slots.length).toBeLessThanOrEqual(4);
  });

  it("a verified fetch is written once per minute and outcome; a failure after a success in the same minute is written too", async () => {
    const { env: e } = await twoShards();
    const log = new D1CrawlerLog(e.DB);
    const origin = freshOrigin("recorder-fetches");
    const recorder = new CrawlerRecorder();
    let claims = 0;
    const claim = async () => {
      claims++;
      return true;
    };
    for (let i = 0; i < 10; i++) await recorder.observe(log, fetchOf(origin, at0 + i * 1000, true), claim);
    await recorder.observe(log, fetchOf(origin, at0 + 20_000, true, 503), claim);
    await recorder.observe(log, fetchOf(origin, at0 + 61_000, true), claim);
    expect(claims).toBe(3);
    expect(await rows(e, "crawler_fetches", origin)).toBe(3);
    // Another isolate of the location wrote it already: nothing is written.
    await new CrawlerRecorder().observe(log, fetchOf(origin, at0 + 62_000, true), async () => false);
    expect(await rows(e, "crawler_fetches", origin)).toBe(3);
  });

  it("the housekeeping deletes fetches older than the stale window and a day, and keeps the rest", async () => {
    const { env: e } = await twoShards();
    const log = new D1CrawlerLog(e.DB);
    const origin = freshOrigin("crawler-trim");
    const now = Date.now();
    const f = (daysAgo: number) => ({
      origin,
      crawler: "bingbot",
      document: `pages-${daysAgo + 1}`,
      path: "/x",
      at: now - daysAgo * 86400_000,
      status: 200,
      bytes: 1,
      source: null,
    });
    await log.recordFetches([f(1), f(10), f(15), f(16), f(30)]);
    const report = await housekeep([services({ ...e, CRAWLER_STALE_DAYS: "14" } as Env)], { now, keepJob: () => true });
    expect(report.crawlerFetches).toBeGreaterThanOrEqual(2);
    const left = (await log.lastFetches(origin, 0, 10)).map((x) => x.document).sort();
    expect(left).toEqual(["pages-11", "pages-16", "pages-2"]);
  });
});
