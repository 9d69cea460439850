/**
 * The limits sweep for the job kinds run at a deployment's extremes (issue 51): a purge of a site of
 * 100,000 records and 5,000 shards (900 snapshots: a step's KV share bounds it, more snapshots only
 * add steps, each KV delete costing this machine seconds per hundred); the sync sweep over thousands of expired and
 * finished syncs in two databases; a Search Console read whose lists are at their byte caps; the
 * crawlers' ranges at the most lists, each at its byte cap. Each runs through the Worker's entry
 * (the real consumer) under the enforcing meter, every invocation asserted inside the limits; the
 * largest is logged for docs/capacity.md's per-path table. `SWEPT` names where every kind the code
 * declares (JOB_KINDS) is swept: a new kind fails here until it is.
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { JOB_KINDS, type JobKind, REGISTRY_TARGET } from "../../src/jobs/messages.ts";
import { serviceAccountKey } from "./notify-support.ts";
import { deliver, drain, runCron, withJobs } from "./support/jobs.ts";
import { quiet, report, watchMeters } from "./support/meters.ts";
import { freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const env = baseEnv as Env;

/** Where each job kind runs at its extremes under the enforcing meter (docs/capacity.md has its row). */
const SWEPT: Record<JobKind, string> = {
  mirror: "test/workers/mirror-scale.test.ts (a 50,000-sitemap index; the chain at 50,000 measured once)",
  regenerate: "test/workers/limits-sweep.test.ts (5,000 shards)",
  notify: "test/workers/limits-sweep-scale.test.ts (a 100,000-URL IndexNow backlog)",
  "registry-sweep": "test/workers/limits-sweep-scale.test.ts (20,000 registered sites)",
  rebalance: "npm run bench -- --only partitions (a 10M move, every step under the enforcing meter)",
  "gsc-status": "here",
  "sync-sweep": "here",
  "crawler-ranges": "here",
  "site-purge": "here",
};

it("every job kind the code declares is swept somewhere", () => {
  expect(Object.keys(SWEPT).sort()).toEqual([...JOB_KINDS].sort());
});

/** Runs `fn` in chunks of `n` at a time (setup writes, each its own KV put). */
async function inChunks(count: number, n: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += n) await Promise.all(Array.from({ length: Math.min(n, count - i) }, (_, j) => fn(i + j)));
}

describe("site-purge", () => {
  it("a site of 100,000 records, 5,000 shards and 900 snapshots is purged across steps, each inside the limits", async () => {
    quiet();
    const origin = freshOrigin("sweep-purge");
    const now = Date.now();
    const registry = new D1SiteRegistry(env.DB);
    expect(await registry.create({ origin, settings: {}, tokenHash: origin, createdAt: now, updatedAt: now, deletedAt: null })).toBe(true);
    const many = (n: number, sql: string) =>
      env.DB.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n}) ${sql}`).bind(origin, now);
    await env.DB.batch([
      many(100_000, "INSERT INTO urls (origin, section, loc, size, updated_at) SELECT ?1, 'pages', ?1 || '/p/' || i, 120, ?2 FROM n"),
      many(
        5_000,
        "INSERT INTO shards (origin, section, n, first_key, last_key, url_count, byte_count, last_change, version) SELECT ?1, 'pages', i, i * 20, i * 20 + 19, 20, 2400, ?2, 'v' FROM n",
      ),
      many(300, "INSERT INTO snapshot_gc (key, origin, since) SELECT 's1/' || ?1 || '/pages/' || i || '/old', ?1, ?2 FROM n"),
    ]);
    await inChunks(600, 200, (i) => env.SNAPSHOTS.put(`s1/${origin}/pages/${i + 1}/v${i + 1}`, "gz"));
    await inChunks(300, 200, (i) => env.SNAPSHOTS.put(`s1/${origin}/pages/${i + 1}/old`, "gz"));
    // Deleted an hour ago: settled, so every step deletes.
    expect(await registry.markDeleted(origin, now - 3_600_000)).toBe(true);
    const watch = watchMeters();
    const { env: e, queue } = withJobs(env);
    expect((await deliver(e, { kind: "site-purge", origin: REGISTRY_TARGET, trigger: "test", step: 0 })).retryMessages).toEqual([]);
    const started = Date.now();
    const deliveries = await drain(e, queue, { maxInvocations: 100 });
    expect(deliveries.filter((d) => d.result !== "acked")).toEqual([]);
    const left = (table: string) => env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE origin = ?1`).bind(origin).first<number>("n");
    expect([await left("urls"), await left("shards"), await left("snapshot_gc")]).toEqual([0, 0, 0]);
    expect((await env.SNAPSHOTS.list({ prefix: `s1/${origin}/` })).keys).toEqual([]);
    expect(await registry.get(origin)).toBeNull();
    expect(watch.refused).toEqual([]);
    expect(watch.largest()).toBeLessThanOrEqual(1_000);
    report(
      `site-purge of 100,000 records, 5,000 shards, 900 snapshots: ${deliveries.length + 1} steps, largest invocation ${watch.largest()} service calls, ${Date.now() - started} ms`,
    );
  }, 120_000);
});

