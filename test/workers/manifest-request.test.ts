/**
 * A request never walks a large site: one that finds no complete manifest builds it only when the
 * walk of its key rows ends within MANIFEST_REQUEST_ROWS; otherwise it reads no more than that,
 * answers 503 with Retry-After and asks for the site's regeneration, whose jobs build the manifest
 * in bounded steps, after which the index is served. A partitioned site's partitions share the
 * request's rows, and its index never leaves a partition out.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { listedShards } from "../../src/manifest/manifest.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { regenDeps } from "../../src/regen/scheduled.ts";
import { services, servicesFor } from "../../src/services.ts";
import { type Counts, countingEnv } from "./support/counting-env.ts";
import { drain, withJobs } from "./support/jobs.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The manifest walk's statement (src/adapters/d1/reader.ts keyRows). */
const KEY_ROWS = /^SELECT section, id, updated_at, deleted, size, ext_kinds FROM urls/;

/** What one invocation asked of a D1 database: statements (counting-env.ts), and the key-row walk's statements and rows read. */
interface Walked extends Counts {
  walks: number;
  walkRows: number;
}

/** `db` with its key-row walk's statements and `meta.rows_read` counted into `walked` (every statement through countingEnv). */
function walkCounted(env: Env, db: D1Database, walked: Walked): D1Database {
  const real = new WeakMap<object, D1PreparedStatement>();
  const statement = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const walk = KEY_ROWS.test(sql);
    const wrapped = {
      bind: (...values: unknown[]) => statement(stmt.bind(...values), sql),
      async all() {
        const result = await stmt.all();
        if (walk) {
          walked.walks++;
          walked.walkRows += result.meta.rows_read ?? 0;
        }
        return result;
      },
      run: () => stmt.run(),
      first: (column?: string) => (column === undefined ? stmt.first() : stmt.first(column)),
      raw: () => stmt.raw(),
    } as unknown as D1PreparedStatement;
    real.set(wrapped, stmt);
    return wrapped;
  };
  const wrapped = {
    prepare: (sql: string) => statement(db.prepare(sql), sql),
    batch: (list: D1PreparedStatement[]) => db.batch(list.map((s) => real.get(s) ?? s)),
    exec: (sql: string) => db.exec(sql),
  } as unknown as D1Database;
  return countingEnv({ ...env, DB: wrapped }, walked).DB;
}

const newWalked = (): Walked => ({ d1: 0, kv: 0, walks: 0, walkRows: 0 });

/** A request with every D1 database of `names` counted. */
async function counted(env: Env, url: string, names: readonly string[] = ["DB"]): Promise<{ res: Response; walked: Walked }> {
  const walked = newWalked();
  const e = { ...env } as unknown as Record<string, D1Database>;
  for (const name of names) e[name] = walkCounted(env, e[name]!, walked);
  const res = await call(e as unknown as Env, url);
  return { res, walked };
}

/** Every loc of every shard the index lists, duplicates kept. */
async function crawl(env: Env, origin: string): Promise<string[]> {
  const locs: string[] = [];
  for (const url of locsOf(await document(env, `${origin}/sitemap.xml`))) locs.push(...locsOf(await document(env, url)));
  return locs;
}

