/**
 * Issue 50, item 8: the crawler log's counts reach D1 by a timer, not only with a later request.
 * Through the Worker's entry with real D1 and its real timer (CRAWLER_COUNT_FLUSH_SECONDS=2): counts
 * left pending by the last request of a burst are written two seconds on, in one statement, under
 * the counting request's meter, though no request follows. The recorder's own rules with a timer
 * fired by hand: one timer per isolate at a time, each database's counts through its own log, a
 * timer whose invocation ended before it fired replaced, and the minute fallback kept.
 */
import { applyD1Migrations, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { D1CrawlerLog } from "../../src/adapters/d1/crawler-log.ts";
import { COUNT_FLUSH_MS, CrawlerRecorder, type FlushTimer, type ObservedFetch } from "../../src/crawlers/recorder.ts";
import worker from "../../src/index.ts";
import { currentMeter } from "../../src/jobs/meter.ts";
import { seeded } from "./support/admin.ts";
import { freshOrigin } from "./support.ts";

beforeAll(async () => {
  await applyD1Migrations(baseEnv.SITE_B_DB, baseEnv.TEST_MIGRATIONS);
});

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/** Unverified counts (hour slots) of `origin` in `db`. */
async function counted(db: D1Database, origin: string): Promise<number> {
  const r = await db
    .prepare("SELECT COALESCE(SUM(requests), 0) AS n FROM crawler_counts WHERE origin = ?1 AND verified = 0 AND slot LIKE 'h%'")
    .bind(origin)
    .first<{ n: number }>();
  return r!.n;
}

describe("through the entry, with the real timer", () => {
  it("counts left pending by a burst's last request reach D1 two seconds on, in one statement under the request's meter, with no request after", async () => {
    const { origin, env: site } = await seeded("count-timer", { CRAWLER_COUNT_FLUSH_SECONDS: "2" });
    // Every count statement, and whether it ran inside an invocation's meter.
    const statements: { at: number; metered: boolean }[] = [];
    const db = site.DB;
    const e = {
      ...site,
      DB: new Proxy(db, {
        get(t, name) {
          const v = Reflect.get(t, name, t) as unknown;
          if (name === "prepare") {
            return (sql: string) => {
              if (/INSERT[\s\S]*crawler_counts/.test(sql)) statements.push({ at: Date.now(), metered: currentMeter() !== undefined });
              return t.prepare(sql);
            };
          }
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
        },
      }),
    } as Env;
    const send = async () => {
      const ctx = createExecutionContext();
      const request = new Request(`${origin}/sitemap.xml`, { headers: { "User-Agent": GOOGLEBOT, "CF-Connecting-IP": "198.51.100.7" } });
      const res = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, e, ctx);
      await res.arrayBuffer();
      return { ctx, answered: Date.now() };
    };
    // The first count of a database new to the isolate goes at once.
    const first = await send();
    await waitOnExecutionContext(first.ctx);
    expect({ statements: statements.length, counted: await counted(db, origin) }).toEqual({ statements: 1, counted: 1 });
    // The next four are left pending; the first of them to be recorded starts the timer.
    const burst = [await send(), await send(), await send(), await send()];
    expect(await counted(db, origin)).toBe(1);
    // No request follows: the timer writes the four, in one statement.
    await Promise.all(burst.map((b) => waitOnExecutionContext(b.ctx)));
    expect({ statements: statements.length, counted: await counted(db, origin) }).toEqual({ statements: 2, counted: 5 });
    expect(statements[1]!.at - burst[0]!.answered).toBeGreaterThanOrEqual(2000);
    expect(statements[1]!.at - burst[3]!.answered).toBeLessThan(10_000);
    expect(statements.every((s) => s.metered)).toBe(true);
  });
});

