/**
 * Bench-only Worker entry (bundled by bench/workerd.ts, never deployed): the real Worker for every
 * request, plus a few `/__bench/*` routes that seed data and count D1 rows read.
 *
 * Rows read are counted by wrapping the D1 binding (CountingD1): every statement's `meta.rows_read`
 * is summed, for the real request path (`/__bench/count?path=…` runs the app itself with the
 * wrapped binding) and for service calls (`/__bench/rebuild`).
 *
 * Every route that does what a product invocation does (a regeneration run, a write batch, a move
 * step, a manifest build, a live render) runs as one invocation under the enforcing meter of the
 * real entry (src/jobs/meter.ts: `metered(new Meter(), …)` over `meteredEnv(env)`), so it fails with
 * InvocationLimitError where production would; its JSON answer carries what it used (`usage`:
 * `meter.reading()`, `subrequests`, and `limitHit`, the first limit error the meter threw, even one
 * the product caught). Scaffolding that only loads or inspects test data (`seed`, `p/seed`, `p/rows`)
 * is no product path and runs unmetered.
 */

import { D1ManifestStore } from "../../src/adapters/d1/manifest-store.ts";
import { D1RecordReader } from "../../src/adapters/d1/reader.ts";
import { d1RecordStore } from "../../src/adapters/d1/record-store.ts";
import { D1RecordWriter, recordColumns } from "../../src/adapters/d1/writer.ts";
import { KvCrawlerRangeStore } from "../../src/adapters/kv/crawler-range-store.ts";
import { renderUrlRows, renderUrlset } from "../../src/core/render.ts";
import { paged } from "../../src/core/source.ts";
import { validateBatch } from "../../src/core/validate.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument as gzip } from "../../src/documents/gzip.ts";
import { app } from "../../src/http/app.ts";
import worker from "../../src/index.ts";
import { STEP_BUDGET_MS } from "../../src/jobs/budget.ts";
import { findShard } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { regenDeps } from "../../src/regen/scheduled.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { type Route, type RouteEntry, runMetered } from "./metering.ts";
import { partitionRoutes } from "./partition-routes.ts";
import { tenantRoutes } from "./tenant-routes.ts";

/** Rows read, rows written and statements of one measured operation. */
export interface D1Counter {
  rowsRead: number;
  rowsWritten: number;
  queries: number;
  /** Rows read per statement text (whitespace collapsed), to see where the rows go. */
  bySql: Record<string, { rowsRead: number; rowsWritten: number; queries: number }>;
}

type Meta = { rows_read?: number; rows_written?: number } | undefined;

function count(counter: D1Counter, meta: Meta, sql: string): void {
  counter.queries++;
  counter.rowsRead += meta?.rows_read ?? 0;
  counter.rowsWritten += meta?.rows_written ?? 0;
  const key = sql.replace(/\s+/g, " ").trim().slice(0, 160);
  const entry = (counter.bySql[key] ??= { rowsRead: 0, rowsWritten: 0, queries: 0 });
  entry.rowsRead += meta?.rows_read ?? 0;
  entry.rowsWritten += meta?.rows_written ?? 0;
  entry.queries++;
}

const REAL = Symbol("real statement");
const SQL = Symbol("statement text");
type Wrapped = D1PreparedStatement & { [REAL]: D1PreparedStatement; [SQL]: string };

/** A prepared statement whose results are counted. `first`/`raw` go through `all` to see the meta. */
function wrapStatement(real: D1PreparedStatement, counter: D1Counter, sql: string): Wrapped {
  const wrapped = {
    [REAL]: real,
    [SQL]: sql,
    bind: (...values: unknown[]) => wrapStatement(real.bind(...values), counter, sql),
    async all<T>() {
      const result = await real.all<T>();
      count(counter, result.meta, sql);
      return result;
    },
    async run<T>() {
      const result = await real.run<T>();
      count(counter, result.meta, sql);
      return result;
    },
    async first<T>(column?: string) {
      const result = await real.all<Record<string, unknown>>();
      count(counter, result.meta, sql);
      const row = result.results[0];
      if (row === undefined) return null;
      return (column === undefined ? row : (row[column] ?? null)) as T;
    },
    async raw<T>(options?: { columnNames?: boolean }) {
      const result = await real.all<Record<string, unknown>>();
      count(counter, result.meta, sql);
      const rows = result.results.map((r) => Object.values(r));
      const out = options?.columnNames ? [Object.keys(result.results[0] ?? {}), ...rows] : rows;
      return out as T[];
    },
  };
  return wrapped as unknown as Wrapped;
}

