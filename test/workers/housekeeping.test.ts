/**
 * Housekeeping (src/housekeeping/, the sync-sweep job) in workerd with real D1: what only grew is
 * trimmed — section moves the regeneration has read, tombstones every notifier and the regeneration
 * have passed, rows of jobs whose site or mirror is gone, finished syncs and what they saw — in runs
 * whose D1 statements are counted at the binding, and nothing live is lost: every crawl after it has
 * each live loc once.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { housekeep } from "../../src/housekeeping/housekeeping.ts";
import { type HousekeepingOptions, type HousekeepingReport, describeHousekeeping } from "../../src/housekeeping/run.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { regenDeps } from "../../src/regen/scheduled.ts";
import type { RunSummary } from "../../src/regen/summary.ts";
import { databaseServices, services, servicesFor } from "../../src/services.ts";
import { FakeEngine, run as notify } from "./notify-support.ts";
import { type Counts, countingEnv } from "./support/counting-env.ts";
import { deliver, withJobs } from "./support/jobs.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { document, freshOrigin, locsOf, validRecords } from "./support.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const NOW = Date.now();
const INDEXNOW = { INDEXNOW_KEY: "test-key-0123456789abcdef", INDEXNOW_ENDPOINT: "https://indexnow.test/indexnow" };

beforeAll(async () => {
  await applyD1Migrations(baseEnv.PART_B, baseEnv.TEST_MIGRATIONS);
});

interface Site {
  origin: string;
  env: Env;
}

function newSite(label: string, vars: Record<string, string> = {}): Site {
  const origin = freshOrigin(label);
  return { origin, env: { ...baseEnv, URL_SOURCE: "d1", SITES: origin, PING_URLS: "", ...vars } as Env };
}

const pages = (site: Site, from: number, n: number, section?: string) =>
  Array.from({ length: n }, (_, i) => ({ loc: `${site.origin}/page/${from + i}`, ...(section ? { section } : {}) }));

async function write(site: Site, inputs: unknown[], at: number): Promise<void> {
  await servicesFor(site.env, site.origin).store.writer.upsert(validRecords(site.env, inputs), at);
}

async function remove(site: Site, locs: string[], at: number): Promise<void> {
  await servicesFor(site.env, site.origin).store.writer.delete(locs, at);
}

async function regenerate(site: Site): Promise<RunSummary> {
  return regenerateSite(regenDeps(services(site.env))!, site.origin, { trigger: "test" });
}

/** What the sync-sweep job keeps of the jobs table: rows whose site, or mirror URL, is configured. */
function keepJobOf(env: Env): HousekeepingOptions["keepJob"] {
  const config = loadConfig(env);
  return (kind, origin) => (kind === "mirror" ? config.mirror.urls.includes(origin) : config.sites.has(origin));
}

/** Every D1 binding of `names` counted into `counts`. */
function counted(env: Env, counts: Counts, names: readonly ("DB" | "PART_B")[] = ["DB"]): Env {
  const out = { ...env } as unknown as Record<string, unknown>;
  for (const name of names) out[name] = countingEnv({ ...env, DB: out[name] } as Env, counts).DB;
  return out as unknown as Env;
}

/** One housekeeping run of the site's database(s), its D1 statements counted at the bindings. */
async function sweep(
  site: Site,
  options: Partial<HousekeepingOptions> = {},
  names: readonly ("DB" | "PART_B")[] = ["DB"],
): Promise<{ report: HousekeepingReport; queries: number }> {
  const counts: Counts = { d1: 0, kv: 0 };
  const s = servicesFor(counted(site.env, counts, names), site.origin);
  const report = await housekeep(s.partitions ?? [s], { keepJob: keepJobOf(site.env), ...options });
  // The report's count is an upper bound (a notifier's watermark counts two): the binding saw no more.
  expect(counts.d1).toBeLessThanOrEqual(report.statements);
  expect(report.statements).toBeLessThanOrEqual(options.maxStatements ?? 50);
  return { report, queries: counts.d1 };
}