describe("a request that finds no manifest", () => {
  it("of a site larger than it may walk: reads at most MANIFEST_REQUEST_ROWS rows, answers 503 + Retry-After, and the queued jobs build it", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("unbuilt");
    const { env, queue } = withJobs({
      ...baseEnv,
      SITES: origin,
      MAX_URLS_PER_SHARD: "40",
      MANIFEST_REQUEST_ROWS: "100",
      // The site's first pass takes several runs (one job each).
      REGEN_MAX_ROWS: "100",
      INDEXNOW_ENDPOINT: "",
      PING_URLS: "",
    } as Env);
    // Seeded straight into D1 (a bulk load): no write asked for a regeneration, no manifest exists.
    const records = validRecords(env, demoSection(origin, "pages", 250));
    await new D1RecordWriter(env.DB).upsert(records);

    const first = await counted(env, `${origin}/sitemap.xml`);
    expect(first.res.status).toBe(503);
    expect(first.res.headers.get("Retry-After")).toBe("120");
    expect(first.res.headers.get("Cache-Control")).toBe("no-store");
    // The walk asked for 100 rows (a statement may read one more row than it returns: the one that ends its range).
    expect(first.walked.walks).toBeLessThanOrEqual(2);
    expect(first.walked.walkRows).toBeLessThanOrEqual(100 + first.walked.walks);
    expect(first.walked.d1).toBeLessThanOrEqual(6);
    expect(await services(env).manifests.load(origin)).toBeNull();
    // The site's regeneration was asked for: it builds the manifest in bounded steps.
    expect(queue.pending.map((m) => [m.body.kind, m.body.origin, m.body.trigger])).toEqual([["regenerate", origin, "manifest-missing"]]);

    // The first run of that pass publishes what it planned, marked partial: a request serves none of it and walks nothing.
    const run = await regenerateSite(regenDeps(services(env))!, origin);
    expect(run.passPending).toBe(true);
    const partial = (await services(env).manifests.load(origin))!;
    expect(partial.partial).toBe(true);
    expect(listedShards(partial).length).toBeGreaterThan(0);
    expect(listedShards(partial).reduce((n, s) => n + s.urlCount, 0)).toBeLessThan(records.length);
    const during = await counted(env, `${origin}/sitemap.xml`);
    expect(during.res.status).toBe(503);
    expect(during.res.headers.get("Retry-After")).toBe("120");
    expect(during.walked.walks).toBe(0);

    // The jobs run: the pass continues, one bounded run a job, to its end.
    const deliveries = await drain(env, queue, { early: true });
    expect(deliveries.filter((d) => d.job.kind === "regenerate").length).toBeGreaterThan(1);
    expect(deliveries.every((d) => d.result === "acked")).toBe(true);
    const built = (await services(env).manifests.load(origin))!;
    expect(built.partial).toBeUndefined();
    const after = await counted(env, `${origin}/sitemap.xml`);
    expect(after.res.status).toBe(200);
    expect(after.walked.walks).toBe(0);
    expect(locsOf(await after.res.text())).toHaveLength(Math.ceil(records.length / 40));
    const locs = await crawl(env, origin);
    expect(locs).toHaveLength(records.length);
    expect(new Set(locs)).toEqual(new Set(records.map((r) => r.loc)));
  });

  it("of a site within the bound: built by that request, as before (one walk, no job)", async () => {
    const origin = freshOrigin("small");
    const { env, queue } = withJobs({ ...baseEnv, SITES: origin, MAX_URLS_PER_SHARD: "40", MANIFEST_REQUEST_ROWS: "100" } as Env);
    const records = validRecords(env, demoSection(origin, "pages", 99));
    await new D1RecordWriter(env.DB).upsert(records);
    const first = await counted(env, `${origin}/sitemap.xml`);
    expect(first.res.status).toBe(200);
    expect(first.walked.walks).toBeLessThanOrEqual(2);
    expect(first.walked.walkRows).toBeLessThanOrEqual(99 + first.walked.walks);
    expect(locsOf(await first.res.text())).toHaveLength(3);
    expect(queue.pending).toEqual([]);
    expect(await crawl(env, origin)).toHaveLength(99);
  });

  it("with MANIFEST_REQUEST_ROWS=0: never walks, always asks the regeneration", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("never");
    const { env, queue } = withJobs({ ...baseEnv, SITES: origin, MANIFEST_REQUEST_ROWS: "0" } as Env);
    await new D1RecordWriter(env.DB).upsert(validRecords(env, demoSection(origin, "pages", 3)));
    const first = await counted(env, `${origin}/sitemap.xml`);
    expect(first.res.status).toBe(503);
    expect(first.walked.walks).toBe(0);
    expect(queue.pending.map((m) => m.body.kind)).toEqual(["regenerate"]);
    await drain(env, queue, { early: true });
    expect((await call(env, `${origin}/sitemap.xml`)).status).toBe(200);
  });
});