/** The D1 binding with every statement's rows read counted. */
export function countingD1(db: D1Database, counter: D1Counter): D1Database {
  const wrapped = {
    prepare: (sql: string) => wrapStatement(db.prepare(sql), counter, sql),
    async batch<T>(statements: D1PreparedStatement[]) {
      const results = await db.batch<T>(statements.map((s) => (s as Wrapped)[REAL] ?? s));
      for (const [i, r] of results.entries()) count(counter, r.meta, (statements[i] as Wrapped)[SQL] ?? "?");
      return results;
    },
    exec: (sql: string) => db.exec(sql),
    dump: () => (db as unknown as { dump(): Promise<ArrayBuffer> }).dump(),
    withSession: () => {
      throw new Error("countingD1: withSession is not counted");
    },
  };
  return wrapped as unknown as D1Database;
}

const newCounter = (): D1Counter => ({ rowsRead: 0, rowsWritten: 0, queries: 0, bySql: {} });

/** KV operations of one measured operation: calls per method, and keys read by bulk gets. */
export interface KvCounter {
  kvOps: Record<string, number>;
  kvBulkKeys: number;
}

/** A KV binding whose operations are counted (a bulk get is one operation; its keys counted apart). */
function countingKv(kv: KVNamespace, counter: KvCounter): KVNamespace {
  return new Proxy(kv, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        const bulk = Array.isArray(args[0]);
        const op = bulk ? `${name}(bulk)` : name;
        counter.kvOps[op] = (counter.kvOps[op] ?? 0) + 1;
        if (bulk) counter.kvBulkKeys += (args[0] as unknown[]).length;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** env with both KV namespaces counted. */
function countedKv(env: Env): { env: Env; counter: KvCounter } {
  const counter: KvCounter = { kvOps: {}, kvBulkKeys: 0 };
  return { env: { ...env, URLS: countingKv(env.URLS, counter), SNAPSHOTS: countingKv(env.SNAPSHOTS, counter) } as Env, counter };
}

/** `vars` (JSON object of string vars) over env; one env object per distinct vars, so services() caches stay warm. */
const overridden = new WeakMap<object, Map<string, Env>>();
function withVars(env: Env, url: URL): Env {
  const raw = url.searchParams.get("vars");
  if (!raw) return env;
  let byVars = overridden.get(env);
  if (!byVars) overridden.set(env, (byVars = new Map()));
  let out = byVars.get(raw);
  if (!out) byVars.set(raw, (out = { ...env, ...(JSON.parse(raw) as Record<string, string>) } as Env));
  return out;
}

/** The real app on `path`, with `vars` overriding the configuration (e.g. EDGE_CACHE_TTL=0), streamed back as is. */
async function passThrough(env: Env, ctx: ExecutionContext, url: URL, request: Request): Promise<Response> {
  const target = new URL(url.searchParams.get("path")!, url.origin);
  return worker.fetch(new Request(target, { headers: request.headers }), withVars(env, url), ctx);
}

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: { "Content-Type": "application/json" } });
}

/** Rows per literal INSERT, as scripts/local-db.ts `insertSql` (~300 × ~200 bytes ≪ 100 KB). */
const ROWS_PER_INSERT = 300;

const sqlValue = (v: unknown): string =>
  v === null || v === undefined ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replaceAll("'", "''")}'`;

/**
 * Generates `count` demo records of `section` from index `start`, validates them and inserts them
 * with multi-row literal INSERTs in one D1 batch: the SQL of scripts/local-db.ts `insertSql` (which
 * imports Node modules, so it cannot be bundled here). Stamps: `stamp`, `stamp + 1`, …
 */
