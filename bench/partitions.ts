/**
 * One site over several D1 databases (docs/capacity.md "Partitions"), measured in workerd
 * (`npm run bench -- --only partitions --scale 1m`; not in CI): three databases seeded (each record
 * straight into its home database), then the index, a cold shard of each partition, the first
 * full regeneration partition by partition, 10,000 scattered changes (--changes) and the incremental run after
 * them, storage per partition, and a fourth database filled by a move.
 *
 * Per partition figures are what a partition's own job costs; with partitions running in parallel
 * (one job each) a site's wall time is the slowest partition's, not the sum.
 *
 * Every regeneration run, write batch, move or purge step and request is one invocation under the
 * enforcing meter (bench/limits.ts prints the largest per path). A step the meter stops is recorded
 * and run again, as the queue retries a job that threw (the move and the purge resume where their
 * last page was saved).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { PIN_GRACE_MS } from "../src/partitions/pinned.ts";
import { type Harness, startHarness } from "./harness.ts";
import { type BenchOptions, type Row, type Section, int, median, ms, now, sqliteFiles } from "./lib.ts";
import { type InvocationUsage, limitsContext } from "./limits.ts";
import { MARKER, buildPartitionFiles, filesByBinding } from "./partition-files.ts";
import { type Count, GZIP, MIX, sourceOf } from "./workerd.ts";

/** Up to 10M: three databases, then a fourth filled by a move. Above: eight (12.5M records, ~5 GB each at 100M), no move (measured at 10M). */
const FILES_ABOVE = 10_000_000;
const databases = (total: number): string[] => ["DB", ...Array.from({ length: total > FILES_ABOVE ? 7 : 2 }, (_, i) => `P_${i + 2}`)];
const NEW_AT = (count: number) => `P_${count + 1}`;
const SEED_BATCH = 50_000;
const SHARD_SPAN = 1_000_000;

interface Regen {
  summary: {
    converged: boolean;
    rowsRead: number;
    shardsRendered: number;
    shardsSpliced: number;
    blocksRendered: number;
    pendingShards: number;
    passPending: boolean;
    mode: string;
  };
  rowsRead: number;
  rowsWritten: number;
  queries: number;
}

/** A rebalance step's answer (a move's or a purge's). */
interface Step {
  state: string;
  rowsRead: number;
  rowsWritten: number;
  removed: number;
  queries: number;
  usage: InvocationUsage;
}

/** A step the meter stopped (InvocationLimitError): null, the harness has recorded it; any other failure throws. */
async function unlessStopped<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (err) {
    if (/InvocationLimitError|Too many API requests by single worker invocation/.test(String((err as Error)?.message ?? err))) return null;
    throw err;
  }
}

/** Rebalance steps until `done`: the queue runs a stopped step again (its retry), resuming at the saved cursor. */
async function rebalanceUntil(
  h: Harness,
  params: Record<string, string | number>,
  done: (state: string) => boolean,
  before?: (step: number) => Promise<void>,
) {
  let steps = 0;
  let stopped = 0;
  let read = 0;
  let written = 0;
  let removed = 0;
  let largest = 0;
  for (;;) {
    await before?.(steps);
    const step = await unlessStopped(h.bench<Step>("p/rebalance", params));
    steps++;
    if (step === null) stopped++;
    else {
      read += step.rowsRead;
      written += step.rowsWritten;
      removed += step.removed;
      largest = Math.max(largest, step.usage.d1Queries);
    }
    if ((step && done(step.state)) || steps > 500) break;
  }
  const stops = stopped === 0 ? "" : `, ${stopped} of them stopped by the meter (InvocationLimitError) and run again`;
  return { steps, stopped, read, written, removed, largest, stops };
}

