/**
 * The KV record source (URL_SOURCE=kv, MANIFEST_STORE=kv: no D1 for records or manifests) at the
 * large scales (`npm run bench -- --only kv-scale --scale 10m`; not in CI): the path docs/capacity.md
 * gives a site bigger than one D1 database.
 *
 * Seeding writes the layout of docs/kv.md (bench/kv-layout.ts: blocks and overflow values, from
 * src/adapters/kv/bulk.ts) straight into local KV through Miniflare: what `wrangler kv bulk put` of
 * kvBulkEntries() would hold, streamed. Then the real Worker: manifest walk, cold shard, index, the
 * cron's first pass, snapshot serve, the writer object's adoption of the layout, 1,000 scattered
 * changes in one batch through it, the cron until quiet. KV operations are counted by the bench
 * Worker's counting KV wrapper (a bulk get is one operation; the keys it reads are counted apart);
 * the writer object's own KV writes (its projection) and its RPCs are not in those counts.
 */
import type { Miniflare } from "miniflare";
import { BLOCK_SPAN } from "../src/adapters/kv/layout.ts";
import { type Harness, peaksText, startHarness, withPeaks } from "./harness.ts";
import { kvLayout } from "./kv-layout.ts";
import { type BenchOptions, type Section, heapCapText, int, median, mib, ms, now } from "./lib.ts";
import { limitsContext } from "./limits.ts";
import { type Quiet, untilQuiet } from "./regen-runs.ts";
import { type Count, GZIP, MIX, NO_EDGE_CACHE, SHARD, sourceOf, spread, timedSource, uncached } from "./workerd.ts";

const VARS = { URL_SOURCE: "kv", MANIFEST_STORE: "kv", INDEXNOW_ENDPOINT: "", PING_URLS: "" };
/** Puts in flight while seeding. */
const PUTS_IN_FLIGHT = 8;

interface KvCount {
  kvOps: Record<string, number>;
  kvBulkKeys: number;
}

const opsOf = (c: KvCount): number => Object.values(c.kvOps).reduce((n, v) => n + v, 0);
const opsText = (c: KvCount): string =>
  `${int(opsOf(c))} KV operations (${Object.entries(c.kvOps)
    .map(([op, n]) => `${op} ${int(n)}`)
    .join(", ")}; ${int(c.kvBulkKeys)} keys in bulk gets)`;

interface Seeded {
  values: number;
  bytes: number;
  blockBytes: number;
  overflowBytes: number;
}

/** Writes the KV layout of `total` demo records (the MIX) into the harness's URLS namespace. */
async function seedKv(mf: Miniflare, origin: string, total: number): Promise<Seeded> {
  const kv = await mf.getKVNamespace("URLS");
  const out: Seeded = { values: 0, bytes: 0, blockBytes: 0, overflowBytes: 0 };
  const inFlight = new Set<Promise<void>>();
  const stamp = Date.now() - 30 * 86_400_000;
  const sections = MIX.map(({ section, share }) => ({ section, count: Math.round(total * share) }));
  for (const { kind, key: name, value, metadata } of kvLayout(origin, sections, (key) => stamp + key)) {
    while (inFlight.size >= PUTS_IN_FLIGHT) await Promise.race(inFlight);
    const p = kv.put(name, value, metadata ? { metadata } : {}).then(() => {
      inFlight.delete(p);
    });
    inFlight.add(p);
    const bytes = Buffer.byteLength(value);
    out.values++;
    out.bytes += bytes;
    if (kind === "block") out.blockBytes += bytes;
    else if (kind === "overflow") out.overflowBytes += bytes;
  }
  await Promise.all(inFlight);
  return out;
}

export async function kvScaleBench(options: BenchOptions): Promise<Section> {
  const rows: Section["rows"] = [];
  for (const total of options.scales) {
    limitsContext("kv-scale", total);
    const h = await startHarness(VARS, options);
    const at = `${int(total)} records`;
    try {
      console.error(`[kv-scale] ${at}: seed`);
      const t0 = now();
      const seeded = await seedKv(h.mf as Miniflare, h.origin, total);
      const seedMs = now() - t0;
      rows.push({
        name: `${at}: seed (layout built in Node, ${PUTS_IN_FLIGHT} puts in flight through Miniflare)`,
        value: ms(seedMs),
        detail: `${int(seeded.values)} KV values, ${mib(seeded.bytes)} (${int(total / (seedMs / 1000))} records/s)`,
      });
      rows.push({
        name: `${at}: KV value bytes per record`,
        value: `${int(seeded.bytes / total)} B`,
        detail: `blocks ${int(seeded.blockBytes / total)} B (${int(Math.ceil(total / BLOCK_SPAN))}+ blocks), overflow ${int(seeded.overflowBytes / total)} B (the loc index is in the writer object's SQLite)`,
      });

      await measureServing(h, total, options, rows);
    } catch (err) {
      // A step that breaks at this scale is a finding: its error is a row, and the rows before it stay.
      rows.push({ name: `${at}: failed`, value: "error", detail: String((err as Error)?.message ?? err).slice(0, 600) });
    } finally {
      await h.dispose();
    }
  }
  return {
    title: "KV record source at scale (URL_SOURCE=kv, MANIFEST_STORE=kv)",
    note: `Fresh workerd and KV per scale (KV in a second workerd process unless --storage same); the demo MIX (80% products, 10% pages, 10% blog). KV operations: calls on the URLS and SNAPSHOTS bindings by the measured request or run (a bulk get of up to 100 keys is one).${heapCapText(options)}`,
    rows,
  };
}