async function seed(env: Env, url: URL): Promise<Response> {
  const origin = url.searchParams.get("origin")!;
  const section = url.searchParams.get("section")!;
  const start = Number(url.searchParams.get("start"));
  const count = Number(url.searchParams.get("count"));
  const stamp = Number(url.searchParams.get("stamp") ?? Date.now());
  const records = validateBatch(demoSection(origin, section, count, start), { sites: new Set([origin]), defaultSection: "pages" });
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < records.length; i += ROWS_PER_INSERT) {
    const rows = records.slice(i, i + ROWS_PER_INSERT).map((r, j) => `(${[r.origin, ...recordColumns(r), stamp + i + j].map(sqlValue).join(",")})`);
    statements.push(
      env.DB.prepare(`INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at) VALUES ${rows.join(",")}`),
    );
  }
  const results = await env.DB.batch(statements);
  return json({ seeded: records.length, rowsWritten: results.reduce((n, r) => n + (r.meta.rows_written ?? 0), 0) });
}

/**
 * Changes `count` records of a section (new lastmod) through D1RecordWriter, the way the ingest API
 * does: records start, start + step, start + 2·step, … (a write batch: metered)
 */
const touch: Route = async (env, _ctx, url) => {
  const origin = url.searchParams.get("origin")!;
  const section = url.searchParams.get("section")!;
  const start = Number(url.searchParams.get("start"));
  const count = Number(url.searchParams.get("count"));
  const step = Number(url.searchParams.get("step") ?? 1);
  const lastmod = url.searchParams.get("lastmod")!;
  const inputs = Array.from({ length: count }, (_, i) => ({ ...demoSection(origin, section, 1, start + i * step)[0]!, lastmod }));
  const records = validateBatch(inputs, { sites: new Set([origin]), defaultSection: "pages" });
  // `store=configured`: through the configured store's writer (for KV, the site's writer object).
  if (url.searchParams.get("store") === "configured") return json(await services(env).store.writer.upsert(records));
  const counter = newCounter();
  const summary = await new D1RecordWriter(countingD1(env.DB, counter)).upsert(records);
  return json({ ...summary, ...counter });
};

/**
 * Runs the real app on `path` with a counting D1 binding; reads the whole body. The app runs as the
 * real entry runs it (src/index.ts: `app.fetch` on the metered env, under the invocation's meter),
 * only with this route's meter, so the answer can say what the request used.
 */
const countRequest: Route = async (env, ctx, url, request) => {
  const counter = newCounter();
  const target = new URL(url.searchParams.get("path")!, url.origin);
  const headers = new Headers(request.headers);
  const base = withVars(env, url);
  // env is metered already: the counting wrappers sit on its counted bindings (not metered twice).
  const kv = countedKv({ ...base, DB: countingD1(env.DB, counter) } as Env);
  const started = Date.now();
  const response = await app.fetch(new Request(target, { headers }), kv.env, ctx);
  let bytes = 0;
  if (response.body) for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  return json({
    status: response.status,
    bytes,
    ms: Date.now() - started,
    source: response.headers.get("X-Sitemap-Source"),
    retryAfter: response.headers.get("Retry-After"),
    ...counter,
    ...kv.counter,
  });
};

/**
 * Full manifest rebuild (one keyset walk of the site's key rows, in one invocation), counted. No
 * product path walks a whole site in one invocation any more (a request builds within
 * MANIFEST_REQUEST_ROWS, a regeneration in bounded steps); metered all the same, so a walk the
 * limits cannot hold fails here as it would in production.
 */
