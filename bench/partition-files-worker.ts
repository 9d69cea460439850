/**
 * A worker thread of bench/partition-files.ts: turns chunks of the demo data set into rows (the
 * Worker's own validation, home partition and sizes), or builds one database's indexes. Both are
 * CPU-bound, so two threads keep both cores busy while the main thread writes.
 */
import { DatabaseSync } from "node:sqlite";
import { parentPort } from "node:worker_threads";
import { recordColumns } from "../src/adapters/d1/writer.ts";
import { validateBatch } from "../src/core/validate.ts";
import { demoSection } from "../src/demo/demo-data.ts";
import { partitionOf } from "../src/partitions/home.ts";

export interface Chunk {
  kind: "chunk";
  index: number;
  origin: string;
  section: string;
  /** Position in the section (demoSection's `start`) and in the whole data set (id − 1, stamp offset). */
  start: number;
  global: number;
  count: number;
  partitions: number;
}
export interface IndexJob {
  kind: "index";
  file: string;
  statements: string[];
}
/** Per partition, its rows as flat columns: id, section, loc, lastmod, changefreq, priority, ext, size. */
export type ChunkRows = (string | number | null)[][];

const port = parentPort!;
port.on("message", (job: Chunk | IndexJob) => {
  if (job.kind === "index") {
    const db = new DatabaseSync(job.file);
    db.exec("PRAGMA cache_size = -1048576"); // 1 GiB: the sort of a 12.5M-row index stays in memory
    for (const sql of job.statements) db.exec(sql);
    db.close();
    port.postMessage({ kind: "index", file: job.file });
    return;
  }
  const records = validateBatch(demoSection(job.origin, job.section, job.count, job.start), {
    sites: new Set([job.origin]),
    defaultSection: "pages",
  });
  const rows: ChunkRows = Array.from({ length: job.partitions }, () => []);
  for (const [i, r] of records.entries()) {
    rows[partitionOf(r.loc, job.partitions)]!.push(job.global + i + 1, ...recordColumns(r));
  }
  port.postMessage({ kind: "chunk", index: job.index, rows });
});
