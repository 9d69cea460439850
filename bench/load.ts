/**
 * Bounded load on loopback: autocannon, 32 connections, 20 s (2 s in --quick) per target, against
 * the index and against a cached shard, on the harness of the largest scale.
 */
import autocannon from "autocannon";
import type { Harness } from "./harness.ts";
import { type BenchOptions, type Row, type Section, int, ms } from "./lib.ts";

const CONNECTIONS = 32;

interface LoadResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}

async function hammer(h: Harness, path: string, seconds: number, headers: Record<string, string>): Promise<LoadResult> {
  return (await autocannon({
    url: new URL(path, h.url).href,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
  })) as unknown as LoadResult;
}

function row(name: string, r: LoadResult): Row {
  const failures = r.errors + r.timeouts + r.non2xx;
  return {
    name,
    value: `${int(r.requests.average)} req/s`,
    detail: `p50 ${ms(r.latency.p50)}, p99 ${ms(r.latency.p99)}; ${int(r.requests.total)} requests; errors ${r.errors}, timeouts ${r.timeouts}, non-2xx ${r.non2xx}`,
    target: "0 errors",
    met: failures === 0,
  };
}

export async function loadBench(h: Harness, options: BenchOptions, what: { shard: string; records: number }): Promise<Section> {
  const seconds = options.loadSeconds;
  const gzip = { "accept-encoding": "gzip" };
  const rows: Row[] = [];
  rows.push(row("index /sitemap.xml (gzip)", await hammer(h, "/sitemap.xml", seconds, gzip)));

  // A cached shard needs the Cache API layer: it answers with X-Sitemap-Source.
  await h.get(what.shard, gzip); // warm (fills the cache when there is one)
  const probe = await h.get(what.shard, gzip);
  const source = probe.headers["x-sitemap-source"];
  if (typeof source === "string" && source !== "live") {
    rows.push(row(`cached shard ${what.shard} (gzip, source ${source})`, await hammer(h, what.shard, seconds, gzip)));
  } else {
    // The bench harness always has the Cache API; a live answer here means the layer broke.
    throw new Error(`${what.shard} answered from ${String(source)}, not from the Cache API layer`);
  }
  return {
    title: `Load on loopback (autocannon, ${CONNECTIONS} connections, ${seconds} s per target, ${int(what.records)} records)`,
    note: "autocannon and workerd share the machine's cores; latencies include the client's own CPU time.",
    rows,
  };
}
