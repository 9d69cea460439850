/**
 * The purge of a deleted registered site (src/jobs/site-purge.ts, src/adapters/d1/site-purge.ts):
 * run through the real consumer until done, it leaves nothing of the site in any table keyed by
 * origin, in its mirrors and syncs, or under its snapshot keys in KV, removes its registry row, and
 * touches nothing of another site; each step stays within its bounds.
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { loadConfig } from "../../src/config.ts";
import { JOB_LEASE_MS } from "../../src/jobs/budget.ts";
import { REGISTRY_TARGET } from "../../src/jobs/messages.ts";
import { type Counts, countingEnv } from "./support/counting-env.ts";
import { deliver, drain, withJobs } from "./support/jobs.ts";

const env = baseEnv as Env;
const GONE = "https://gone.purge.example";
const KEPT = "https://kept.purge.example";
const CMS_SITEMAP = "https://cms.purge.example/sitemap.xml";
const RECORDS = 12_000;
/** More heads than one step deletes (its share of KV operations): the purge takes several steps. */
const HEADS = 450;
const PARTS_ID = "0123456789abcdef0123456789abcdef";

/** Every table with an `origin` column (the purge must leave none of the site's rows in any). */
async function tablesWithOrigin(): Promise<string[]> {
  // Each table's CREATE statement as SQLite keeps it (columns added later included); pragma functions are not allowed in D1.
  const { results } = await env.DB.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{ name: string; sql: string }>();
  return results.filter((r) => /(^|[(,])\s*origin\s+TEXT/im.test(r.sql)).map((r) => r.name);
}

async function rowsOf(origin: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of await tablesWithOrigin()) {
    out[table] = (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE origin = ?1`).bind(origin).first<number>("n")) ?? 0;
  }
  return out;
}

async function kvKeys(prefix: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.SNAPSHOTS.list({ prefix, ...(cursor ? { cursor } : {}) });
    names.push(...page.keys.map((k) => k.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return names;
}

/** One row of the site in every table keyed by origin (besides what its records and regeneration write). */
async function seed(origin: string, now: number): Promise<void> {
  const db = env.DB;
  const run = (sql: string, ...params: unknown[]) => db.prepare(sql).bind(origin, now, ...params);
  await db.batch([
    run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
       INSERT INTO urls (origin, section, loc, size, updated_at) SELECT ?1, 'pages', ?1 || '/p/' || i, 120, ?2 FROM n`,
      origin === GONE ? RECORDS : 50,
    ),
    run("INSERT INTO url_moves (origin, section, id, updated_at) VALUES (?1, 'old', 1, ?2)"),
    run("INSERT INTO notify_targets (target, origin, acked_stamp, acked_id) VALUES ('indexnow', ?1, ?2, 0)"),
    run("INSERT INTO notify_leases (origin, lease_id, lease_until) VALUES (?1, 'x', ?2)"),
    run("INSERT INTO gsc_sitemaps (origin, path, last_submitted) VALUES (?1, '/sitemap.xml', ?2)"),
    run("INSERT INTO gsc_reads (origin, read_at) VALUES (?1, ?2)"),
    run("INSERT INTO admin_sessions (id_hash, origin, identity, created_at, expires_at) VALUES (?1 || '#s', ?1, 'me', ?2, ?2)"),
    run("INSERT INTO admin_audit (origin, at, who, method, resource, status) VALUES (?1, ?2, 'me', 'PUT', 'urls', 200)"),
    run("INSERT INTO admin_refusals (origin, minute, reason, who, count) VALUES (?1, ?2, 'token', 'x', 1)"),
    run("INSERT INTO admin_cooldowns (origin, action, ends_at) VALUES (?1, 'regenerate', ?2)"),
    run("INSERT INTO partition_layouts (origin, settled, target, updated_at) VALUES (?1, 1, 1, ?2)"),
    run("INSERT INTO partition_databases (origin, position, database_id, binding, recorded_at) VALUES (?1, 0, 'id', 'DB', ?2)"),
    run("INSERT INTO housekeeping_sites (origin, seen, updated_at) VALUES (?1, '{}', ?2)"),
    run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
       INSERT INTO crawler_fetches (origin, crawler, document, minute, ok, at, path, status) SELECT ?1, 'googlebot', 'index', i * 60000, 1, ?2, '/sitemap.xml', 200 FROM n`,
    ),
    run("INSERT INTO crawler_log_sites (origin, started_at) VALUES (?1, ?2)"),
    run("INSERT INTO crawler_counts (origin, crawler, verified, slot, period, requests) VALUES (?1, 'googlebot', 1, 'h1', ?2, 3)"),
    run("INSERT INTO jobs (kind, origin, due_at) VALUES ('gsc-status', ?1, ?2)"),
    run("INSERT INTO regen_runs (origin, started_at, ok, summary) VALUES (?1, ?2, 1, '{}')"),
    run("INSERT INTO manifests (origin, version, built_at) VALUES (?1, 'v', ?2)"),
    run(
      "INSERT INTO shards (origin, section, n, first_key, last_key, url_count, byte_count, last_change, version) VALUES (?1, 'pages', 0, 1, 2, 2, 2, ?2, 'v')",
    ),
    run("INSERT INTO regen_state (origin, state, updated_at) VALUES (?1, '{}', ?2)"),
    run("INSERT INTO snapshot_gc (key, origin, since) VALUES ('s1/' || ?1 || '/_index/old', ?1, ?2)"),
    run(
      "INSERT INTO syncs (id, scope, state, max_delete, started_at, expires_at) VALUES (?1 || '#sync', json_object('sites', json_array(?1), 'section', NULL, 'source', NULL), 'open', 1, ?2, ?2)",
    ),
    run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
       INSERT INTO sync_seen (sync, id) SELECT ?1 || '#sync', i + 0 * ?2 FROM n`,
    ),
  ]);
  // Its snapshots: heads (one in parts), the index the gc still holds, and, for the site going, parts no head took.
  const heads = origin === GONE ? HEADS : 5;
  for (let i = 0; i < heads; i++) await env.SNAPSHOTS.put(`s1/${origin}/pages/${i}/v${i}`, "gz");
  const partsId = origin === GONE ? PARTS_ID : PARTS_ID.replace("0123", "4567");
  await env.SNAPSHOTS.put(`s1/${origin}/pages/big/v+${partsId}`, "", { metadata: { parts: 2 } });
  for (const i of [0, 1]) await env.SNAPSHOTS.put(`s1/_parts/${partsId}/${i}`, "gz");
  await env.SNAPSHOTS.put(`s1/${origin}/_index/old`, "gz");
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the purge of a deleted registered site", () => {
  it("removes its records, state, mirrors, syncs, snapshots and registry row in bounded steps, and nothing of another site", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const now = Date.now();
    const registry = new D1SiteRegistry(env.DB);
    for (const [origin, settings] of [
      [GONE, { MIRROR_SITEMAPS: CMS_SITEMAP }],
      [KEPT, {}],
    ] as const) {
      expect(await registry.create({ origin, settings, tokenHash: origin, createdAt: now, updatedAt: now, deletedAt: null })).toBe(true);
      await seed(origin, now);
    }
    // The site's mirror (its state and children, kept under it: migration 0031) and its mirror job (`<site> <url>`);
    // KEPT's mirror of the same URL, its own rows and job, which the purge of GONE leaves.
    await env.DB.batch([
      env.DB.prepare("INSERT INTO mirrors (owner, url, site) VALUES (?2, ?1, ?2), (?3, ?1, ?3)").bind(CMS_SITEMAP, GONE, KEPT),
      env.DB.prepare(
        "INSERT INTO mirror_children (owner, url, n, child) VALUES (?2, ?1, 0, ?1 || '?page=1'), (?2, ?1, 1, ?1 || '?page=2'), (?3, ?1, 0, ?1 || '?page=1')",
      ).bind(CMS_SITEMAP, GONE, KEPT),
      env.DB.prepare("INSERT INTO jobs (kind, origin) VALUES ('mirror', ?1 || ' ' || ?2), ('mirror', ?3 || ' ' || ?2)").bind(GONE, CMS_SITEMAP, KEPT),
    ]);
    // Orphan parts (staged, no head took them), registered for the garbage collection.
    await env.SNAPSHOTS.put(`s1/_parts/${"f".repeat(32)}/0`, "gz");
    await env.DB.prepare("INSERT INTO snapshot_gc (key, origin, since) VALUES (?1, ?2, ?3)")
      .bind(`s1/_parts/${"f".repeat(32)}/`, GONE, now)
      .run();

    const before = await rowsOf(GONE);
    expect(before["urls"]).toBe(RECORDS);
    // Every table keyed by origin holds a row of the site going (the registry's own included): the check below covers them all.
    expect(Object.entries(before).filter(([, n]) => n === 0)).toEqual([]);
    const kept = await rowsOf(KEPT);
    const keptKeys = await kvKeys(`s1/${KEPT}/`);

    // Deleted an hour ago: no isolate serves it any more, no step begun before can still run.
    expect(await registry.markDeleted(GONE, now - 3_600_000)).toBe(true);
    const { env: e, queue } = withJobs(env);
    const perInvocation: Counts[] = [];
    let failOnce = false;
    const wrap = (inner: Env): Env => {
      const counts = { d1: 0, kv: 0 };
      perInvocation.push(counts);
      // One step fails half-way (after its state's deletes, before its snapshots): its retry does no harm.
      const fail = failOnce ? /SELECT 1 FROM mirrors/ : null;
      failOnce = false;
      return countingEnv(inner, counts, fail);
    };
    // A message without a chain is a request: it starts the purge's chain.
    const first = await deliver(wrap(e), { kind: "site-purge", origin: REGISTRY_TARGET, trigger: "test", step: 0 });
    expect(first.retryMessages).toEqual([]);
    failOnce = true;
    const deliveries = await drain(e, queue, { perInvocation: wrap });
    // Several steps: the heads take more than one step's share of KV operations; the one that failed was retried.
    expect(deliveries.map((d) => [d.job.kind, d.result])).toEqual([
      ["site-purge", "retried"],
      ["site-purge", "acked"],
    ]);
    for (const counts of perInvocation) {
      // A step: ≤ 20 record deletes, ~25 state statements, a few snapshot pages, the registry; KV within its share and one document's parts.
      expect(counts.d1).toBeLessThan(100);
      expect(counts.kv).toBeLessThan(500);
    }

    const after = await rowsOf(GONE);
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    expect(await registry.get(GONE)).toBeNull();
    const owners = async (table: string) =>
      (await env.DB.prepare(`SELECT DISTINCT owner FROM ${table} WHERE url = ?1 ORDER BY owner`).bind(CMS_SITEMAP).all<{ owner: string }>()).results.map(
        (r) => r.owner,
      );
    expect(await owners("mirrors")).toEqual([KEPT]);
    expect(await owners("mirror_children")).toEqual([KEPT]);
    const jobs = await env.DB.prepare("SELECT origin FROM jobs WHERE kind = 'mirror' AND origin LIKE '% ' || ?1")
      .bind(CMS_SITEMAP)
      .all<{ origin: string }>();
    expect(jobs.results.map((r) => r.origin)).toEqual([`${KEPT} ${CMS_SITEMAP}`]);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM syncs WHERE id = ?1").bind(`${GONE}#sync`).first("n")).toBe(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM sync_seen WHERE sync = ?1").bind(`${GONE}#sync`).first("n")).toBe(0);
    expect(await kvKeys(`s1/${GONE}/`)).toEqual([]);
    expect(await kvKeys(`s1/_parts/${PARTS_ID}/`)).toEqual([]);
    expect(await kvKeys(`s1/_parts/${"f".repeat(32)}/`)).toEqual([]);

    // The other site: every row, its syncs and every snapshot key as they were.
    expect(await rowsOf(KEPT)).toEqual(kept);
    expect(await kvKeys(`s1/${KEPT}/`)).toEqual(keptKeys);
    expect(await kvKeys(`s1/_parts/${PARTS_ID.replace("0123", "4567")}/`)).toHaveLength(2);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM sync_seen WHERE sync = ?1").bind(`${KEPT}#sync`).first("n")).toBe(40);
    expect((await registry.get(KEPT))?.deletedAt).toBeNull();

    // Once done, the chain ends; asked again, it finds nothing to purge.
    const again = await deliver(e, { kind: "site-purge", origin: REGISTRY_TARGET, trigger: "test", step: 0 });
    expect(again.retryMessages).toEqual([]);
    expect(queue.pending).toEqual([]);
  });

  it("waits until the deleted site has settled before deleting anything", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const now = Date.now();
    const origin = "https://recent.purge.example";
    const registry = new D1SiteRegistry(env.DB);
    await registry.create({ origin, settings: {}, tokenHash: origin, createdAt: now, updatedAt: now, deletedAt: null });
    await env.DB.prepare("INSERT INTO urls (origin, section, loc, size, updated_at) VALUES (?1, 'pages', ?1 || '/a', 100, ?2)").bind(origin, now).run();
    await registry.markDeleted(origin, now);
    const { env: e, queue } = withJobs(env);
    await deliver(e, { kind: "site-purge", origin: REGISTRY_TARGET, trigger: "test", step: 0 });
    // Its continuation waits twice MANIFEST_CACHE_TTL (an idle isolate's list of sites answers until then) and a step's lease; nothing is deleted yet.
    expect(queue.pending).toHaveLength(1);
    expect(queue.pending[0]!.delaySeconds).toBeGreaterThanOrEqual(2 * loadConfig(env).cache.manifestTtl + JOB_LEASE_MS / 1000 - 1);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1").bind(origin).first("n")).toBe(1);
    expect((await registry.get(origin))?.deletedAt).toBe(now);
  });
});
