/**
 * Issue 50 item 8 (defects 3 and 4 of its "Why"): the crawler log across tenants, through the
 * Worker's entry with real D1, KV and Cache API. Cloudflare's verified-bot flag verifies only as
 * "Search Engine Crawler"; a path that names no document is counted, never a row; the range matcher
 * and the counters are the isolate's, not each site's (30 tenants: at most one count statement and
 * one ranges load); each database's counts go through its own log, never into another's.
 */
import { applyD1Migrations, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { COUNT_FLUSH_MS } from "../../src/crawlers/recorder.ts";
import worker from "../../src/index.ts";
import type { RegisteredSite } from "../../src/registry/store.ts";
import { tokenHash } from "../../src/registry/token.ts";

afterEach(() => vi.restoreAllMocks());
// The tenants' own robots.txt (fetched from their origin, at the network boundary): none.
beforeEach(() => {
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("", { status: 404 }));
});
beforeAll(async () => {
  await applyD1Migrations(baseEnv.SITE_B_DB, baseEnv.TEST_MIGRATIONS);
});

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const SEARCH_ENGINE = { verifiedBotCategory: "Search Engine Crawler" };

/** What the log asked of the bindings: SQL touching crawler tables, and KV reads of the ranges. */
interface Seen {
  sql: string[];
  rangeReads: number;
}

/**
 * The deployment's env with each D1 database and SNAPSHOTS behind a recording proxy: new binding
 * objects, so a new isolate's crawler log and range store (they are kept per binding).
 */
