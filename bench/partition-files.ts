/**
 * Seeds a site over several D1 databases by building their SQLite files directly (issue 37 allows
 * it; the Worker then reads them through D1): the 100M run would take ~2 hours through the Worker's
 * batches (16,000 records/s at 10M). Every row is what `/__bench/p/seed` would have written: the
 * demo data set in MIX order, validated by the Worker's own code, in its home partition
 * (partitionOf), its ext JSON and element size, `updated_at` = stamp + its position.
 *
 * How: the databases are created and migrated by a first harness, each marked with a table named
 * after its binding; then two worker threads validate chunks of 50,000 records while this thread
 * appends them (ids in order, so every table insert is an append), with the `urls` indexes dropped
 * during the load and built afterwards by the threads (a sort instead of 100M random B-tree
 * inserts). `ids` are the record's position + 1 across the site (gaps inside one database are
 * what AUTOINCREMENT leaves anyway; sqlite_sequence follows the largest id).
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { Worker } from "node:worker_threads";
import { sqliteFiles } from "./lib.ts";
import type { Chunk, ChunkRows, IndexJob } from "./partition-files-worker.ts";
import { MIX } from "./workerd.ts";

const CHUNK = 50_000;
const THREADS = 2;
/** Chunks validated ahead of the writer per thread (memory: ~25 MB a chunk in flight). */
const AHEAD = 3;
export const MARKER = "bench_binding_";

/** The SQLite file of each binding, found by the marker table the first harness created in it. */
export function filesByBinding(stateDir: string, bindings: readonly string[]): string[] {
  const found = new Map<string, string>();
  for (const file of sqliteFiles(stateDir)) {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      for (const { name } of db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE '${MARKER}%'`).all() as { name: string }[])
        found.set(name.slice(MARKER.length), file);
    } catch {
      // not a D1 file
    } finally {
      db.close();
    }
  }
  return bindings.map((b) => {
    const file = found.get(b);
    if (!file) throw new Error(`no D1 file marked for ${b} under ${stateDir}`);
    return file;
  });
}

export interface Built {
  ms: number;
  loadMs: number;
  indexMs: number;
  perDatabase: number[];
}

export async function buildPartitionFiles(
  files: readonly string[],
  origin: string,
  total: number,
  stamp: number,
  log: (line: string) => void,
): Promise<Built> {
  const started = performance.now();
  const dbs = files.map((file) => new DatabaseSync(file));
  const indexSql: string[][] = [];
  const inserts: StatementSync[] = [];
  for (const db of dbs) {
    db.exec("PRAGMA synchronous = OFF; PRAGMA cache_size = -262144");
    for (const { name } of db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE '${MARKER}%'`).all() as { name: string }[])
      db.exec(`DROP TABLE ${name}`);
    const indexes = db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'urls' AND sql IS NOT NULL").all() as {
      name: string;
      sql: string;
    }[];
    for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
    indexSql.push(indexes.map((i) => i.sql));
    inserts.push(
      db.prepare(
        `INSERT INTO urls (id, origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at) VALUES (?, '${origin.replaceAll("'", "''")}', ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
    );
  }

  const chunks: Omit<Chunk, "kind" | "index">[] = [];
  let global = 0;
  for (const { section, share } of MIX) {
    const count = Math.round(total * share);
    for (let start = 0; start < count; start += CHUNK)
      chunks.push({ origin, section, start, global: global + start, count: Math.min(CHUNK, count - start), partitions: files.length });
    global += count;
  }

  const threads = Array.from({ length: THREADS }, () => new Worker(new URL("./partition-files-worker.ts", import.meta.url)));
  const done = new Map<number, ChunkRows>();
  let wake: (() => void) | null = null;
  let next = 0;
  const send = (t: Worker) => {
    if (next < chunks.length) t.postMessage({ kind: "chunk", index: next, ...chunks[next++]! } satisfies Chunk);
  };
  const failed: Error[] = [];
  for (const t of threads) {
    t.on("message", (m: { kind: string; index: number; rows: ChunkRows }) => {
      if (m.kind !== "chunk") return;
      done.set(m.index, m.rows);
      send(t);
      wake?.();
    });
    t.on("error", (err: Error) => {
      failed.push(err);
      wake?.();
    });
    for (let i = 0; i < AHEAD; i++) send(t);
  }
  const perDatabase = files.map(() => 0);
  try {
    for (let index = 0; index < chunks.length; index++) {
      while (!done.has(index)) {
        if (failed.length > 0) throw failed[0];
        await new Promise<void>((resolve) => (wake = resolve));
      }
      const rows = done.get(index)!;
      done.delete(index);
      const updatedBase = stamp - 1; // updated_at = stamp + position = stamp - 1 + id
      for (const [p, flat] of rows.entries()) {
        const db = dbs[p]!;
        const insert = inserts[p]!;
        db.exec("BEGIN");
        for (let i = 0; i < flat.length; i += 8) {
          insert.run(
            flat[i]!,
            flat[i + 1]!,
            flat[i + 2]!,
            flat[i + 3]!,
            flat[i + 4]!,
            flat[i + 5]!,
            flat[i + 6]!,
            flat[i + 7]!,
            updatedBase + (flat[i] as number),
          );
        }
        db.exec("COMMIT");
        perDatabase[p]! += flat.length / 8;
      }
      if (index % 100 === 99) log(`${(((index + 1) * CHUNK) / 1e6).toFixed(1)}M records loaded, ${Math.round((performance.now() - started) / 1000)} s`);
    }
    for (const db of dbs) db.close();
    const loadMs = performance.now() - started;

    // Indexes: one database at a time per thread, each thread on its own files.
    const queue = files.map((file, p): IndexJob => ({ kind: "index", file, statements: indexSql[p]! }));
    await Promise.all(
      threads.map(
        (t) =>
          new Promise<void>((resolve, reject) => {
            const take = () => {
              const job = queue.shift();
              if (!job) return resolve();
              t.postMessage(job);
            };
            t.on("message", (m: { kind: string; file: string }) => {
              if (m.kind !== "index") return;
              log(`indexes built: ${m.file.slice(-24)}, ${Math.round((performance.now() - started) / 1000)} s`);
              take();
            });
            t.once("error", reject);
            take();
          }),
      ),
    );
    return { ms: performance.now() - started, loadMs, indexMs: performance.now() - started - loadMs, perDatabase };
  } finally {
    await Promise.all(threads.map((t) => t.terminate()));
  }
}