describe("a partitioned site's request that finds a partition without a manifest", () => {
  const databases = ["DB", "PART_B", "PART_C"] as const;

  it("shares the rows it may walk between the partitions, builds those that fit, and answers 503 while one is missing", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("parts-unbuilt");
    const plain = {
      ...baseEnv,
      SITES: origin,
      SITE_DATABASES: `${origin}=${databases.join(",")}`,
      MAX_URLS_PER_SHARD: "40",
      INDEXNOW_ENDPOINT: "",
      PING_URLS: "",
    } as Env;
    const records = validRecords(plain, demoSection(origin, "products", 240));
    const share = databases.map((_, p) => records.filter((r) => partitionOf(r.loc, 3) === p));
    // Seeded as npm start does: straight into each record's home database, no manifest anywhere.
    for (const [p, name] of databases.entries()) await new D1RecordWriter(baseEnv[name]).upsert(share[p]!);
    expect(share[2]!.length).toBeGreaterThan(1);
    expect(share[2]!.length).toBeLessThan(share[0]!.length + share[1]!.length);
    // Enough rows for the first two partitions' walks and one row of the third's.
    const bound = share[0]!.length + share[1]!.length + 1;
    const { env, queue } = withJobs({ ...plain, MANIFEST_REQUEST_ROWS: String(bound) } as Env);

    const first = await counted(env, `${origin}/sitemap.xml`, databases);
    // Never an index without the third partition: 503, and only that partition's regeneration asked for.
    expect(first.res.status).toBe(503);
    expect(first.res.headers.get("Retry-After")).toBe("120");
    expect(first.walked.walkRows).toBeGreaterThanOrEqual(bound);
    expect(first.walked.walkRows).toBeLessThanOrEqual(bound + first.walked.walks);
    expect(queue.pending.map((m) => [m.body.kind, m.body.partition])).toEqual([["regenerate", 2]]);
    const parts = servicesFor(env, origin).partitions!;
    expect(await parts[0]!.manifests.load(origin)).not.toBeNull();
    expect(await parts[1]!.manifests.load(origin)).not.toBeNull();
    expect(await parts[2]!.manifests.load(origin)).toBeNull();

    // Its jobs build it; the index then lists every partition, each loc once.
    await drain(env, queue, { early: true });
    const after = await counted(env, `${origin}/sitemap.xml`, databases);
    expect(after.res.status).toBe(200);
    expect(after.walked.walks).toBe(0);
    const locs = await crawl(env, origin);
    expect(locs).toHaveLength(records.length);
    expect(new Set(locs)).toEqual(new Set(records.map((r) => r.loc)));
  });

  it("builds every partition's manifest in the request when all of them fit", async () => {
    const origin = freshOrigin("parts-small");
    const env = withJobs({
      ...baseEnv,
      SITES: origin,
      SITE_DATABASES: `${origin}=${databases.join(",")}`,
      MAX_URLS_PER_SHARD: "40",
      MANIFEST_REQUEST_ROWS: "100",
    } as Env);
    const records = validRecords(env.env, demoSection(origin, "pages", 90));
    for (const [p, name] of databases.entries()) await new D1RecordWriter(baseEnv[name]).upsert(records.filter((r) => partitionOf(r.loc, 3) === p));
    const first = await counted(env.env, `${origin}/sitemap.xml`, databases);
    expect(first.res.status).toBe(200);
    expect(first.walked.walkRows).toBeLessThanOrEqual(90 + first.walked.walks);
    expect(env.queue.pending).toEqual([]);
    expect(new Set(await crawl(env.env, origin))).toEqual(new Set(records.map((r) => r.loc)));
  });
});
