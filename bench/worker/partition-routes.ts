/**
 * Bench routes of a site over several D1 databases (bench/partitions.ts): seed each record straight
 * into its home database, regenerate one partition, scatter changes, one step of a move, rows per
 * database. `sd` is the SITE_DATABASES value the call runs under (3 databases, then 4). Every D1
 * binding of the call is counted (rows read, statements).
 */
import { recordColumns } from "../../src/adapters/d1/writer.ts";
import { validateBatch } from "../../src/core/validate.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { regenDeps } from "../../src/regen/scheduled.ts";
import { servicesFor } from "../../src/services.ts";

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

/** env under `sd`, every database binding of it counted. */
function counted(env: Env, url: URL): { env: Env; counter: D1Counter; bindings: string[]; origin: string } {
  const sd = url.searchParams.get("sd")!;
  const [origin, list] = [sd.slice(0, sd.lastIndexOf("=")), sd.slice(sd.lastIndexOf("=") + 1)];
  const bindings = list.split(",");
  const counter: D1Counter = { rowsRead: 0, rowsWritten: 0, queries: 0, bySql: {} };
  const raw = env as unknown as Record<string, D1Database>;
  const dbs = Object.fromEntries(bindings.map((b) => [b, countingD1(raw[b]!, counter)]));
  return { env: { ...env, ...dbs, SITE_DATABASES: sd, INDEXNOW_ENDPOINT: "", PING_URLS: "" } as Env, counter, bindings, origin };
}

async function seed(env: Env, url: URL): Promise<Response> {
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
}

/** One regeneration run of one partition. */
async function regen(env: Env, ctx: ExecutionContext, url: URL): Promise<Response> {
  const c = counted(env, url);
  const part = servicesFor(c.env, c.origin).partitions![Number(url.searchParams.get("partition"))]!;
  const summary = await regenerateSite(regenDeps(part)!, c.origin, { trigger: "bench", full: url.searchParams.get("full") === "1" });
  void ctx;
  return json({ summary, rowsRead: c.counter.rowsRead, rowsWritten: c.counter.rowsWritten, queries: c.counter.queries });
}

/** `count` demo records of `section` re-sent with a new lastmod, `stride` apart (scattered over the site), through the site's writer. */
async function touch(env: Env, url: URL): Promise<Response> {
  const c = counted(env, url);
  const count = Number(url.searchParams.get("count"));
  const stride = Number(url.searchParams.get("stride"));
  const inputs = Array.from({ length: count }, (_, i) => ({
    ...demoSection(c.origin, url.searchParams.get("section")!, 1, i * stride)[0]!,
    lastmod: "2026-11-25",
  }));
  const records = validateBatch(inputs, { sites: new Set([c.origin]), defaultSection: "pages" });
  const result = await servicesFor(c.env, c.origin).store.writer.upsert(records);
  return json({ ...result, rowsRead: c.counter.rowsRead, rowsWritten: c.counter.rowsWritten, queries: c.counter.queries });
}

async function rebalance(env: Env, url: URL): Promise<Response> {
  const c = counted(env, url);
  const at = url.searchParams.get("now");
  const step = await rebalanceStep(servicesFor(c.env, c.origin), c.origin, {
    maxRows: Number(url.searchParams.get("maxRows")),
    ...(at ? { now: Number(at) } : {}),
  });
  return json({ ...step, rowsRead: c.counter.rowsRead, rowsWritten: c.counter.rowsWritten, queries: c.counter.queries });
}

async function rows(env: Env, url: URL): Promise<Response> {
  const { bindings, origin } = counted(env, url);
  const raw = env as unknown as Record<string, D1Database>;
  const out: Record<string, number> = {};
  // `all`: every row, tombstones and rows a move left behind too (what the database stores).
  const where = url.searchParams.get("all") ? "origin = ?1" : "origin = ?1 AND deleted = 0";
  for (const b of bindings) {
    out[b] = (await raw[b]!.prepare(`SELECT count(*) AS n FROM urls WHERE ${where}`).bind(origin).first<{ n: number }>())!.n;
  }
  return json(out);
}

export async function partitionRoute(env: Env, ctx: ExecutionContext, url: URL, counting: Counting): Promise<Response | null> {
  countingD1 = counting;
  switch (url.pathname) {
    case "/__bench/p/seed":
      return seed(env, url);
    case "/__bench/p/regen":
      return regen(env, ctx, url);
    case "/__bench/p/touch":
      return touch(env, url);
    case "/__bench/p/rebalance":
      return rebalance(env, url);
    case "/__bench/p/rows":
      return rows(env, url);
    default:
      return null;
  }
}