const rebuild: Route = async (env, _ctx, url) => {
  const origin = url.searchParams.get("origin")!;
  const counter = newCounter();
  const db = countingD1(env.DB, counter);
  const config = services(env).config;
  // `store=configured`: the store URL_SOURCE / MANIFEST_STORE name (e.g. KV), with its KV operations counted.
  const kv = countedKv(env);
  const deps =
    url.searchParams.get("store") === "configured" ? services(kv.env) : { config, store: d1RecordStore(db), manifests: new D1ManifestStore(db) };
  const started = Date.now();
  const manifest = await rebuildManifest(deps, origin);
  const listed = manifest.shards.filter((s) => s.urlCount > 0);
  return json({
    ms: Date.now() - started,
    shards: listed.length,
    urls: listed.reduce((n, s) => n + s.urlCount, 0),
    ...counter,
    ...kv.counter,
  });
};

/**
 * One regeneration run of the site (`full=1`: a site pass), with every D1 statement counted: what
 * one `regenerate` job step runs (src/jobs/regenerate.ts), with the step's bounds (its time budget
 * and the invocation's usage, so the run stops at its share of the limits as the job's does).
 */
const regen: Route = async (env, _ctx, url, _request, meter) => {
  const origin = url.searchParams.get("origin")!;
  const counter = newCounter();
  const kv = countedKv({ ...withVars(env, url), DB: countingD1(env.DB, counter) } as Env);
  const deps = regenDeps(services(kv.env));
  if (!deps) return json({ error: "regeneration needs DB and SNAPSHOTS" }, 500);
  const summary = await regenerateSite(deps, origin, {
    trigger: "bench",
    full: url.searchParams.get("full") === "1",
    usage: () => meter!.reading(),
    deadline: Date.now() + STEP_BUDGET_MS,
  });
  return json({ summary, ...counter, ...kv.counter });
};

/** Breakdown of a live render: only the D1 reads of a shard, as the live render reads them (row arrays, discarded). */
const readShard: Route = async (env, _ctx, url) => {
  const origin = url.searchParams.get("origin")!;
  const section = url.searchParams.get("section")!;
  const n = Number(url.searchParams.get("n"));
  const manifest = await new D1ManifestStore(env.DB).load(origin);
  const shard = manifest && findShard(manifest, section, n);
  if (!shard) return json({ error: "no such shard" }, 404);
  let rows = 0;
  const pageRows = Number(url.searchParams.get("pageRows") ?? 0) || undefined;
  const source = new D1RecordReader(env.DB, pageRows ? { pageRows } : {});
  for await (const page of source.rowPages({ origin, section, firstKey: shard.firstKey, lastKey: shard.lastKey })) rows += page.length;
  return json({ rows });
};

/**
 * The live render's path without HTTP and the app: D1RecordReader's row arrays (next page in flight
 * while the current one renders) → render → gzip, with `pageRows` rows per keyset page, to choose the page size.
 */