describe("the recorder with a timer fired by hand", () => {
  const at0 = Date.UTC(2026, 10, 28, 12, 0, 0);
  const spoofed = (origin: string, at: number): ObservedFetch => ({
    origin,
    crawler: "googlebot",
    verification: null,
    document: "index",
    path: "/sitemap.xml",
    at,
    status: 200,
    bytes: 100,
    source: "cache",
  });
  /** A timer whose flushes are kept to be run by the test, as the runtime runs them `delayMs` on. */
  function handTimer(delayMs = 20_000): FlushTimer & { started: (() => Promise<void>)[] } {
    const started: (() => Promise<void>)[] = [];
    return { delayMs, started, start: (flush) => void started.push(flush) };
  }

  it("one timer at a time; when it fires, each database's counts go through its own log, none into the other's", async () => {
    const logA = new D1CrawlerLog(baseEnv.DB);
    const logB = new D1CrawlerLog(baseEnv.SITE_B_DB);
    const a = freshOrigin("timer-a");
    const b = freshOrigin("timer-b");
    const recorder = new CrawlerRecorder();
    const timer = handTimer();
    // Each database's first count goes at once: no timer.
    await recorder.observe(logA, spoofed(a, at0), null, undefined, timer);
    await recorder.observe(logB, spoofed(b, at0), null, undefined, timer);
    expect(timer.started).toHaveLength(0);
    for (let i = 1; i <= 10; i++) {
      await recorder.observe(logA, spoofed(a, at0 + i * 1000), null, undefined, timer);
      await recorder.observe(logB, spoofed(b, at0 + i * 1000), null, undefined, timer);
    }
    expect(timer.started).toHaveLength(1);
    expect([await counted(baseEnv.DB, a), await counted(baseEnv.SITE_B_DB, b)]).toEqual([1, 1]);
    await timer.started[0]!();
    expect([await counted(baseEnv.DB, a), await counted(baseEnv.SITE_B_DB, b)]).toEqual([11, 11]);
    expect([await counted(baseEnv.DB, b), await counted(baseEnv.SITE_B_DB, a)]).toEqual([0, 0]);
    // Fired: the next pending count starts the next timer.
    await recorder.observe(logA, spoofed(a, at0 + 25_000), null, undefined, timer);
    expect(timer.started).toHaveLength(2);
    await timer.started[1]!();
    expect(await counted(baseEnv.DB, a)).toBe(12);
  });

  it("a timer that never fired (its invocation ended) is replaced once past due by 30 s; without one, the minute fallback writes", async () => {
    const log = new D1CrawlerLog(baseEnv.DB);
    const origin = freshOrigin("timer-lost");
    const recorder = new CrawlerRecorder();
    const timer = handTimer(20_000);
    await recorder.observe(log, spoofed(origin, at0), null, undefined, timer);
    await recorder.observe(log, spoofed(origin, at0 + 1000), null, undefined, timer);
    expect(timer.started).toHaveLength(1);
    // Still within due + 30 s: the timer there is counted on.
    await recorder.observe(log, spoofed(origin, at0 + 1000 + 20_000 + 29_000), null, undefined, timer);
    expect(timer.started).toHaveLength(1);
    expect(await counted(baseEnv.DB, origin)).toBe(1);
    // A minute after the oldest pending count, the next request writes them (the fallback), and a new timer starts for what it leaves.
    await recorder.observe(log, spoofed(origin, at0 + 1000 + COUNT_FLUSH_MS), null, undefined, timer);
    expect(await counted(baseEnv.DB, origin)).toBe(4);
    await recorder.observe(log, spoofed(origin, at0 + 2000 + COUNT_FLUSH_MS), null, undefined, timer);
    expect(timer.started).toHaveLength(2);
    // The first, fired late after all, writes what is pending; the second then finds nothing: no count is written twice.
    await timer.started[0]!();
    expect(await counted(baseEnv.DB, origin)).toBe(5);
    await timer.started[1]!();
    expect(await counted(baseEnv.DB, origin)).toBe(5);
  });
});
