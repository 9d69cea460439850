/**
 * IndexNow in workerd with real D1: only the search engine is fake (injected fetch). Time is
 * passed in, so backoff and the settle window are exercised without waiting.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { IndexNowPayload } from "../../src/notify/indexnow.ts";
import { notifyAfterRegeneration, notifyLowWatermark, notifyStatus } from "../../src/notify/notifier.ts";
import { databaseServices, services } from "../../src/services.ts";
import { FakeEngine, HOUR, MINUTE, MemoryLog, pages, remove, run, siteEnv, upsert } from "./notify-support.ts";
import { call, freshOrigin, validRecords } from "./support.ts";

const KEY = "test-key-0123456789abcdef";
const ENDPOINT = "https://indexnow.test/indexnow";
const T0 = Date.UTC(2026, 0, 1);

function indexNowSite(vars: Record<string, string> = {}) {
  const origin = freshOrigin("inow");
  return { origin, e: siteEnv(origin, { INDEXNOW_KEY: KEY, INDEXNOW_ENDPOINT: ENDPOINT, ...vars }) };
}

/** The first run only sets the cursor: changes before IndexNow was turned on are not sent. */
async function baseline(e: Env, now = T0): Promise<void> {
  const engine = new FakeEngine();
  const report = await run(e, engine, now);
  expect(report.targets[0]!.result).toBe("baseline");
  expect(engine.calls).toHaveLength(0);
}

const urlsOf = (engine: FakeEngine, i: number) => engine.json<IndexNowPayload>(i).urlList;