/** Everything after the seed: manifest walk, live shard, index, the cron's first pass, snapshots, 1,000 changes. */
async function measureServing(h: Harness, total: number, options: BenchOptions, rows: Section["rows"]): Promise<void> {
  const at = `${int(total)} records`;
  const step = (what: string): void => console.error(`[kv-scale] ${at}: ${what}`);
  step("manifest walk");
  const t1 = now();
  const walk = await withPeaks(h, () => h.bench<KvCount & { shards: number; urls: number }>("rebuild", { origin: h.origin, store: "configured" }));
  const rebuilt = walk.value;
  rows.push({
    name: `${at}: full manifest walk (rebuildManifest over the blocks)`,
    value: ms(now() - t1),
    detail: `${rebuilt.shards} shards, ${int(rebuilt.urls)} URLs; ${opsText(rebuilt)}; ${peaksText(walk)}`,
  });

  // The same walk again: memory that a walk keeps grows again; a heap that only grew (garbage
  // waiting for a major GC in local workerd, which has no heap limit) does not.
  const again = await withPeaks(h, () => h.bench<KvCount>("rebuild", { origin: h.origin, store: "configured" }));
  rows.push({
    name: `${at}: the same manifest walk again`,
    value: `+${mib(again.worker)}`,
    detail: peaksText(again),
  });

  const first = await h.get(uncached(SHARD), GZIP);
  if (first.status !== 200 || sourceOf(first) !== "live") throw new Error(`GET ${SHARD} → ${first.status} from ${sourceOf(first)}`);
  rows.push({
    name: `${at}: first request after start (cold isolate): shard, live render from KV, gzip`,
    value: ms(first.ms),
    detail: `${mib(first.bytes)} gz`,
  });
  const live = await timedSource(h, options.runs, uncached(SHARD), "live");
  const counted = await h.bench<Count & KvCount>("count", { path: SHARD, vars: NO_EDGE_CACHE }, "GET");
  rows.push({
    name: `${at}: cold live render of a full shard (50,000 URLs) from KV, gzip: wall (median)`,
    value: ms(median(live)),
    detail: `${spread(live)}; ${opsText(counted)}`,
    target: "≤ 400 ms",
    met: median(live) <= 400,
  });
  const index = await timedSource(h, options.runs * 3, uncached("/sitemap.xml"), "live");
  const indexCount = await h.bench<Count & KvCount>("count", { path: "/sitemap.xml", vars: NO_EDGE_CACHE }, "GET");
  rows.push({ name: `${at}: index /sitemap.xml, edge cache off`, value: ms(median(index)), detail: `${spread(index)}; ${opsText(indexCount)}` });

  // The site's writer object adopts the seeded layout on its first call (src/adapters/kv/adopt.ts):
  // one step per KV list page (1,000 blocks), writers told to retry meanwhile.
  step("adoption by the writer object");
  const products = Math.round(total * MIX[0].share);
  const tAdopt = now();
  let tries = 0;
  const adopted = await withPeaks(h, async () => {
    for (;;) {
      tries++;
      try {
        return await h.bench("touch", {
          origin: h.origin,
          section: MIX[0].section,
          start: 3,
          count: 1,
          step: 1,
          lastmod: "2026-11-24",
          store: "configured",
        });
      } catch (err) {
        if (!/adopting/.test(String((err as Error)?.message ?? err)) || tries > 1_000) throw err;
      }
    }
  });
  rows.push({
    name: `${at}: the writer object adopts the seeded KV layout (first write, retried while it adopts)`,
    value: ms(now() - tAdopt),
    detail: `${tries} calls; ${peaksText(adopted)}`,
  });

  step("cron pass");
  const pass: Quiet = await untilQuiet(h);
  rows.push({
    name: `${at}: full regeneration = the cron's first pass under the default REGEN_MAX_SHARDS / REGEN_MAX_ROWS`,
    value: `${pass.runs} run${pass.runs === 1 ? "" : "s"}`,
    detail: `${pass.rendered} shards rendered, ${ms(pass.ms)} of run time; ${int(pass.kvOps)} KV operations (${int(pass.kvOps / Math.max(1, pass.rendered))} per shard; ${int(pass.kvBulkKeys)} keys in bulk gets); at most in one run: ${pass.peaks ? peaksText(pass.peaks) : "no run"}`,
  });

  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const snapshot = await timedSource(h, options.runs * 3, uncached(SHARD), "snapshot");
  rows.push({
    name: `${at}: snapshot serve, edge cache off`,
    value: ms(median(snapshot)),
    detail: spread(snapshot),
    target: "≤ 20 ms",
    met: median(snapshot) <= 20,
  });

  // 1,000 scattered changes through the configured writer (the site's writer object), in one batch:
  // the object looks locs up in its SQLite, so a batch's cost no longer grows with the site.
  step("1,000 changes");
  const perBatch = 1_000;
  const t2 = now();
  const written = await withPeaks(h, async () => {
    for (let batch = 0; batch < 1_000 / perBatch; batch++) {
      await h.bench("touch", {
        origin: h.origin,
        section: MIX[0].section,
        start: 29 + batch * 7,
        count: perBatch,
        step: Math.floor(products / perBatch),
        lastmod: `${new Date().toISOString().slice(0, 19)}Z`,
        store: "configured",
      });
    }
  });
  const writeMs = now() - t2;
  const after = await untilQuiet(h);
  rows.push({
    name: `${at}: 1,000 scattered changes (${1_000 / perBatch} batches of ${perBatch} through the writer object), then cron runs until quiet`,
    value: `${after.rendered} shards`,
    detail: `writes ${ms(writeMs)} (${peaksText(written)}); ${after.runs} run${after.runs === 1 ? "" : "s"}, ${ms(after.ms)}, ${int(after.kvOps)} KV operations (${int(after.kvBulkKeys)} keys in bulk gets)`,
  });
}
