/**
 * Bench routes of a site over several D1 databases (bench/partitions.ts): seed each record straight
 * into its home database, regenerate one partition, scatter changes, one step of a move, rows per
 * database. `sd` is the SITE_DATABASES value the call runs under (3 databases, then 4). Every D1
 * binding of the call is counted (rows read, statements). `p/regen`, `p/touch` and `p/rebalance` do
 * what a product invocation does and run metered (bench-worker.ts: the enforcing meter); `p/seed`
 * and `p/rows` are scaffolding (loading and inspecting test data) and do not.
 */
import { recordColumns } from "../../src/adapters/d1/writer.ts";
import { validateBatch } from "../../src/core/validate.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { STEP_BUDGET_MS } from "../../src/jobs/budget.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { regenDeps } from "../../src/regen/scheduled.ts";
import { servicesFor } from "../../src/services.ts";
import type { Route, RouteEntry } from "./metering.ts";

/** What bench-worker.ts counts per call (its D1Counter), and its counting wrapper, handed in: no import cycle. */
interface D1Counter {
  rowsRead: number;
  rowsWritten: number;
  queries: number;
  bySql: Record<string, { rowsRead: number; queries: number }>;
}
type Counting = (db: D1Database, counter: D1Counter) => D1Database;
let countingD1: Counting;

const ROWS_PER_INSERT = 300;

const json = (value: unknown, status = 200): Response => Response.json(value, { status });
const sqlValue = (v: unknown): string =>
  v === null || v === undefined ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replaceAll("'", "''")}'`;

/** env under `sd`, every database binding of it counted (for a metered route, env's bindings are the metered ones). */
function counted(env: Env, url: URL): { env: Env; counter: D1Counter; bindings: string[]; origin: string } {
  const sd = url.searchParams.get("sd")!;
  const [origin, list] = [sd.slice(0, sd.lastIndexOf("=")), sd.slice(sd.lastIndexOf("=") + 1)];
  const bindings = list.split(",");
  const counter: D1Counter = { rowsRead: 0, rowsWritten: 0, queries: 0, bySql: {} };
  const raw = env as unknown as Record<string, D1Database>;
  const dbs = Object.fromEntries(bindings.map((b) => [b, countingD1(raw[b]!, counter)]));
  return { env: { ...env, ...dbs, SITE_DATABASES: sd, INDEXNOW_ENDPOINT: "", PING_URLS: "" } as Env, counter, bindings, origin };
}

const seed: Route = async (env, _ctx, url) => {
  const { bindings, origin } = counted(env, url);
  const p = (k: string) => Number(url.searchParams.get(k));
  const records = validateBatch(demoSection(origin, url.searchParams.get("section")!, p("count"), p("start")), {
    sites: new Set([origin]),
    defaultSection: "pages",
  });
  const stamp = p("stamp");
  const raw = env as unknown as Record<string, D1Database>;
  const byHome = bindings.map((): string[] => []);
  for (const [i, r] of records.entries()) {
    byHome[partitionOf(r.loc, bindings.length)]!.push(`(${[r.origin, ...recordColumns(r), stamp + i].map(sqlValue).join(",")})`);
  }
  await Promise.all(
    bindings.map(async (b, home) => {
      const db = raw[b]!;
      const rows = byHome[home]!;
      const statements: D1PreparedStatement[] = [];
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
        const values = rows.slice(i, i + ROWS_PER_INSERT).join(",");
        statements.push(db.prepare(`INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at) VALUES ${values}`));
      }
      if (statements.length > 0) await db.batch(statements);
    }),
  );
  return json({ seeded: records.length, perDatabase: byHome.map((r) => r.length) });
};

/** One regeneration run of one partition: one `regenerate` job step, with its bounds (time budget, the invocation's usage). */
const regen: Route = async (env, _ctx, url, _request, meter) => {
  const c = counted(env, url);
  const part = servicesFor(c.env, c.origin).partitions![Number(url.searchParams.get("partition"))]!;
  const summary = await regenerateSite(regenDeps(part)!, c.origin, {
    trigger: "bench",
    full: url.searchParams.get("full") === "1",
    usage: () => meter!.reading(),
    deadline: Date.now() + STEP_BUDGET_MS,
  });
  return json({ summary, rowsRead: c.counter.rowsRead, rowsWritten: c.counter.rowsWritten, queries: c.counter.queries });
};

/**
 * `count` demo records of `section` re-sent with a new lastmod, `stride` apart (scattered over the
 * site), through the site's writer: records (offset + i) · stride.
 */
const touch: Route = async (env, _ctx, url) => {
  const c = counted(env, url);
  const count = Number(url.searchParams.get("count"));
  const stride = Number(url.searchParams.get("stride"));
  const offset = Number(url.searchParams.get("offset") ?? 0);
  const inputs = Array.from({ length: count }, (_, i) => ({
    ...demoSection(c.origin, url.searchParams.get("section")!, 1, (offset + i) * stride)[0]!,
    lastmod: url.searchParams.get("lastmod") ?? "2026-11-25",
  }));
  const records = validateBatch(inputs, { sites: new Set([c.origin]), defaultSection: "pages" });
  const result = await servicesFor(c.env, c.origin).store.writer.upsert(records);
  return json({ ...result, rowsRead: c.counter.rowsRead, rowsWritten: c.counter.rowsWritten, queries: c.counter.queries });
};

/** One step of the site's move or purge: what one `rebalance` job step runs (src/jobs/rebalance.ts), with its bounds (time budget, the invocation's usage). */
const rebalance: Route = async (env, _ctx, url, _request, meter) => {
  const c = counted(env, url);
  const at = url.searchParams.get("now");
  const maxRows = url.searchParams.get("maxRows");
  const step = await rebalanceStep(servicesFor(c.env, c.origin), c.origin, {
    ...(maxRows ? { maxRows: Number(maxRows) } : {}),
    ...(at ? { now: Number(at) } : {}),
    deadline: Date.now() + STEP_BUDGET_MS,
    usage: () => meter!.reading(),
  });
  return json({ ...step, rowsRead: c.counter.rowsRead, rowsWritten: c.counter.rowsWritten, queries: c.counter.queries });
};

const rows: Route = async (env, _ctx, url) => {
  const { bindings, origin } = counted(env, url);
  const raw = env as unknown as Record<string, D1Database>;
  const out: Record<string, number> = {};
  // `all`: every row, tombstones and rows a move left behind too (what the database stores).
  const where = url.searchParams.get("all") ? "origin = ?1" : "origin = ?1 AND deleted = 0";
  for (const b of bindings) {
    out[b] = (await raw[b]!.prepare(`SELECT count(*) AS n FROM urls WHERE ${where}`).bind(origin).first<{ n: number }>())!.n;
  }
  return json(out);
};

/** The routes (bench-worker.ts's table), with its counting wrapper handed in: no import cycle. */
export function partitionRoutes(counting: Counting): Record<string, RouteEntry> {
  countingD1 = counting;
  return {
    "/__bench/p/seed": { metered: false, run: seed },
    "/__bench/p/regen": { metered: true, run: regen },
    "/__bench/p/touch": { metered: true, run: touch },
    "/__bench/p/rebalance": { metered: true, run: rebalance },
    "/__bench/p/rows": { metered: false, run: rows },
  };
}