/** Bytes of each local D1 file holding the site's records, by its live row count. */
function storageByRows(dir: string, origin: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const file of sqliteFiles(dir)) {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const has = db.prepare("SELECT name FROM sqlite_schema WHERE name = 'urls'").get();
      if (!has) continue;
      const { n } = db.prepare("SELECT count(*) AS n FROM urls WHERE origin = ? AND deleted = 0").get(origin) as { n: number };
      const { page_count } = db.prepare("PRAGMA page_count").get() as { page_count: number };
      const { page_size } = db.prepare("PRAGMA page_size").get() as { page_size: number };
      if (n > 0) out.set(n, page_count * page_size);
    } catch {
      // not a D1 file
    } finally {
      db.close();
    }
  }
  return out;
}

/** Runs one partition's regeneration until it converged: invocations, rows, the largest invocation's statements, wall time. */
async function untilConverged(h: Harness, sd: string, partition: number, full = false) {
  let runs = 0;
  let rows = 0;
  let written = 0;
  let maxQueries = 0;
  let stopped = 0;
  const shapes = { rendered: 0, spliced: 0, blocks: 0 };
  const started = now();
  for (;;) {
    const r = await unlessStopped(h.bench<Regen>("p/regen", { sd, partition, ...(full && runs === 0 ? { full: 1 } : {}) }));
    runs++;
    if (r === null) stopped++;
    else {
      rows += r.rowsRead;
      written += r.rowsWritten;
      maxQueries = Math.max(maxQueries, r.queries);
      shapes.rendered += r.summary.shardsRendered;
      shapes.spliced += r.summary.shardsSpliced;
      shapes.blocks += r.summary.blocksRendered;
    }
    if (r?.summary.converged || runs >= 200) break;
  }
  const stops = stopped === 0 ? "" : `; ${stopped} stopped by the meter (InvocationLimitError) and run again`;
  return { runs, rows, written, maxQueries, ms: now() - started, stops, shapes };
}