function isolate(): { env: Env; seen: Seen } {
  const seen: Seen = { sql: [], rangeReads: 0 };
  const d1 = (db: D1Database): D1Database =>
    new Proxy(db, {
      get(t, name) {
        const v = Reflect.get(t, name, t) as unknown;
        if (name === "prepare") {
          return (sql: string) => {
            if (/crawler_/.test(sql)) seen.sql.push(sql);
            return t.prepare(sql);
          };
        }
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
  const kv = new Proxy(baseEnv.SNAPSHOTS, {
    get(t, name) {
      const v = Reflect.get(t, name, t) as unknown;
      if (name === "list" || name === "get") {
        return (key: unknown, ...rest: unknown[]) => {
          const text = typeof key === "string" ? key : ((key as { prefix?: string } | undefined)?.prefix ?? "");
          if (text.startsWith("crawler-ranges/")) seen.rangeReads++;
          return (v as (...a: unknown[]) => unknown).call(t, key, ...rest);
        };
      }
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
  return { env: { ...baseEnv, DB: d1(baseEnv.DB), SITE_B_DB: d1(baseEnv.SITE_B_DB), SNAPSHOTS: kv } as Env, seen };
}

let n = 0;
async function register(settings: Record<string, string> = {}): Promise<string> {
  const now = Date.now();
  const site: RegisteredSite = {
    origin: `https://crawl${++n}-${Math.random().toString(36).slice(2, 8)}.test`,
    settings,
    tokenHash: await tokenHash(`esk_${n}`),
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  expect(await new D1SiteRegistry(baseEnv.DB).create(site)).toBe(true);
  return site.origin;
}

async function fetchAs(e: Env, url: string, cf?: object): Promise<number> {
  const ctx = createExecutionContext();
  const request = new Request(url, { headers: { "User-Agent": GOOGLEBOT, "CF-Connecting-IP": "203.0.113.9" }, ...(cf ? { cf } : {}) });
  const res = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, e, ctx);
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return res.status;
}

const fetchRows = async (db: D1Database, origin: string): Promise<{ document: string; path: string }[]> =>
  (await db.prepare("SELECT document, path FROM crawler_fetches WHERE origin = ?1").bind(origin).all<{ document: string; path: string }>()).results;

const counted = async (db: D1Database, origin: string, verified: boolean): Promise<number> =>
  (await db
    .prepare("SELECT COALESCE(SUM(requests), 0) AS n FROM crawler_counts WHERE origin = ?1 AND verified = ?2 AND slot LIKE 'd%'")
    .bind(origin, verified ? 1 : 0)
    .first<number>("n")) ?? 0;

describe("Cloudflare's verified-bot flag", () => {
  it("verifies only as 'Search Engine Crawler': any other category is a claim, counted and never a row", async () => {
    const { env: e } = isolate();
    const origin = await register();
    for (const category of ["Monitoring & Analytics", "AI Crawler", "Page Preview", "Advertising & Marketing", ""]) {
      await fetchAs(e, `${origin}/robots.txt`, { verifiedBotCategory: category });
    }
    expect(await fetchRows(e.DB, origin)).toEqual([]);
    await fetchAs(e, `${origin}/robots.txt`, SEARCH_ENGINE);
    expect((await fetchRows(e.DB, origin)).map((r) => r.document)).toEqual(["robots.txt"]);
  });
});

describe("paths that name no document", () => {
  it("40 made-up /sitemap paths from a verified crawler are counted and add no row", async () => {
    const { env: e } = isolate();
    const origin = await register();
    for (let i = 0; i < 40; i++) await fetchAs(e, `${origin}/sitemap-made-up-${i}.xml.bak`, SEARCH_ENGINE);
    await fetchAs(e, `${origin}/robots.txt`, SEARCH_ENGINE);
    expect((await fetchRows(e.DB, origin)).map((r) => r.document)).toEqual(["robots.txt"]);
    // Counted: the first at once (a database new to this isolate), the rest with the first request a minute after.
    const later = Date.now() + COUNT_FLUSH_MS + 1_000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    await fetchAs(e, `${origin}/sitemap-made-up-last.xml`, SEARCH_ENGINE);
    expect(await counted(e.DB, origin, true)).toBe(42); // 40 made up, robots.txt, and the last
  });
});

describe("30 tenants claimed by a spoofed Googlebot", () => {
  it("one ranges load and at most one count statement for the isolate, not one per site", async () => {
    const { env: e, seen } = isolate();
    const origins: string[] = [];
    for (let i = 0; i < 30; i++) origins.push(await register());
    for (const origin of origins) await fetchAs(e, `${origin}/robots.txt`);
    expect(seen.sql.filter((s) => /INSERT[\s\S]*crawler_/.test(s)).length).toBeLessThanOrEqual(1);
    expect(seen.rangeReads).toBeLessThanOrEqual(1 + 10); // one list, and a read per stored list (≤ 10 crawlers)
    // A minute on, the next request flushes every site's pending count in one statement.
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + COUNT_FLUSH_MS + 1_000);
    await fetchAs(e, `${origins[0]}/robots.txt`);
    expect(seen.sql.filter((s) => /INSERT[\s\S]*crawler_/.test(s)).length).toBeLessThanOrEqual(2);
    for (const origin of origins) expect(await counted(e.DB, origin, false), origin).toBeGreaterThanOrEqual(1);
  });
});

describe("counts of sites in different databases", () => {
  it("each database's counts go through its own log: never A's counts into B's database", async () => {
    const { env: e } = isolate();
    const a = await register();
    const b = await register({ DATABASE: "SITE_B_DB" });
    await fetchAs(e, `${b}/robots.txt`);
    for (let i = 0; i < 6; i++) await fetchAs(e, `${a}/robots.txt`);
    // A minute on, a request to B flushes what is due: A's counts through DB's log, B's through SITE_B_DB's.
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + COUNT_FLUSH_MS + 1_000);
    await fetchAs(e, `${b}/robots.txt`);
    expect(await counted(baseEnv.SITE_B_DB, a, false)).toBe(0);
    expect(await counted(baseEnv.DB, b, false)).toBe(0);
    expect(await counted(baseEnv.DB, a, false)).toBe(6);
    expect(await counted(baseEnv.SITE_B_DB, b, false)).toBeGreaterThanOrEqual(1);
  });
});
