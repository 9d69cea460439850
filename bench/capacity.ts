/**
 * Capacity, measured: bytes per record of the `urls` table and its indexes in the D1 database file
 * (SQLite's `dbstat`, read from the file local D1 wrote after the bench seed), and bytes per record
 * of the KV layout (blocks and overflow values, built by src/adapters/kv/bulk.ts from the same demo
 * records; the loc index lives in each site's writer object, not in KV). docs/capacity.md turns these into URLs per database and a plan table.
 */
import { statSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { BLOCK_SPAN } from "../src/adapters/kv/layout.ts";
import { startHarness } from "./harness.ts";
import { kvLayout } from "./kv-layout.ts";
import { BENCH_ORIGIN, type BenchOptions, type Row, type Section, int, sqliteFiles } from "./lib.ts";
import { seed } from "./workerd.ts";

/** D1's maximum database size (developers.cloudflare.com/d1/platform/limits/: 10 GB, paid plan). */
const D1_MAX_BYTES = 10 * 10 ** 9;

/** Pages of `urls` and every index on it, from dbstat, in the largest SQLite file under `dir` (the D1 database). */
function d1Bytes(dir: string): { file: number; byName: Map<string, number> } {
  const files = sqliteFiles(dir).sort((a, b) => statSync(b).size - statSync(a).size);
  const db = new DatabaseSync(files[0]!, { readOnly: true });
  try {
    const names = new Set((db.prepare("SELECT name FROM sqlite_schema WHERE tbl_name = 'urls'").all() as { name: string }[]).map((r) => r.name));
    const byName = new Map<string, number>();
    for (const r of db.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all() as { name: string; bytes: number }[]) {
      if (names.has(r.name)) byName.set(r.name, r.bytes);
    }
    const { page_count } = db.prepare("PRAGMA page_count").get() as { page_count: number };
    const { page_size } = db.prepare("PRAGMA page_size").get() as { page_size: number };
    return { file: page_count * page_size, byName };
  } finally {
    db.close();
  }
}

/** KV value bytes per record: blocks (with their overflow values), as bench/kv-layout.ts builds them. */
function kvBytes(total: number): { block: number; blocks: number } {
  let block = 0;
  let blocks = 0;
  const now = Date.now();
  for (const { kind, value } of kvLayout(BENCH_ORIGIN, [{ section: "products", count: total }], () => now)) {
    if (kind === "block") blocks++;
    block += Buffer.byteLength(value);
  }
  return { block: block / total, blocks };
}

export async function capacityBench(options: BenchOptions): Promise<Section> {
  const rows: Row[] = [];
  for (const total of options.scales) {
    const h = await startHarness({ INDEXNOW_ENDPOINT: "", PING_URLS: "" }, options);
    try {
      await seed(h, total);
      const { file, byName } = d1Bytes(h.dir);
      const table = byName.get("urls") ?? 0;
      const indexes = [...byName].filter(([name]) => name !== "urls");
      const all = table + indexes.reduce((n, [, b]) => n + b, 0);
      const perRecord = all / total;
      rows.push({
        name: `D1, ${int(total)} records: urls table + indexes, bytes per record`,
        value: `${int(perRecord)} B`,
        detail: `table ${int(table / total)} B; ${indexes.map(([n, b]) => `${n} ${int(b / total)} B`).join(", ")}; database file ${int(file / total)} B/record`,
      });
      rows.push({
        name: `D1, ${int(total)} records: URLs per 10 GB database (table + indexes)`,
        value: int(D1_MAX_BYTES / perRecord),
        detail: `by the whole file: ${int(D1_MAX_BYTES / (file / total))}`,
      });
    } finally {
      await h.dispose();
    }
  }
  const kvSample = Math.min(options.scales[0] ?? 100_000, 100_000);
  const kv = kvBytes(kvSample);
  rows.push({
    name: `KV (URL_SOURCE=kv), ${int(kvSample)} demo records: value bytes per record`,
    value: `${int(kv.block)} B`,
    detail: `blocks and overflow values (${kv.blocks} blocks of ${int(BLOCK_SPAN)}); the loc index is in the site's writer object`,
  });
  return {
    title: "Capacity: bytes per record",
    note: "Demo records (the bench mix); D1 from `dbstat` on the local D1 SQLite file after the seed; KV values as src/adapters/kv/layout.ts writes them.",
    rows,
  };
}