describe("IndexNow submissions", () => {
  it("POSTs JSON per the protocol: host, key, keyLocation, urlList, UTF-8 JSON content type", async () => {
    const { origin, e } = indexNowSite();
    await upsert(e, pages(origin, 3), T0 - HOUR); // before IndexNow was on: never sent
    await baseline(e);
    await upsert(e, [{ loc: `${origin}/ünïcode?q=a&b=c` }, { loc: `${origin}/page/1`, priority: 0.9 }], T0 + 1000);
    const engine = new FakeEngine(() => new Response(null, { status: 202 }));
    const report = await run(e, engine, T0 + 5 * MINUTE);

    expect(engine.calls).toHaveLength(1);
    const c = engine.calls[0]!;
    expect(c.method).toBe("POST");
    expect(c.url).toBe(ENDPOINT);
    expect(c.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(engine.json(0)).toEqual({
      host: new URL(origin).host,
      key: KEY,
      keyLocation: `${origin}/sitemap-indexnow-${KEY}.txt`,
      // commit order: the batch's own order (D1's feed reads changes as they were numbered)
      urlList: [`${origin}/%C3%BCn%C3%AFcode?q=a&b=c`, `${origin}/page/1`],
    });
    expect(report.targets).toEqual([{ target: "indexnow", origin, result: "sent", requests: 1, acknowledged: 2, status: 202 }]);
  });

  it("reads the same change feed from KV records (URL_SOURCE=kv): changed and deleted URLs, each once", async () => {
    const { origin, e } = indexNowSite({ URL_SOURCE: "kv", MANIFEST_STORE: "kv" });
    const writer = services(e).store.writer;
    await writer.upsert(validRecords(e, pages(origin, 5)), T0 - HOUR);
    await baseline(e);
    await writer.upsert(validRecords(e, [{ loc: `${origin}/page/2`, lastmod: "2026-01-01" }, { loc: `${origin}/new` }]), T0 + 1000);
    await writer.delete([`${origin}/page/4`], T0 + 2000);
    const engine = new FakeEngine();
    await run(e, engine, T0 + 5 * MINUTE);
    expect(urlsOf(engine, 0)).toEqual([`${origin}/page/2`, `${origin}/new`, `${origin}/page/4`]);
    expect((await notifyStatus(services(e)))[0]).toMatchObject({ target: "indexnow", pending: 0, lastStatus: 200 });
    await run(e, engine, T0 + HOUR);
    expect(engine.calls).toHaveLength(1);
  });

  it("sends only URLs added, updated or deleted since the last acknowledged submission", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 50), T0 + 1000);
    const engine = new FakeEngine();
    await run(e, engine, T0 + 5 * MINUTE);
    expect(urlsOf(engine, 0)).toHaveLength(50);

    const t1 = T0 + 10 * MINUTE;
    await upsert(e, [...pages(origin, 10, 20), { loc: `${origin}/page/3`, changefreq: "daily" }, { loc: `${origin}/page/7`, lastmod: "2026-01-01" }], t1);
    await upsert(e, [{ loc: `${origin}/new` }], t1 + 1);
    await remove(e, [`${origin}/page/40`, `${origin}/never-existed`], t1 + 2);
    await run(e, engine, t1 + 5 * MINUTE);
    expect(engine.calls).toHaveLength(2);
    expect(urlsOf(engine, 1)).toEqual([`${origin}/page/3`, `${origin}/page/7`, `${origin}/new`, `${origin}/page/40`]);

    await run(e, engine, t1 + 2 * HOUR);
    expect(engine.calls).toHaveLength(2);
  });

  it("batches at 10,000 URLs per POST, oldest change first, every URL once", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 25_001), T0 + 1000);
    const engine = new FakeEngine();
    const report = await run(e, engine, T0 + 5 * MINUTE);

    expect(engine.calls.map((_, i) => urlsOf(engine, i).length)).toEqual([10_000, 10_000, 5_001]);
    const all = engine.calls.flatMap((_, i) => urlsOf(engine, i));
    expect(new Set(all).size).toBe(25_001);
    expect(all[0]).toBe(`${origin}/page/0`);
    expect(all.at(-1)).toBe(`${origin}/page/25000`);
    expect(report.targets[0]).toMatchObject({ result: "sent", requests: 3, acknowledged: 25_001 });
  });

  it("stops at INDEXNOW_BATCHES_PER_RUN and continues on the next run", async () => {
    const { origin, e } = indexNowSite({ INDEXNOW_BATCHES_PER_RUN: "1" });
    await baseline(e);
    await upsert(e, pages(origin, 12_000), T0 + 1000);
    const engine = new FakeEngine();
    await run(e, engine, T0 + 5 * MINUTE);
    await run(e, engine, T0 + 65 * MINUTE);
    expect(engine.calls.map((_, i) => urlsOf(engine, i).length)).toEqual([10_000, 2_000]);
    expect(new Set(engine.calls.flatMap((_, i) => urlsOf(engine, i))).size).toBe(12_000);
  });

  it("stops starting batches at the step's deadline, says more is pending, and the next step sends the rest exactly once", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 25_000), T0 + 1000);
    const deadline = Date.now() + 60_000;
    // The first batch's answer comes as the step's time budget runs out.
    const engine = new FakeEngine(() => {
      vi.spyOn(Date, "now").mockReturnValue(deadline);
      return new Response(null, { status: 200 });
    });
    const first = await notifyAfterRegeneration(databaseServices(e), { now: T0 + 5 * MINUTE, fetch: engine.fetch, log: new MemoryLog(), deadline });
    vi.restoreAllMocks();
    expect(first.targets[0]).toMatchObject({ result: "sent", requests: 1, acknowledged: 10_000, more: true });
    engine.respond = () => new Response(null, { status: 200 });
    const second = await run(e, engine, T0 + 6 * MINUTE);
    expect(second.targets[0]).toMatchObject({ result: "sent", requests: 2, acknowledged: 15_000 });
    expect(second.targets[0]!.more).toBeUndefined();
    const sent = engine.calls.flatMap((_, i) => urlsOf(engine, i));
    expect(sent).toHaveLength(25_000);
    expect(new Set(sent).size).toBe(25_000);
  });

  it("429 then 200 across two runs: each URL is acknowledged exactly once overall, after the backoff", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 15_000), T0 + 1000);
    const engine = new FakeEngine(() => new Response("slow down", { status: 429, headers: { "Retry-After": "600" } }));
    const first = await run(e, engine, T0 + 5 * MINUTE);
    expect(first.targets[0]).toMatchObject({ result: "retry", status: 429, requests: 1 });
    expect(engine.calls).toHaveLength(1); // no second batch thrown at a throttling endpoint

    engine.respond = () => new Response(null, { status: 200 });
    const tooSoon = await run(e, engine, T0 + 10 * MINUTE); // Retry-After: 600 s not over yet
    expect(tooSoon.targets[0]!.result).toBe("waiting");
    expect(engine.calls).toHaveLength(1);

    const second = await run(e, engine, T0 + 70 * MINUTE);
    expect(second.targets[0]).toMatchObject({ result: "sent", acknowledged: 15_000, requests: 2 });
    await run(e, engine, T0 + 3 * HOUR);

    const accepted = engine.calls.slice(1).flatMap((_, i) => urlsOf(engine, i + 1));
    expect(accepted).toHaveLength(15_000);
    expect(new Set(accepted).size).toBe(15_000);
    expect(engine.calls).toHaveLength(3);
  });

  it("5xx and network errors keep the URLs pending and back off exponentially", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 5), T0 + 1000);
    const engine = new FakeEngine(() => new Response("oops", { status: 503 }));
    await run(e, engine, T0 + 2 * MINUTE); // failure 1: +5 min
    await run(e, engine, T0 + 6 * MINUTE); // too soon
    await run(e, engine, T0 + 8 * MINUTE); // failure 2: +10 min
    await run(e, engine, T0 + 17 * MINUTE); // too soon
    engine.respond = () => {
      throw new TypeError("connection reset");
    };
    await run(e, engine, T0 + 19 * MINUTE); // failure 3 (network): +20 min
    await run(e, engine, T0 + 38 * MINUTE); // too soon
    expect(engine.calls).toHaveLength(3);
    const [status] = await notifyStatus(services(e));
    expect(status).toMatchObject({ target: "indexnow", pending: 5, failures: 3, lastStatus: 0, lastError: "connection reset", lastSuccessAt: null });

    engine.respond = () => new Response(null, { status: 200 });
    await run(e, engine, T0 + 40 * MINUTE);
    expect(engine.calls).toHaveLength(4);
    expect(urlsOf(engine, 3)).toHaveLength(5);
    expect((await notifyStatus(services(e)))[0]).toMatchObject({ pending: 0, failures: 0, lastStatus: 200, lastSuccessAt: T0 + 40 * MINUTE });
  });

  it("403 keeps the URLs pending, logs a configuration error with the body, and does not hammer", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 20), T0 + 1000);
    const engine = new FakeEngine(() => new Response("Key not valid: key file not found", { status: 403 }));
    const log = new MemoryLog();
    const report = await run(e, engine, T0 + 5 * MINUTE, log);
    expect(report.targets[0]).toMatchObject({ result: "config", status: 403 });
    expect(log.lines.filter((l) => l.startsWith("error configuration error: IndexNow"))).toHaveLength(1);
    expect(log.lines.join("\n")).toContain("Key not valid: key file not found");
    expect((await notifyStatus(services(e)))[0]).toMatchObject({ pending: 20, lastStatus: 403, failures: 1, nextAttemptAt: T0 + 5 * MINUTE + HOUR });

    for (const later of [10, 30, 60]) await run(e, engine, T0 + later * MINUTE); // within the hour: nothing
    expect(engine.calls).toHaveLength(1);
    await run(e, engine, T0 + 66 * MINUTE); // failure 2: next in 2 h
    await run(e, engine, T0 + 2 * HOUR);
    expect(engine.calls).toHaveLength(2);

    // A changed key is tried at once, backoff or not.
    engine.respond = () => new Response(null, { status: 200 });
    const fixed = siteEnv(origin, { INDEXNOW_KEY: "another-key-42", INDEXNOW_ENDPOINT: ENDPOINT });
    await run(fixed, engine, T0 + 2 * HOUR + MINUTE);
    expect(engine.calls).toHaveLength(3);
    expect(engine.json<IndexNowPayload>(2)).toMatchObject({ key: "another-key-42", keyLocation: `${origin}/sitemap-indexnow-another-key-42.txt` });
    expect(urlsOf(engine, 2)).toHaveLength(20);
  });

  it("an interrupted run loses nothing: accepted batches stay acknowledged, the rest is sent next run", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 23_000), T0 + 1000);
    const engine = new FakeEngine((_, i) => {
      if (i === 1) throw new TypeError("network connection lost");
      return new Response(null, { status: 200 });
    });
    await run(e, engine, T0 + 5 * MINUTE);
    expect((await notifyStatus(services(e)))[0]).toMatchObject({ pending: 13_000 });
    await run(e, engine, T0 + 15 * MINUTE);
    const accepted = [0, 2, 3].flatMap((i) => urlsOf(engine, i));
    expect(engine.calls).toHaveLength(4);
    expect(accepted).toHaveLength(23_000);
    expect(new Set(accepted).size).toBe(23_000);
    expect(urlsOf(engine, 2)).toEqual(urlsOf(engine, 1)); // the lost batch, resent
  });

  it("two overlapping runs send each URL once: the second finds the site leased and skips it", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 12_000), T0 + 1000);
    const engine = new FakeEngine();
    const [logA, logB] = [new MemoryLog(), new MemoryLog()];
    const reports = await Promise.all([run(e, engine, T0 + 5 * MINUTE, logA), run(e, engine, T0 + 5 * MINUTE, logB)]);
    expect(reports.map((r) => r.targets.length).sort()).toEqual([0, 1]);
    expect([...logA.lines, ...logB.lines].filter((l) => l.includes("another notification run holds the site"))).toHaveLength(1);
    const all = engine.calls.flatMap((_, i) => urlsOf(engine, i));
    expect(all).toHaveLength(12_000);
    expect(new Set(all).size).toBe(12_000);

    // A run that died holding the lease blocks the site only until the lease expires.
    await env.DB.prepare("UPDATE notify_leases SET lease_id = 'dead-run', lease_until = ? WHERE origin = ?")
      .bind(T0 + 30 * MINUTE, origin)
      .run();
    await upsert(e, pages(origin, 1, 50_000), T0 + 10 * MINUTE);
    await run(e, engine, T0 + 20 * MINUTE);
    expect(engine.calls).toHaveLength(2);
    await run(e, engine, T0 + 31 * MINUTE);
    expect(engine.calls).toHaveLength(3);
    expect(urlsOf(engine, 2)).toEqual([`${origin}/page/50000`]);
  });

  it("on a stamp-ordered feed (KV), leaves changes younger than the settle time for the next run", async () => {
    const { origin, e } = indexNowSite({ URL_SOURCE: "kv", MANIFEST_STORE: "kv" });
    const writer = services(e).store.writer;
    await baseline(e);
    await writer.upsert(validRecords(e, pages(origin, 2)), T0 + 10 * MINUTE);
    await writer.upsert(validRecords(e, pages(origin, 1, 100)), T0 + 10 * MINUTE + 30_000);
    const engine = new FakeEngine();
    await run(e, engine, T0 + 11 * MINUTE); // settle 60 s: the last write is 30 s old
    expect(urlsOf(engine, 0)).toEqual([`${origin}/page/0`, `${origin}/page/1`]);
    await run(e, engine, T0 + 12 * MINUTE);
    expect(urlsOf(engine, 1)).toEqual([`${origin}/page/100`]);
  });

  it("on D1's commit-ordered feed, sends what committed at once, whatever its stamp: no settle time", async () => {
    const { origin, e } = indexNowSite();
    await baseline(e);
    await upsert(e, pages(origin, 2), T0 + 10 * MINUTE);
    await upsert(e, pages(origin, 1, 100), T0 + 10 * MINUTE + 30_000);
    // Committed last, stamped before both: a stamp cursor would already be past it.
    await upsert(e, pages(origin, 1, 200), T0 + 8 * MINUTE);
    const engine = new FakeEngine();
    await run(e, engine, T0 + 11 * MINUTE);
    expect(urlsOf(engine, 0)).toEqual([`${origin}/page/0`, `${origin}/page/1`, `${origin}/page/100`, `${origin}/page/200`]);
    await run(e, engine, T0 + 12 * MINUTE);
    expect(engine.calls).toHaveLength(1);
  });

  it("keeps separate cursors per site (host)", async () => {
    const a = freshOrigin("inow-a");
    const b = freshOrigin("inow-b");
    const e = siteEnv(`${a} ${b}`, { INDEXNOW_KEY: KEY, INDEXNOW_ENDPOINT: ENDPOINT });
    await run(e, new FakeEngine(), T0);
    await upsert(e, [...pages(a, 2), ...pages(b, 3)], T0 + 1000);
    const engine = new FakeEngine((c) => new Response(null, { status: c.body.includes(new URL(a).host) ? 200 : 500 }));
    await run(e, engine, T0 + 5 * MINUTE);
    await run(e, engine, T0 + 20 * MINUTE);
    expect(engine.calls.map((c) => JSON.parse(c.body).host)).toEqual([new URL(a).host, new URL(b).host, new URL(b).host]);
  });

  it("does nothing, and reads nothing, when IndexNow is off", async () => {
    const origin = freshOrigin("off");
    const e = siteEnv(origin);
    await upsert(e, pages(origin, 2), T0);
    const engine = new FakeEngine();
    expect((await run(e, engine, T0 + HOUR)).targets).toEqual([]);
    expect(engine.calls).toHaveLength(0);
    expect(await notifyStatus(services(e))).toEqual([]);
    expect(await notifyLowWatermark(services(e), origin)).toBeNull();
  });

  it("reports a low watermark that protects tombstones not yet acknowledged", async () => {
    const { origin, e } = indexNowSite();
    expect((await notifyLowWatermark(services(e), origin, T0))?.stamp).toBe(T0 - MINUTE); // before the first run: its horizon
    await baseline(e);
    await upsert(e, pages(origin, 3), T0 + 1000);
    await remove(e, [`${origin}/page/1`], T0 + 2000);
    const engine = new FakeEngine(() => new Response(null, { status: 503 }));
    await run(e, engine, T0 + 5 * MINUTE);
    const watermark = await notifyLowWatermark(services(e), origin);
    expect(watermark?.stamp).toBe(T0 - MINUTE);
    // What the regeneration may purge: `deleted = 1 AND updated_at < watermark` — not this tombstone.
    const purgeable = await env.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ? AND deleted = 1 AND updated_at < ?")
      .bind(origin, watermark?.stamp)
      .first<{ n: number }>();
    expect(purgeable?.n).toBe(0);

    engine.respond = () => new Response(null, { status: 200 });
    await run(e, engine, T0 + HOUR);
    expect((await notifyLowWatermark(services(e), origin))?.stamp).toBe(T0 + 2000);
  });

  it("shows each target in GET /sitemap-admin/status: last attempt, last success, HTTP status, pending", async () => {
    const { origin, e } = indexNowSite({ PING_URLS: "https://status-ping.test/p?s={sitemap}" });
    await baseline(e);
    await upsert(e, pages(origin, 7), T0 + 1000);
    const engine = new FakeEngine((c) => new Response(null, { status: c.method === "POST" ? 429 : 200 }));
    await run(e, engine, T0 + 5 * MINUTE);
    const res = await call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: "Bearer test-admin-token-0123456789abcdef" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { notifications: unknown[] };
    expect(body.notifications).toEqual([
      {
        target: "indexnow",
        lastAttempt: new Date(T0 + 5 * MINUTE).toISOString(),
        lastSuccess: null,
        httpStatus: 429,
        pending: 7,
        failures: 1,
        nextAttempt: new Date(T0 + 10 * MINUTE).toISOString(),
        retired: false,
        lastError: "",
      },
      {
        target: "ping https://status-ping.test/p?s={sitemap}",
        lastAttempt: new Date(T0 + 5 * MINUTE).toISOString(),
        lastSuccess: new Date(T0 + 5 * MINUTE).toISOString(),
        httpStatus: 200,
        pending: 0,
        failures: 0,
        nextAttempt: null,
        retired: false,
        lastError: null,
      },
    ]);
  });

  it("reads pending changes with an index range scan", async () => {
    const plan = await env.DB.prepare(
      `EXPLAIN QUERY PLAN SELECT id, loc, updated_at FROM urls WHERE origin = ?1 AND updated_at >= ?2 AND updated_at <= ?4 AND (updated_at > ?2 OR id > ?3) ORDER BY updated_at, id LIMIT ?5`,
    )
      .bind("https://x.example", 0, 0, 1, 10)
      .all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail).join(" | ");
    expect(details).toMatch(/SEARCH urls USING INDEX urls_site_changed \(origin=\? AND updated_at>\? AND updated_at<\?\)/);
    expect(details).not.toMatch(/TEMP B-TREE/);
  });
});

