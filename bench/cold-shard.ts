/**
 * `npm run bench -- --only cold-shard`: one full shard (50,000 URLs) rendered live over HTTP in the
 * production-like harness (workerd, D1 in its own storage process, the app's real request path, no
 * snapshot, no edge cache), against its floor: Node's `zlib.gzipSync` at level 6 of the very bytes
 * the Worker served (what any server must at least spend to gzip the document), and against
 * sitemap.js rendering and gzipping the same URLs in memory. Interleaved, so load on the machine
 * hits both sides alike. Worker CPU is the Worker process's (user + system) per request; the
 * floor's CPU is Node's for the `gzipSync` call.
 */
import { gzipSync } from "node:zlib";
import { startHarness } from "./harness.ts";
import { type BenchOptions, type Section, int, median, mib, ms, now } from "./lib.ts";
import { limitsContext } from "./limits.ts";
import { peer, sitemapItemsOfUrlset } from "./renderer.ts";
import { type Count, GZIP, SHARD, seed, sourceOf, uncached } from "./workerd.ts";

/** Records seeded: the first section (80 %) is exactly one full shard. */
const RECORDS = 62_500;

export async function coldShardBench(options: BenchOptions): Promise<Section> {
  limitsContext("cold-shard", RECORDS);
  const h = await startHarness({ INDEXNOW_ENDPOINT: "", PING_URLS: "" }, options);
  try {
    await seed(h, RECORDS);
    await h.bench("rebuild", { origin: h.origin });
    const first = await h.get(uncached(SHARD), GZIP);
    if (first.status !== 200 || sourceOf(first) !== "live") throw new Error(`GET ${SHARD} → ${first.status} from ${sourceOf(first)}`);
    const xml = Buffer.from(await (await fetch(new URL(uncached(SHARD), h.url))).arrayBuffer());
    const items = sitemapItemsOfUrlset(xml.toString("utf8"));
    const floorGz = gzipSync(xml, { level: 6 }).byteLength;
    await peer(items.slice(0, 2_000), true)(); // warm-up

    const live: number[] = [];
    const liveCpu: number[] = [];
    const floor: number[] = [];
    const floorCpu: number[] = [];
    const peers: number[] = [];
    let gzBytes = 0;
    for (let i = 0; i < Math.max(3, options.runs); i++) {
      const cpu0 = h.workerdCpu();
      const r = await h.get(uncached(SHARD), GZIP);
      if (r.status !== 200 || sourceOf(r) !== "live") throw new Error(`GET ${SHARD} → ${r.status} from ${sourceOf(r)}`);
      liveCpu.push(h.workerdCpu() - cpu0);
      live.push(r.ms);
      gzBytes = r.bytes;
      const c0 = process.cpuUsage();
      const t0 = now();
      gzipSync(xml, { level: 6 });
      floor.push(now() - t0);
      const c1 = process.cpuUsage(c0);
      floorCpu.push((c1.user + c1.system) / 1000);
      const t1 = now();
      await peer(items, true)();
      peers.push(now() - t1);
    }
    const counted = await h.bench<Count>("count", { path: SHARD, vars: JSON.stringify({ EDGE_CACHE_TTL: "0" }) }, "GET");
    const ratio = median(live) / median(floor);
    return {
      title: "Cold shard against its floor (production-like harness: workerd, D1 in its own process)",
      note: `One shard of ${int(items.length)} URLs (${mib(xml.byteLength)} XML; ${mib(gzBytes)} served gzip, ${mib(floorGz)} gzipSync level 6), medians of ${live.length} interleaved runs.`,
      rows: [
        { name: "cold shard over HTTP, live render, gzip: wall", value: ms(median(live)), detail: `${ms(Math.min(...live))}–${ms(Math.max(...live))}` },
        { name: "floor: Node zlib.gzipSync level 6 of the same XML bytes: wall", value: ms(median(floor)) },
        { name: "cold shard ÷ floor (wall)", value: `${ratio.toFixed(2)}×`, target: "≤ 3×", met: ratio <= 3 },
        {
          name: "Worker CPU per cold shard (workerd process, user + system) ÷ the floor's CPU",
          value: `${(median(liveCpu) / median(floorCpu)).toFixed(2)}×`,
          detail: `${ms(median(liveCpu))} ÷ ${ms(median(floorCpu))}`,
        },
        {
          name: "cold shard ÷ sitemap.js rendering + gzipping the same URLs in memory",
          value: `${(median(live) / median(peers)).toFixed(2)}×`,
          detail: `sitemap.js ${ms(median(peers))}`,
        },
        { name: "D1 for one cold shard", value: `${counted.queries} queries`, detail: `${int(counted.rowsRead)} rows read` },
      ],
    };
  } finally {
    await h.dispose();
  }
}