describe("sync-sweep", () => {
  it("thousands of expired and finished syncs in two databases are swept across steps, each inside the limits", async () => {
    quiet();
    const prefix = `sweep-${Math.random().toString(36).slice(2, 8)}`;
    const now = Date.now();
    const databases = [
      ["DB", env.DB],
      ["SITE_B_DB", baseEnv.SITE_B_DB],
    ] as const;
    for (const [, db] of databases) {
      const syncs = (n: number, state: string, expires: number, finished: number | null, tag: string) =>
        db
          .prepare(
            `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})
             INSERT INTO syncs (id, scope, state, max_delete, started_at, expires_at, finished_at)
             SELECT ?1 || '-${tag}-' || i, json_object('sites', json_array('https://' || ?1 || '.test'), 'section', NULL, 'source', NULL), ?2, 1, ?3, ?4, ?5 FROM n`,
          )
          .bind(prefix, state, now - 9 * 86_400_000, expires, finished);
      await db.batch([
        // 2,000 open syncs abandoned an hour ago, 50 records seen each (100,000 rows); 3,000 committed 8 days ago.
        syncs(2_000, "open", now - 3_600_000, null, "open"),
        db
          .prepare(
            `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
             INSERT INTO sync_seen (sync, id) SELECT ?1 || '-open-' || (i / 50 + 1), i FROM n`,
          )
          .bind(prefix),
        syncs(3_000, "committed", now - 8 * 86_400_000, now - 8 * 86_400_000, "done"),
      ]);
    }
    const watch = watchMeters();
    const { env: e, queue } = withJobs(env);
    for (const [database] of databases) {
      const first = await deliver(e, { kind: "sync-sweep", origin: REGISTRY_TARGET, database, trigger: "test", step: 0 });
      expect(first.retryMessages).toEqual([]);
    }
    const deliveries = await drain(e, queue, { maxInvocations: 200 });
    expect(deliveries.filter((d) => d.result !== "acked")).toEqual([]);
    for (const [, db] of databases) {
      const count = (sql: string) => db.prepare(sql).bind(`${prefix}-%`).first<number>("n");
      expect(await count("SELECT COUNT(*) AS n FROM syncs WHERE id LIKE ?1 AND state = 'open'")).toBe(0);
      expect(await count("SELECT COUNT(*) AS n FROM syncs WHERE id LIKE ?1 AND state = 'committed'")).toBe(0);
      expect(await count("SELECT COUNT(*) AS n FROM sync_seen WHERE sync LIKE ?1")).toBe(0);
    }
    expect(watch.refused).toEqual([]);
    expect(watch.largest()).toBeLessThanOrEqual(1_000);
    report(
      `sync-sweep of 5,000 syncs and 100,000 seen rows in each of 2 databases: ${deliveries.length + 2} steps, largest invocation ${watch.largest()} service calls`,
    );
  }, 120_000);
});