const renderFromD1: Route = async (env, _ctx, url) => {
  const origin = url.searchParams.get("origin")!;
  const section = url.searchParams.get("section")!;
  const n = Number(url.searchParams.get("n"));
  const pageRows = Number(url.searchParams.get("pageRows") ?? 2_500);
  const manifest = await new D1ManifestStore(env.DB).load(origin);
  const shard = manifest && findShard(manifest, section, n);
  if (!shard) return json({ error: "no such shard" }, 404);
  const range = { origin, section, firstKey: shard.firstKey, lastKey: shard.lastKey };
  let bytes = 0;
  const rows = paged(new D1RecordReader(env.DB, { pageRows }).rowPages(range));
  for await (const chunk of gzip(renderUrlRows(rows)) as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  return json({ bytes });
};

/** Pre-generated records, kept per isolate for the render-only breakdown. */
let memoryRecords: { count: number; records: ReturnType<typeof validateBatch> } | null = null;

/** Breakdown of a live render: render (+ gzip) of in-memory records, no D1. `prepare=1` only builds them. */
const renderMemory: Route = async (_env, _ctx, url) => {
  const origin = url.searchParams.get("origin")!;
  const count = Number(url.searchParams.get("count"));
  if (memoryRecords?.count !== count) {
    memoryRecords = { count, records: validateBatch(demoSection(origin, "products", count), { sites: new Set([origin]), defaultSection: "pages" }) };
  }
  if (url.searchParams.get("prepare") === "1") return json({ prepared: count });
  // In pages of 2,500 behind an await each, as the D1 reader hands them over.
  async function* pages() {
    const all = memoryRecords!.records;
    for (let i = 0; i < all.length; i += 2_500) yield all.slice(i, i + 2_500);
  }
  const xml = renderUrlset(url.searchParams.get("sync") === "1" ? memoryRecords.records : paged(pages()));
  const body = url.searchParams.get("gzip") === "1" ? gzip(xml) : xml;
  let bytes = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  return json({ bytes });
};

/** Scaffolding: a crawler's published ranges, stored as the refresh job stores them (bench/workerd.ts "crawler log"). */
async function crawlerRanges(env: Env, url: URL): Promise<Response> {
  const now = Date.now();
  const prefixes = url.searchParams.getAll("prefix");
  const name = url.searchParams.get("name")!;
  await new KvCrawlerRangeStore(env.SNAPSHOTS).save({
    name,
    url: `https://ranges.invalid/${name}.json`,
    prefixes,
    fetchedAt: now,
    checkedAt: now,
    error: null,
  });
  return json({ name, prefixes: prefixes.length });
}

/**
 * The `/__bench/*` routes. Metered: each is one invocation under the enforcing meter (its answer
 * carries `usage`). Not metered: scaffolding that loads test data (`seed` inserts up to 50,000 rows
 * a call in one D1 batch, `p/seed` likewise per database) or reads it for the bench's report
 * (`p/rows`: count(*) per database); no product invocation does either.
 */
const ROUTES: Record<string, RouteEntry> = {
  "/__bench/seed": { metered: false, run: (env, _ctx, url) => seed(env, url) },
  "/__bench/crawler-ranges": { metered: false, run: (env, _ctx, url) => crawlerRanges(env, url) },
  "/__bench/touch": { metered: true, run: touch },
  "/__bench/count": { metered: true, run: countRequest },
  "/__bench/rebuild": { metered: true, run: rebuild },
  "/__bench/regen": { metered: true, run: regen },
  "/__bench/read": { metered: true, run: readShard },
  "/__bench/render-d1": { metered: true, run: renderFromD1 },
  "/__bench/render": { metered: true, run: renderMemory },
  ...partitionRoutes(countingD1),
  // Registered sites (bench/tenants.ts): registration, the heartbeat and its jobs on a queue kept in the isolate.
  ...tenantRoutes(countingD1),
};

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    if (!url.pathname.startsWith("/__bench/")) return worker.fetch(request, env, ctx);
    if (url.pathname === "/__bench/ping") return new Response("ok"); // the request floor: no app, no I/O
    if (url.pathname === "/__bench/blob") {
      // The request floor plus a body of `bytes` from memory: what moving a cached shard's bytes costs.
      const bytes = Number(url.searchParams.get("bytes") ?? 0);
      return new Response(new Uint8Array(bytes), { encodeBody: "manual", headers: { "Content-Encoding": "gzip" } });
    }
    // The real app on `path`, streamed back as is: the real entry runs it, under its own meter (the
    // limits enforced, its usage not in the answer: `/__bench/count` runs the same path and says it).
    if (url.pathname === "/__bench/as") return passThrough(env, ctx, url, request);
    const route = ROUTES[url.pathname];
    if (!route) return json({ error: "no such bench route" }, 404);
    try {
      if (route.metered) return await runMetered(route.run, env, ctx, url, request);
      return await route.run(env, ctx, url, request, null);
    } catch (err) {
      return json({ error: String((err as Error)?.stack ?? err) }, 500);
    }
  },
  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    await (worker as ExportedHandler<Env>).scheduled?.(controller, env, ctx);
  },
  // The JOBS queue's consumer (wrangler.jsonc), as the real entry runs it.
  async queue(batch: MessageBatch, env: Env, ctx: ExecutionContext): Promise<void> {
    await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
  },
} satisfies ExportedHandler<Env>;

// The Durable Object classes of the real entry: wrangler.jsonc binds KV_WRITERS to KvSiteWriter.
export { KvSiteWriter } from "../../src/index.ts";