const countOf = async (db: D1Database, sql: string, ...args: unknown[]): Promise<number> =>
  (await db
    .prepare(sql)
    .bind(...args)
    .first<{ n: number }>())!.n;
const tombstones = (site: Site, db = site.env.DB) => countOf(db, "SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND deleted = 1", site.origin);
const liveLocs = async (site: Site, db = site.env.DB) =>
  (await db.prepare("SELECT loc FROM urls WHERE origin = ?1 AND deleted = 0").bind(site.origin).all<{ loc: string }>()).results.map((r) => r.loc);
const moves = (site: Site) => countOf(site.env.DB, "SELECT COUNT(*) AS n FROM url_moves WHERE origin = ?1", site.origin);

/** Every loc of the index's shards, in order. */
async function crawl(site: Site): Promise<string[]> {
  const links = locsOf(await document(site.env, `${site.origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));
  const locs: string[] = [];
  for (const url of links) locs.push(...locsOf(await document(site.env, url)));
  return locs;
}

/** The index and every shard it lists: each live loc exactly once. */
async function expectCrawl(site: Site, live: readonly string[]): Promise<void> {
  const locs = await crawl(site);
  expect(locs.length).toBe(live.length);
  expect(new Set(locs)).toEqual(new Set(live));
}

/** A run of the housekeeping `minutes` from now (the regeneration cursor it saw before is then old enough to purge below). */
const later = (minutes: number): Partial<HousekeepingOptions> => ({ now: Date.now() + minutes * MINUTE });

describe("section moves (url_moves)", () => {
  it("are deleted once the regeneration has read them, and only then", async () => {
    const site = newSite("hk-moves");
    await write(site, pages(site, 0, 10, "a"), NOW - 60 * MINUTE);
    await regenerate(site);
    await write(site, pages(site, 0, 3, "b"), NOW - 50 * MINUTE);
    await regenerate(site);
    // Moved after the regeneration's run: its next run still has to read these.
    await write(site, pages(site, 3, 2, "c"), NOW - 40 * MINUTE);
    expect(await moves(site)).toBe(5);

    const first = await sweep(site);
    expect(first.report).toMatchObject({ moves: 3, tombstones: 0, moreLeft: false });
    expect(await moves(site)).toBe(2);

    await regenerate(site);
    expect((await sweep(site)).report).toMatchObject({ moves: 2, moreLeft: false });
    expect(await moves(site)).toBe(0);
    // Nothing live went with them, and the sitemaps list every record in its new section.
    const live = await liveLocs(site);
    expect(live).toHaveLength(10);
    await expectCrawl(site, live);
    const sections = await site.env.DB.prepare("SELECT section, COUNT(*) AS n FROM urls WHERE origin = ?1 GROUP BY section ORDER BY section")
      .bind(site.origin)
      .all<{ section: string; n: number }>();
    expect(sections.results).toEqual([
      { section: "a", n: 5 },
      { section: "b", n: 3 },
      { section: "c", n: 2 },
    ]);
  });
});

describe("tombstones", () => {
  it("are purged only once every notifier and the regeneration have passed them", async () => {
    const site = newSite("hk-tomb", INDEXNOW);
    const engine = new FakeEngine(() => new Response(null, { status: 200 }));
    await write(site, pages(site, 0, 10), NOW - 60 * MINUTE);
    expect((await notify(site.env, engine, NOW - 58 * MINUTE)).targets[0]!.result).toBe("baseline");
    const gone = pages(site, 0, 3).map((p) => p.loc);
    await remove(site, gone, NOW - 50 * MINUTE);
    await write(site, pages(site, 10, 1), NOW - 45 * MINUTE);
    await regenerate(site);

    // The housekeeping sees the regeneration's cursor past them: it purges below it only once no
    // location can hold a manifest from before it (MANIFEST_CACHE_TTL and a minute later).
    expect((await sweep(site)).report).toMatchObject({ tombstones: 0, held: 1, moreLeft: false });
    // Then IndexNow has not announced them yet.
    expect((await sweep(site, later(3))).report).toMatchObject({ tombstones: 0, held: 1, moreLeft: false });
    expect(await tombstones(site)).toBe(3);

    expect((await notify(site.env, engine, NOW - 40 * MINUTE)).targets[0]).toMatchObject({ result: "sent", acknowledged: 4 });
    const announced = engine.calls.flatMap((c) => JSON.parse(c.body).urlList as string[]);
    for (const loc of gone) expect(announced).toContain(loc);
    expect((await sweep(site, later(3))).report).toMatchObject({ tombstones: 3, held: 0 });
    expect(await tombstones(site)).toBe(0);

    // Announced, but the regeneration has not read them: kept until it has, and that was seen long enough ago.
    await remove(
      site,
      pages(site, 3, 2).map((p) => p.loc),
      NOW - 30 * MINUTE,
    );
    await write(site, pages(site, 11, 1), NOW - 25 * MINUTE);
    expect((await notify(site.env, engine, NOW - 20 * MINUTE)).targets[0]).toMatchObject({ result: "sent", acknowledged: 3 });
    expect((await sweep(site, later(6))).report).toMatchObject({ tombstones: 0, held: 1 });
    expect(await tombstones(site)).toBe(2);
    await regenerate(site);
    expect((await sweep(site, later(6))).report).toMatchObject({ tombstones: 0, held: 1 });
    expect((await sweep(site, later(7))).report).toMatchObject({ tombstones: 0, held: 1 });
    expect((await sweep(site, later(9))).report).toMatchObject({ tombstones: 2, held: 0 });
    expect(await tombstones(site)).toBe(0);

    const live = await liveLocs(site);
    expect(live).toHaveLength(7);
    await expectCrawl(site, live);
  });

  it("purged while a shard they changed is still to be rendered, change nothing it serves", async () => {
    const site = newSite("hk-pending", { MAX_URLS_PER_SHARD: "5", REGEN_MAX_SHARDS: "1" });
    await write(site, pages(site, 0, 15), NOW - 60 * MINUTE);
    for (let i = 0; !(await regenerate(site)).converged; i++) expect(i).toBeLessThan(10);
    // One deletion in the first shard, one in the last: a run renders one of them, the other waits.
    await remove(site, [`${site.origin}/page/0`, `${site.origin}/page/14`], NOW - 50 * MINUTE);
    expect((await regenerate(site)).pendingShards).toBe(1);
    // The shard still to be rendered is served as it was published (page/14 still listed), tombstone or not.
    const served = await crawl(site);
    expect(served).toHaveLength(14);
    expect(served).toContain(`${site.origin}/page/14`);

    await sweep(site);
    expect((await sweep(site, later(3))).report).toMatchObject({ tombstones: 2, held: 0 });
    expect(await tombstones(site)).toBe(0);
    expect(await crawl(site)).toEqual(served);

    expect((await regenerate(site)).pendingShards).toBe(0);
    const live = await liveLocs(site);
    expect(live).toHaveLength(13);
    await expectCrawl(site, live);
  });

  it("are not touched before the site's first regeneration", async () => {
    const site = newSite("hk-first");
    await write(site, pages(site, 0, 4), NOW - 60 * MINUTE);
    await remove(site, [`${site.origin}/page/1`], NOW - 50 * MINUTE);
    expect((await sweep(site)).report).toMatchObject({ tombstones: 0, moves: 0 });
    expect((await sweep(site, later(3))).report).toMatchObject({ tombstones: 0, moves: 0 });
    expect(await tombstones(site)).toBe(1);
  });
});

describe("bounded runs", () => {
  /** `dead` tombstones, then `live` live rows of the site, and `moved` section moves of its live rows, written directly. */
  async function seed(site: Site, live: number, dead: number, moved: number): Promise<void> {
    await site.env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO urls (origin, section, loc, size, updated_at, deleted)
       SELECT ?1, 'pages', ?1 || '/seeded/' || i, 80, ?3 + i, CASE WHEN i <= ?4 THEN 1 ELSE 0 END FROM n`,
    )
      .bind(site.origin, live + dead, NOW - 2 * HOUR, dead)
      .run();
    await site.env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO url_moves (origin, section, id, updated_at)
       SELECT ?1, 'old', (SELECT MAX(id) FROM urls WHERE origin = ?1) - (i % ?4), ?3 FROM n`,
    )
      .bind(site.origin, moved, NOW - 2 * HOUR, live)
      .run();
  }

  it("each run within its statements and rows a statement; the rest resumes in the next, nothing live lost", async () => {
    const site = newSite("hk-bounded");
    await seed(site, 300, 2_600, 700);
    await regenerate(site);
    const live = await liveLocs(site);
    // Out of time before it begins: it takes on nothing and says more is left.
    const late = await sweep(site, { deadline: Date.now() - 1 });
    expect(late.report).toMatchObject({ tombstones: 0, moves: 0, moreLeft: true });
    expect(late.queries).toBeLessThanOrEqual(1);
    const runs: HousekeepingReport[] = [];
    for (;;) {
      // Runs minutes apart (the first only sees the regeneration's cursor; the next ones purge below it).
      const { report, queries } = await sweep(site, { maxStatements: 12, rowsPerStatement: 250, ...later(3 * (runs.length + 1)) });
      expect(queries).toBeLessThanOrEqual(12);
      runs.push(report);
      expect(describeHousekeeping(report).endsWith(", more left")).toBe(report.moreLeft);
      if (!report.moreLeft && (await tombstones(site)) + (await moves(site)) === 0) break;
      expect(runs.length).toBeLessThan(30);
    }
    // The first run deleted the moves and kept the tombstones (the cursor only just seen).
    expect(runs[0]).toMatchObject({ moves: 700, tombstones: 0, held: 1, moreLeft: false });
    // 3,300 rows at 250 a statement take several runs, each under its cap.
    expect(runs.length).toBeGreaterThan(3);
    expect(runs.reduce((n, r) => n + r.tombstones, 0)).toBe(2_600);
    expect(runs.reduce((n, r) => n + r.moves, 0)).toBe(700);
    for (const r of runs) expect(r.tombstones + r.moves).toBeLessThanOrEqual(250 * 12);
    expect(await tombstones(site)).toBe(0);
    expect(await moves(site)).toBe(0);
    expect(await liveLocs(site)).toEqual(live);
    await expectCrawl(site, live);
  });

  it("with the default bounds a run stays far inside the invocation's 1,000 queries", async () => {
    const site = newSite("hk-default");
    await seed(site, 100, 12_000, 0);
    await regenerate(site);
    await sweep(site);
    const { report, queries } = await sweep(site, later(3));
    expect(report).toMatchObject({ tombstones: 12_000, moreLeft: false });
    // Cursors, the syncs' survey, the site's litter, its regeneration state, what was seen of it, its watermark, three purges of 5,000.
    expect(queries).toBeLessThanOrEqual(12);
    expect(describeHousekeeping(report)).toMatch(/^swept 0; trimmed tombstones 12000/);
    expect(await liveLocs(site)).toHaveLength(100);
  });

  it("reads about the rows it deletes (EXPLAIN QUERY PLAN: index ranges, primary keys)", async () => {
    const plan = async (sql: string) =>
      (await baseEnv.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).all<{ detail: string }>()).results.map((r) => r.detail).join("\n");
    expect(
      await plan(
        `DELETE FROM urls WHERE id IN (SELECT id FROM urls INDEXED BY urls_tombstones
           WHERE origin = 'x' AND deleted = 1 AND updated_at <= 5 AND (updated_at < 5 OR id <= 9) ORDER BY updated_at LIMIT 10)`,
      ),
    ).toMatch(/SEARCH urls USING INTEGER PRIMARY KEY[\s\S]*SEARCH urls USING COVERING INDEX urls_tombstones \(origin=\? AND updated_at<\?\)/);
    const litter = await plan(
      `SELECT s.value, (SELECT seq FROM url_moves WHERE origin = s.value ORDER BY seq LIMIT 1),
         (SELECT updated_at FROM urls INDEXED BY urls_tombstones WHERE origin = s.value AND deleted = 1 ORDER BY updated_at LIMIT 1),
         (SELECT seen FROM housekeeping_sites WHERE origin = s.value)
       FROM json_each('["x"]') AS s ORDER BY s.key`,
    );
    expect(litter).toMatch(/SEARCH url_moves USING COVERING INDEX url_moves_site \(origin=\?\)/);
    expect(litter).toMatch(/SEARCH urls USING COVERING INDEX urls_tombstones \(origin=\?\)/);
    expect(litter).toMatch(/SEARCH housekeeping_sites USING PRIMARY KEY \(origin=\?\)/);
    expect(await plan("DELETE FROM url_moves WHERE seq IN (SELECT seq FROM url_moves WHERE origin = 'x' AND seq <= 5 ORDER BY seq LIMIT 10)")).toMatch(
      /SEARCH url_moves USING INTEGER PRIMARY KEY[\s\S]*SEARCH url_moves USING COVERING INDEX url_moves_site \(origin=\? AND seq<\?\)/,
    );
    expect(await plan("SELECT kind, origin FROM jobs WHERE (kind, origin) > ('a', 'b') ORDER BY kind, origin LIMIT 10")).toMatch(
      /SEARCH jobs USING PRIMARY KEY \(\(kind,origin\)>\(\?,\?\)\)/,
    );
    expect(await plan("DELETE FROM jobs WHERE due_at <= 5 AND ((kind = 'a' AND origin = 'b') OR (kind = 'c' AND origin = 'd'))")).not.toMatch(/SCAN jobs/);
  });
});

describe("rows of the jobs table", () => {
  it("of sites and mirrors no longer configured are deleted by the sync-sweep job, once a day", async () => {
    const site = newSite("hk-jobs");
    const mirror = `${site.origin}/wp-sitemap.xml`;
    const env = { ...site.env, MIRROR_SITEMAPS: mirror } as Env;
    const gone = freshOrigin("hk-gone");
    const insert = (kind: string, origin: string, dueAt = 0) =>
      env.DB.prepare("INSERT INTO jobs (kind, origin, due_at) VALUES (?1, ?2, ?3)").bind(kind, origin, dueAt).run();
    await insert("regenerate", site.origin);
    await insert("mirror", mirror);
    await insert("regenerate", gone);
    await insert("notify", gone);
    await insert("gsc-status", gone);
    await insert("mirror", `${site.origin}/old-sitemap.xml`);
    // A message of it is still on its way: left to arrive (it finds no chain and does nothing), then deleted.
    await insert("notify", `${gone}/pending`, Date.now() + HOUR);

    // This database's jobs table was walked by the runs of the tests before: as if that was a day ago.
    await env.DB.prepare("DELETE FROM housekeeping WHERE task = 'jobs'").run();
    const { env: jobsEnv } = withJobs(env);
    await deliver(jobsEnv, { kind: "sync-sweep", origin: site.origin, trigger: "test", step: 0 });
    const rows = await env.DB.prepare("SELECT kind, origin, outcome FROM jobs ORDER BY kind, origin").all<{
      kind: string;
      origin: string;
      outcome: string | null;
    }>();
    expect(rows.results.map((r) => `${r.kind} ${r.origin}`).sort()).toEqual(
      [`mirror ${mirror}`, `notify ${gone}/pending`, `regenerate ${site.origin}`, `sync-sweep ${site.origin}`].sort(),
    );
    expect(rows.results.find((r) => r.kind === "sync-sweep")!.outcome).toContain("trimmed jobs 4");

    // The walk is daily: a row gone stale since is deleted by the first run a day later.
    await insert("regenerate", `${gone}/later`);
    expect((await housekeep([services(env)], { keepJob: keepJobOf(env) })).jobs).toBe(0);
    expect((await housekeep([services(env)], { keepJob: keepJobOf(env), now: Date.now() + DAY + HOUR })).jobs).toBe(2);
  });
});

describe("finished syncs", () => {
  it("forget what they saw at once and are themselves forgotten after a week; open and committing ones stay until their expiry", async () => {
    const site = newSite("hk-syncs");
    const sync = services(site.env).store.sync!;
    await write(site, pages(site, 0, 6), NOW - HOUR);
    const scope = { sites: [site.origin], section: null, source: null };
    const options = { maxDelete: 1, ttlMs: DAY };
    const seenOf = (id: string) => countOf(site.env.DB, "SELECT COUNT(*) AS n FROM sync_seen WHERE sync = ?1", id);

    const committed = (await sync.start(scope, options, NOW)).id;
    await sync.upsert(committed, validRecords(site.env, pages(site, 0, 5)), NOW);
    expect((await sync.commit(committed, { maxChunks: 10 }, NOW)).sync).toMatchObject({ state: "committed", deleted: 1 });
    const aborted = (await sync.start(scope, options, NOW)).id;
    await sync.upsert(aborted, validRecords(site.env, pages(site, 0, 5)), NOW);
    await sync.abort(aborted, NOW);
    const open = (await sync.start(scope, options, NOW)).id;
    await sync.upsert(open, validRecords(site.env, pages(site, 0, 5)), NOW);
    const committing = (await sync.start(scope, options, NOW)).id;
    await sync.upsert(committing, validRecords(site.env, pages(site, 0, 4)), NOW);
    expect((await sync.commit(committing, { maxChunks: 0 }, NOW)).sync.state).toBe("committing");

    const hour = (await sweep(site, { now: NOW + HOUR })).report;
    expect(hour).toMatchObject({ syncs: 0, seenRows: 10 });
    expect(describeHousekeeping(hour)).toContain("sync rows 10");
    expect([await seenOf(committed), await seenOf(aborted), await seenOf(open), await seenOf(committing)]).toEqual([0, 0, 5, 4]);
    expect(await sync.get(committed)).toMatchObject({ state: "committed" });
    expect(await sync.get(aborted)).toMatchObject({ state: "aborted" });

    // A week later: the two finished ones are gone; the open one expired (aborted, nothing deleted)
    // and forgot what it saw; the committing one, abandoned by its client past its expiry, was
    // finished (its guard had passed: it deletes the one live loc it did not see) and forgot too.
    const week = (await sweep(site, { now: NOW + 8 * DAY })).report;
    expect(week).toMatchObject({ syncs: 4, seenRows: 9 });
    expect(await sync.get(committed)).toBeNull();
    expect(await sync.get(aborted)).toBeNull();
    expect(await sync.get(open)).toMatchObject({ state: "aborted", deleted: 0 });
    expect(await sync.get(committing)).toMatchObject({ state: "committed", deleted: 1 });
    expect(await seenOf(committing)).toBe(0);
    expect(await liveLocs(site)).toHaveLength(4);
  });
});

describe("a site over several databases", () => {
  it("trims each partition's own litter, partition after partition across runs", async () => {
    const site = newSite("hk-parts");
    site.env = { ...site.env, SITE_DATABASES: `${site.origin}=DB,PART_B` } as Env;
    await write(site, pages(site, 0, 40), NOW - 60 * MINUTE);
    await remove(
      site,
      pages(site, 0, 40)
        .filter((_, i) => i % 3 === 0)
        .map((p) => p.loc),
      NOW - 50 * MINUTE,
    );
    await regenerateAll(databaseServices(site.env));
    const before = [await tombstones(site, baseEnv.DB), await tombstones(site, baseEnv.PART_B)];
    expect(before[0]).toBeGreaterThan(0);
    expect(before[1]).toBeGreaterThan(0);
    expect(before[0]! + before[1]!).toBe(14);

    // First, runs that see each partition's regeneration cursor.
    for (let i = 0; (await sweep(site, { maxStatements: 13, rowsPerStatement: 5 }, ["DB", "PART_B"])).report.moreLeft; i++) expect(i).toBeLessThan(5);
    expect([await tombstones(site, baseEnv.DB), await tombstones(site, baseEnv.PART_B)]).toEqual(before);
    // Minutes later, a budget that fits about one partition a run: the next run starts with the other.
    const runs: HousekeepingReport[] = [];
    for (;;) {
      const { report, queries } = await sweep(site, { maxStatements: 13, rowsPerStatement: 5, ...later(3) }, ["DB", "PART_B"]);
      expect(queries).toBeLessThanOrEqual(13);
      runs.push(report);
      // The first run gets through the first partition only; the next one begins with the second.
      if (runs.length === 1) expect([await tombstones(site, baseEnv.DB), (await tombstones(site, baseEnv.PART_B)) > 0]).toEqual([0, true]);
      if (!report.moreLeft) break;
      expect(runs.length).toBeLessThan(20);
    }
    expect(runs.length).toBeGreaterThan(1);
    expect(runs.reduce((n, r) => n + r.tombstones, 0)).toBe(14);
    expect([await tombstones(site, baseEnv.DB), await tombstones(site, baseEnv.PART_B)]).toEqual([0, 0]);
    const live = [...(await liveLocs(site, baseEnv.DB)), ...(await liveLocs(site, baseEnv.PART_B))];
    expect(live).toHaveLength(26);
    await expectCrawl(site, live);
  });

  it("keep a partitioned site's tombstones while a move's catch-up may still read them", async () => {
    const site = newSite("hk-move");
    site.env = { ...site.env, SITE_DATABASES: `${site.origin}=DB,PART_B` } as Env;
    await write(site, pages(site, 0, 30), NOW - 60 * MINUTE);
    await remove(
      site,
      pages(site, 0, 30)
        .filter((_, i) => i % 3 === 0)
        .map((p) => p.loc),
      NOW - 50 * MINUTE,
    );
    await regenerateAll(databaseServices(site.env));
    const before = [await tombstones(site, baseEnv.DB), await tombstones(site, baseEnv.PART_B)];
    expect(before[0]! + before[1]!).toBe(10);
    // A third database appended and its move started: the old partitions' deletions are the catch-up's to read.
    const grown = { ...site, env: { ...site.env, SITE_DATABASES: `${site.origin}=DB,PART_B,PART_C` } as Env };
    await applyD1Migrations(baseEnv.PART_C, baseEnv.TEST_MIGRATIONS);
    expect(await rebalanceStep(servicesFor(grown.env, grown.origin), grown.origin)).toMatchObject({ state: "started" });
    for (const minutes of [0, 3]) {
      const { report } = await sweep(grown, later(minutes), ["DB", "PART_B"]);
      expect(report.tombstones).toBe(0);
    }
    expect([await tombstones(site, baseEnv.DB), await tombstones(site, baseEnv.PART_B)]).toEqual(before);
    // Once the catch-up is over (here: cleared by hand), they go as before.
    const layouts = servicesFor(grown.env, grown.origin).layouts!;
    const layout = await layouts.read();
    await layouts.save({ ...layout, settled: 2, target: 2, cursor: null, catchUp: null }, Date.now());
    let purged = 0;
    for (const minutes of [6, 9]) purged += (await sweep(site, later(minutes), ["DB", "PART_B"])).report.tombstones;
    expect(purged).toBe(10);
  });
});