describe("gsc-status", () => {
  const TOKEN_URL = "https://oauth.test/token";
  const API = "https://gsc.test";

  it("Search Console's lists at their byte caps (the top list ~1 MB, the index's ~4 MB): one step inside the limits, 2,000 sitemaps kept", async () => {
    quiet();
    const { pem } = await serviceAccountKey();
    const origin = freshOrigin("sweep-gsc");
    const account = JSON.stringify({ type: "service_account", client_email: "sitemaps@p.iam.gserviceaccount.com", private_key: pem });
    const e = { ...env, SITES: origin, GSC_SERVICE_ACCOUNT: account, GSC_TOKEN_URL: TOKEN_URL, GSC_API_BASE: API } as Env;
    const entry = (path: string, index = false) => ({
      path,
      lastSubmitted: "2026-11-27T10:00:00.000Z",
      isPending: false,
      isSitemapsIndex: index,
      lastDownloaded: "2026-11-28T09:30:00.000Z",
      warnings: "0",
      errors: "0",
      contents: [{ type: "web", submitted: "50000", indexed: "0" }],
    });
    /** A list of sitemaps as large as fits in `cap` bytes (less 1%). */
    const list = (cap: number, first: object[], path: (i: number) => string): string => {
      const sitemaps = [...first];
      let size = JSON.stringify(sitemaps).length + 20;
      for (let i = 0; ; i++) {
        const next = entry(path(i));
        size += JSON.stringify(next).length + 1;
        if (size > cap * 0.99) return JSON.stringify({ sitemap: sitemaps });
        sitemaps.push(next);
      }
    };
    const top = list(1024 * 1024, [entry(`${origin}/sitemap.xml`, true)], (i) => `${origin}/other-${i}.xml`);
    const under = list(4 * 1024 * 1024, [], (i) => `${origin}/sitemap-pages-${i}.xml`);
    const asked: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new Request(input, init).url;
      asked.push(url);
      if (url === TOKEN_URL) return Response.json({ access_token: "ya29.sweep", expires_in: 3599 });
      if (url.startsWith(API))
        return new Response(new URL(url).searchParams.has("sitemapIndex") ? under : top, { headers: { "Content-Type": "application/json" } });
      return new Response("not found", { status: 404 });
    });
    const watch = watchMeters();
    const deliveries = await runCron(e);
    const gsc = deliveries.filter((d) => d.job.kind === "gsc-status");
    expect(gsc.map((d) => d.result)).toEqual(["acked"]);
    expect(asked.filter((u) => u.startsWith(API))).toHaveLength(2);
    const kept = await env.DB.prepare("SELECT COUNT(*) AS n FROM gsc_sitemaps WHERE origin = ?1").bind(origin).first<number>("n");
    expect(kept).toBe(2_000);
    expect(watch.refused).toEqual([]);
    expect(watch.largest()).toBeLessThanOrEqual(1_000);
    const count = (text: string) => (JSON.parse(text) as { sitemap: unknown[] }).sitemap.length;
    report(
      `gsc-status, lists of ${(top.length / 1e6).toFixed(2)} MB (${count(top)} sitemaps) and ${(under.length / 1e6).toFixed(2)} MB (${count(under)}): largest invocation ${watch.largest()} service calls`,
    );
  }, 60_000);
});

describe("crawler-ranges", () => {
  it("the most lists (10), each at its 1 MB cap of narrow prefixes: one step inside the limits, every list kept", async () => {
    quiet();
    const origin = freshOrigin("sweep-ranges");
    const tag = Math.random().toString(36).slice(2, 6);
    const names = Array.from({ length: 10 }, (_, i) => `sweep-${tag}-${i}`);
    const urlOf = (name: string) => `https://ranges.test/${name}.json`;
    /** ~1 MB of /27s, each list its own addresses (plausible: the whole far under 4 × /8). */
    const body = (n: number): string => {
      const prefixes: object[] = [];
      for (let i = 0, size = 0; size < 1_000_000 - 200; i++) {
        const p = { ipv4Prefix: `${20 + n}.${(i >> 11) & 255}.${(i >> 3) & 255}.${(i & 7) * 32}/27` };
        size += JSON.stringify(p).length + 1;
        prefixes.push(p);
      }
      return JSON.stringify({ creationTime: "2026-11-28T00:00:00", prefixes });
    };
    const bodies = new Map(names.map((name, n) => [urlOf(name), body(n)]));
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const text = bodies.get(new Request(input, init).url);
      return text === undefined ? new Response("not found", { status: 404 }) : new Response(text, { headers: { "Content-Type": "application/json" } });
    });
    const e = { ...env, SITES: origin, CRAWLER_IP_RANGES: names.map((n) => `${n}=${urlOf(n)}`).join(" ") } as Env;
    const watch = watchMeters();
    const deliveries = await runCron(e);
    const ranges = deliveries.filter((d) => d.job.kind === "crawler-ranges");
    expect(ranges.map((d) => d.result)).toEqual(["acked"]);
    const row = await env.DB.prepare("SELECT outcome FROM jobs WHERE kind = 'crawler-ranges' AND origin = ?1").bind(origin).first<string>("outcome");
    for (const name of names) expect(row).toMatch(new RegExp(`${name} \\d+ prefixes`));
    expect(watch.refused).toEqual([]);
    expect(watch.largest()).toBeLessThanOrEqual(1_000);
    report(`crawler-ranges, 10 lists of ~1 MB (${/\d+ prefixes/.exec(row ?? "")?.[0]} each): largest invocation ${watch.largest()} service calls`);
  }, 60_000);
});