export async function partitionsBench(options: BenchOptions): Promise<Section> {
  const total = options.scales[options.scales.length - 1]!;
  const OLD = databases(total);
  const NEW = NEW_AT(OLD.length);
  const move = total <= FILES_ABOVE;
  limitsContext("partitions", total);
  const rows: Row[] = [];
  const add = (name: string, value: string, detail = "") => rows.push({ name, value, detail });
  const vars = { INDEXNOW_ENDPOINT: "", PING_URLS: "" };
  const log = (line: string) => console.error(`[partitions] ${line}`);
  let h: Harness;
  let t = now();
  let stamp = Date.now() - 30 * 86_400_000;
  if (move) h = await startHarness(vars, options, [...OLD.slice(1), NEW]);
  else {
    // Databases created and migrated by one harness, their files built here, read by the next one.
    const first = await startHarness(vars, options, OLD.slice(1), { keep: true });
    for (const b of OLD) await (await first.mf.getD1Database(b)).exec(`CREATE TABLE ${MARKER}${b} (x)`);
    const dir = first.dir;
    await first.dispose();
    try {
      const built = await buildPartitionFiles(filesByBinding(join(dir, "state"), OLD), first.origin, total, stamp, log);
      add(
        "seed (SQLite files built directly: two threads validate, one appends, indexes built after)",
        ms(built.ms),
        `${int(total)} records, ${int(total / (built.ms / 1000))}/s (load ${ms(built.loadMs)}, indexes ${ms(built.indexMs)}); per database ${built.perDatabase.map(int).join(" / ")}`,
      );
      h = await startHarness(vars, options, OLD.slice(1), { reopen: dir });
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }
  try {
    const sdOld = `${h.origin}=${OLD.join(",")}`;
    const sdNew = `${h.origin}=${[...OLD, NEW].join(",")}`;
    const as = (path: string, sd: string) =>
      `/__bench/as?path=${encodeURIComponent(path)}&vars=${encodeURIComponent(JSON.stringify({ SITE_DATABASES: sd, EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" }))}`;

    if (move) {
      for (const { section, share } of MIX) {
        const count = Math.round(total * share);
        for (let start = 0; start < count; start += SEED_BATCH) {
          const n = Math.min(SEED_BATCH, count - start);
          await h.bench("p/seed", { sd: sdOld, section, start, count: n, stamp });
          stamp += n;
        }
      }
      const seedMs = now() - t;
      const perDb = await h.bench<Record<string, number>>("p/rows", { sd: sdOld });
      add(
        "seed (each record into its home database, D1 batches)",
        `${ms(seedMs)}`,
        `${int(total)} records, ${int(total / (seedMs / 1000))}/s; per database ${Object.values(perDb).map(int).join(" / ")}`,
      );
    }
    // The first requests after the bulk load: no manifest yet. A request builds one only within
    // MANIFEST_REQUEST_ROWS key rows (shared by the partitions); past that it answers 503 with
    // Retry-After and asks each partition's regeneration (queued; the bench runs it below).
    log("first requests");
    const noCache = (sd: string) => JSON.stringify({ SITE_DATABASES: sd, EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" });
    const counted = (path: string, sd: string, label: string) =>
      h.bench<Count & { retryAfter: string | null; usage: InvocationUsage }>("count", { path, vars: noCache(sd) }, "GET", label);
    const usageText = (u: InvocationUsage) => `${int(u.d1Queries)} D1 queries, ${int(u.kvOperations)} KV operations, ${int(u.subrequests)} subrequests`;
    t = now();
    const first = await counted("/sitemap.xml", sdOld, "first request after the bulk load: the index (no manifest yet)");
    add(
      "index, first request after the bulk load (no manifest: built within MANIFEST_REQUEST_ROWS, else 503 and each partition's regeneration asked)",
      ms(now() - t),
      `status ${first.status}${first.retryAfter ? `, Retry-After ${first.retryAfter}` : ""}; ${usageText(first.usage)}`,
    );
    const firstShards: string[] = [];
    for (const [p] of OLD.entries()) {
      const r = await counted(`/sitemap-products-${p * SHARD_SPAN + 1}.xml`, sdOld, "first request after the bulk load: a shard (no manifest yet)");
      firstShards.push(`partition ${p}: status ${r.status}, ${ms(r.ms)}, ${int(r.usage.d1Queries)} D1 queries`);
    }
    add("a shard of each partition, first request after the bulk load", "", firstShards.join("; "));

    t = now();
    let slowest = 0;
    for (const [p] of OLD.entries()) {
      log(`first full regeneration, partition ${p}`);
      const r = await untilConverged(h, sdOld, p);
      slowest = Math.max(slowest, r.ms);
      add(
        `first full regeneration, partition ${p}`,
        ms(r.ms),
        `${r.runs} invocations, ${int(r.rows)} rows read, largest invocation ${int(r.maxQueries)} statements${r.stops}`,
      );
    }
    add("first full regeneration, the site", `${ms(now() - t)} one after the other`, `${ms(slowest)} with one job per partition (the slowest)`);

    log("index");
    const idx: number[] = [];
    for (let i = 0; i < options.runs; i++) idx.push((await h.get(as("/sitemap.xml", sdOld), GZIP)).ms);
    add(`index, manifests stored (${OLD.length} partitions' manifests read and merged)`, ms(median(idx)), `${options.runs} runs`);
    const indexUsage = await counted("/sitemap.xml", sdOld, "request: the index, manifests stored");
    add("index, manifests stored: one request", `status ${indexUsage.status}`, usageText(indexUsage.usage));

    for (const [p] of OLD.entries()) {
      const path = `/sitemap-products-${p * SHARD_SPAN + 1}.xml`;
      const times: number[] = [];
      const sources = new Set<string>();
      for (let i = 0; i < options.runs; i++) {
        const r = await h.get(as(path, sdOld), GZIP);
        times.push(r.ms);
        sources.add(`${r.status} ${sourceOf(r)}`);
      }
      add(`a shard of partition ${p} (50,000 URLs) after its first regeneration`, ms(median(times)), `${options.runs} runs; ${[...sources].join(", ")}`);
    }

    // 10,000 scattered changes in two batches of 5,000 (ADMIN_MAX_RECORDS's default; at most 7,000
    // since a batch of 10,000 was stopped by the meter at 1,305 D1 queries).
    type Touched = { updated: number; rowsRead: number; rowsWritten: number; usage: InvocationUsage };
    // --changes fewer than 10,000 keeps 100M's density (changes a shard) on a smaller site: total ÷ 10,000.
    const changes = options.changes;
    const half = Math.ceil(changes / 2);
    const stride = Math.floor((total * 0.8) / changes);
    const halves: Touched[] = [];
    for (const start of [0, half]) {
      // The records start + i·stride: the changed records scattered over the products section.
      halves.push(await h.bench<Touched>("p/touch", { sd: sdOld, section: "products", count: Math.min(half, changes - start), stride, offset: start }));
    }
    add(
      `${int(changes)} scattered changes (${(changes / Math.ceil((total * 0.8) / 50_000)).toFixed(2)} a products shard): two batches through the site`,
      `${int(halves.reduce((n, x) => n + x.updated, 0))} updated`,
      `${int(halves.reduce((n, x) => n + x.rowsRead, 0))} rows read, ${int(halves.reduce((n, x) => n + x.rowsWritten, 0))} written; the larger batch ${usageText(halves[0]!.usage.d1Queries >= halves[1]!.usage.d1Queries ? halves[0]!.usage : halves[1]!.usage)}`,
    );
    let incRows = 0;
    for (const [p] of OLD.entries()) {
      log(`incremental run, partition ${p}`);
      const r = await untilConverged(h, sdOld, p);
      incRows += r.rows;
      add(
        `incremental run after them, partition ${p}`,
        ms(r.ms),
        `${r.runs} invocations, ${int(r.rows)} rows read, ${int(r.written)} written, largest ${int(r.maxQueries)} statements; ${int(r.shapes.spliced)} shards spliced (${int(r.shapes.blocks)} blocks rendered), ${int(r.shapes.rendered - r.shapes.spliced)} rendered whole${r.stops}`,
      );
    }
    add(
      "incremental, rows read per change",
      (incRows / changes).toFixed(1),
      `every run's rows read (change feed, manifest, the changed blocks' rows) ÷ ${int(changes)}`,
    );

    const sizes = storageByRows(join(h.dir, "state"), h.origin);
    for (const [n, bytes] of [...sizes].sort((a, b) => b[0] - a[0]))
      add(`storage of a partition of ${int(n)} records`, `${(bytes / 1e6).toFixed(1)} MB`, `${Math.round(bytes / n)} B per record`);

    if (move) {
      // Writes go on during the move (docs/capacity.md "Writes during a move"): a batch of 100
      // scattered records (about a quarter of them moving) before every step, timed against the
      // same batches before the move.
      const WRITES = 100;
      const writeStride = Math.floor((total * 0.8) / WRITES);
      const write = async (i: number, sd: string): Promise<number> => {
        const t0 = now();
        const done = await h.bench<{ updated: number; inserted: number }>("p/touch", {
          sd,
          section: "products",
          count: WRITES,
          stride: writeStride,
          offset: 0,
          lastmod: new Date(Date.UTC(2026, 10, 26, 0, 0, i)).toISOString(),
        });
        if (done.updated + done.inserted !== WRITES) throw new Error(`a write batch during the move changed ${done.updated} of ${WRITES}`);
        return now() - t0;
      };
      const quiet: number[] = [];
      for (let i = 0; i < 10; i++) quiet.push(await write(i, sdOld));
      log("move");
      const during: number[] = [];
      t = now();
      const moved = await rebalanceUntil(
        h,
        { sd: sdNew, maxRows: 50_000 },
        (state) => state === "flipped",
        async (step) => {
          if (step > 0) during.push(await write(100 + step, sdNew));
        },
      );
      const moveMs = now() - t - during.reduce((a, b) => a + b, 0);
      const sorted = [...during].sort((a, b) => a - b);
      add(
        `writes during the move: a batch of ${WRITES} scattered records before every step (~1/${OLD.length + 1} moving, forwarded)`,
        `${ms(median(during))} median`,
        `${during.length} batches, every one 200 with all ${WRITES} changed; slowest ${ms(sorted.at(-1) ?? 0)}; the same batches before the move ${ms(median(quiet))} median (${(median(during) / median(quiet)).toFixed(2)}×)`,
      );
      const live = await h.bench<Record<string, number>>("p/rows", { sd: sdNew });
      add(
        `adding database ${OLD.length + 1}: the move (copy + manifest build + flip), rebalance jobs`,
        ms(moveMs),
        `${moved.steps} steps${moved.stops}, ${int(moved.read)} rows read, ${int(moved.written)} written, the largest step that completed ${int(moved.largest)} D1 queries; live rows now ${Object.values(live).map(int).join(" / ")} (the old ones keep the moved rows hidden)`,
      );
      // Between the flip and the site passes every partition's shards render live (the flip dropped their snapshots).
      for (let p = 0; p <= OLD.length; p++) {
        const path = `/sitemap-products-${p * SHARD_SPAN + 1}.xml`;
        const times: number[] = [];
        const sources = new Set<string>();
        for (let i = 0; i < options.runs; i++) {
          const r = await h.get(as(path, sdNew), GZIP);
          times.push(r.ms);
          sources.add(`${r.status} ${sourceOf(r)}`);
        }
        const one = await counted(path, sdNew, "request: a shard, live render (after the flip)");
        add(
          `after the flip, a cold shard of partition ${p} (live render: the flip dropped the snapshots)`,
          ms(median(times)),
          `${options.runs} runs; ${[...sources].join(", ")}; ${int(one.bytes)} B; ${usageText(one.usage)}`,
        );
      }
      // Then what the rebalance job asks for: a site pass of every partition (one regeneration job each).
      t = now();
      let passRows = 0;
      for (let p = 0; p <= OLD.length; p++) passRows += (await untilConverged(h, sdNew, p, true)).rows;
      add("after the flip: a site pass of every partition", ms(now() - t), `${int(passRows)} rows read`);
      const after = await h.get(as("/sitemap.xml", sdNew), GZIP);
      add("index after the move", `status ${after.status}`, "");

      // A day later the same job removes the rows the move left in the old databases (src/partitions/purge.ts).
      log("purge");
      const later = Date.now() + PIN_GRACE_MS + 60_000;
      t = now();
      const purge = await rebalanceUntil(h, { sd: sdNew, maxRows: 50_000, now: later }, (state) => state === "purged");
      const purgeMs = now() - t;
      const left = await h.bench<Record<string, number>>("p/rows", { sd: sdNew, all: 1 });
      add(
        "a day later: the rows left behind removed (purge steps of the rebalance job)",
        ms(purgeMs),
        `${purge.steps} steps (the largest that completed ${purge.largest} D1 queries)${purge.stops}, ${int(purge.read)} rows read, ${int(purge.removed)} removed (${int(purge.written)} rows written as D1 counts them); rows per database now ${Object.values(left).map(int).join(" / ")}`,
      );
    }
  } finally {
    await h.dispose();
  }
  return {
    title: `Partitions: one site over ${OLD.length} D1 databases${move ? `, then ${OLD.length + 1}` : ""} (${int(total)} records)`,
    note: "workerd, local D1 (one SQLite file per database); partitions measured one after the other on a shared 2-core machine",
    rows,
  };
}