describe("the IndexNow key file", () => {
  it("is served as UTF-8 text under the Worker's route, only for the configured key", async () => {
    const { origin, e } = indexNowSite();
    const res = await call(e, `${origin}/sitemap-indexnow-${KEY}.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toBe(KEY);
    const head = await call(e, `${origin}/sitemap-indexnow-${KEY}.txt`, { method: "HEAD" });
    expect(head.status).toBe(200);

    const wrong = await call(e, `${origin}/sitemap-indexnow-wrong-key-1234.txt`);
    expect(wrong.status).toBe(404);
    expect(wrong.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect((await call(siteEnv(origin), `${origin}/sitemap-indexnow-${KEY}.txt`)).status).toBe(404);
  });

  it("turns IndexNow off for a malformed INDEXNOW_KEY, naming the variable in the log; the sitemaps stay up and no key file is served", async () => {
    const origin = freshOrigin();
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    for (const bad of ["short", "has space in it", "x".repeat(129), "ümlaut-key-123"]) {
      const e = siteEnv(origin, { INDEXNOW_KEY: bad });
      expect(services(e).config.notify.indexNow).toBeNull();
      expect((await call(e, `${origin}/sitemap-indexnow-${encodeURIComponent(bad)}.txt`)).status).toBe(404);
      expect(log.mock.calls.flat().join(" ")).toMatch(
        /configuration error: INDEXNOW_KEY must be 8 to 128 characters of a-z, A-Z, 0-9 and "-" \(indexnow is off\)/,
      );
      expect(log.mock.calls.flat().join(" ")).not.toContain(bad);
      log.mockClear();
    }
    log.mockRestore();
  });
});
