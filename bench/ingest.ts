/**
 * Ingest through the admin API against `wrangler dev` (real workerd, local D1/KV and the KV writer
 * Durable Object; the same server the e2e suite starts): `PUT /sitemap-admin/urls`
 * batches of 100 new records, from one writer and from 10 concurrent writers, with URL_SOURCE=kv
 * (each site's batches run one at a time in its writer object, docs/kv.md "Writers") and with D1
 * beside it. Concurrent writers retry `503` as `Retry-After` says (plus ≤ 250 ms jitter, like the
 * import CLI); the rate counts stored records over the wall time of the whole run, retries included.
 * Every record is checked afterwards through `GET /sitemap-admin/urls?loc=` (a sample per writer).
 */

import { startDevServer } from "../test/e2e/support/dev-server.ts";
import { type WireResponse, send } from "../test/e2e/support/http.ts";
import { type BenchOptions, type Section, int, ms, now } from "./lib.ts";

const TOKEN = "bench-admin-token-0123456789abcdef0123456789";

interface Run {
  records: number;
  ms: number;
  busy: number;
  maxAttempts: number;
}

const sleep = (delay: number) => new Promise((resolve) => setTimeout(resolve, delay));

const header = (res: WireResponse, name: string): string | undefined => {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

async function ingest(port: number, origin: string, writers: number, batchesEach: number, size: number, tag: string): Promise<Run> {
  const headers = { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/x-ndjson" };
  let busy = 0;
  let maxAttempts = 0;
  const started = now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let b = 0; b < batchesEach; b++) {
        const body = Array.from({ length: size }, (_, i) => JSON.stringify({ loc: `${origin}/${tag}/w${w}/b${b}/${i}`, section: tag })).join("\n");
        for (let attempt = 1; ; attempt++) {
          const res = await send(port, { method: "PUT", path: "/sitemap-admin/urls", headers, body, timeoutMs: 120_000 });
          if (res.status === 200) {
            maxAttempts = Math.max(maxAttempts, attempt);
            break;
          }
          if (res.status !== 503 || attempt >= 30)
            throw new Error(`PUT answered ${res.status} after ${attempt} attempts: ${res.error ?? res.body.toString().slice(0, 300)}`);
          busy++;
          await sleep(Number(header(res, "retry-after") ?? 1) * 1000 + Math.random() * 250);
        }
      }
    }),
  );
  const elapsed = now() - started;
  // Every acknowledged record is there: one probe per writer and batch.
  for (let w = 0; w < writers; w++) {
    for (let b = 0; b < batchesEach; b++) {
      const loc = `${origin}/${tag}/w${w}/b${b}/${(w * 7 + b) % size}`;
      const res = await send(port, { path: `/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, headers: { Authorization: `Bearer ${TOKEN}` } });
      if (res.status !== 200) throw new Error(`acknowledged record missing: ${loc} (${res.status})`);
    }
  }
  return { records: writers * batchesEach * size, ms: elapsed, busy, maxAttempts };
}

export async function ingestBench(options: BenchOptions): Promise<Section> {
  const single = options.quick ? 3 : 20;
  const each = options.quick ? 1 : 5;
  const big = options.quick ? 2 : 5;
  const rows: Section["rows"] = [];
  for (const source of ["kv", "d1"] as const) {
    const vars: Record<string, string> = { URL_SOURCE: source, ADMIN_TOKEN: TOKEN };
    if (source === "kv") vars["MANIFEST_STORE"] = "kv";
    const server = await startDevServer({ vars, seed: false });
    try {
      for (const [writers, batches, size] of [
        [1, single, 100],
        [10, each, 100],
        [1, big, 1000],
      ] as const) {
        const run = await ingest(server.port, server.origin, writers, batches, size, `${source}${writers}x${size}`);
        rows.push({
          name: `${source.toUpperCase()}: ${writers} writer${writers > 1 ? "s" : ""}, batches of ${int(size)} new records`,
          value: `${int((run.records / run.ms) * 1000)} records/s`,
          detail: `${int(run.records)} records in ${ms(run.ms)}; ${int(run.records / size)} batches, ${int(run.busy)} answered 503 and retried (max ${run.maxAttempts} attempts for one batch)`,
        });
      }
    } finally {
      await server.stop();
    }
  }
  return {
    title: "Ingest through the admin API: 1 and 10 concurrent writers, KV and D1 (wrangler dev, local)",
    note: `\`PUT /sitemap-admin/urls\`, NDJSON batches of new records on one site, a fresh \`wrangler dev\` per source; concurrent writers retry 503 per Retry-After (+ ≤ 250 ms jitter). Wall time includes retries; every acknowledged batch is probed afterwards.`,
    rows,
  };
}
