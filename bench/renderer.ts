/**
 * Renderer throughput in Node (the pure core), side by side in one process:
 *   ours       records → renderUrlset → CompressionStream("gzip") → bytes
 *   floor      CompressionStream("gzip") over the very same XML chunks, already built
 *   sitemap.js SitemapStream piped into zlib.createGzip(), as its README shows
 * and both renderers without gzip. Cases run interleaved (round robin), so background noise hits
 * all of them alike; the table shows medians and ratios of medians.
 */
import { Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { SitemapStream } from "sitemap";
import { renderUrlset } from "../src/core/render.ts";
import type { ValidRecord } from "../src/core/validate.ts";
import { gzipDocument as gzip } from "../src/documents/gzip.ts";
import { BENCH_ORIGIN, type BenchOptions, type Section, benchRecords, drain, forceGc, int, median, mib, ms, ratio, timed } from "./lib.ts";

type Case = () => Promise<number>;

function ours(records: readonly ValidRecord[], compress: boolean): Case {
  return () => drain(compress ? gzip(renderUrlset(records)) : renderUrlset(records));
}

function floor(chunks: readonly Uint8Array[]): Case {
  return () => {
    let i = 0;
    const source = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (i < chunks.length) controller.enqueue(chunks[i++]!);
          else controller.close();
        },
      },
      { highWaterMark: 1 },
    );
    return drain(gzip(source));
  };
}

/** sitemap.js items, converted once outside the timed part. */
function sitemapItems(records: readonly ValidRecord[]): object[] {
  return records.map((r) => {
    const item: Record<string, unknown> = { url: r.loc };
    if (r.lastmod) item["lastmod"] = r.lastmod;
    if (r.changefreq) item["changefreq"] = r.changefreq;
    if (r.priority !== null && r.priority !== undefined) item["priority"] = r.priority;
    return item;
  });
}

/**
 * sitemap.js items of a served urlset (loc, lastmod, changefreq, priority, image and hreflang
 * links): the same URLs as our output, for comparing against a served shard.
 */
export function sitemapItemsOfUrlset(xml: string): object[] {
  const text = (s: string): string => s.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[e]!);
  const items: object[] = [];
  for (const [, body = ""] of xml.matchAll(/<url>([\s\S]*?)<\/url>/g)) {
    const item: Record<string, unknown> = { url: text(/<loc>([^<]*)<\/loc>/.exec(body)?.[1] ?? "") };
    const lastmod = /<lastmod>([^<]*)<\/lastmod>/.exec(body)?.[1];
    if (lastmod) item["lastmod"] = lastmod;
    const changefreq = /<changefreq>([^<]*)<\/changefreq>/.exec(body)?.[1];
    if (changefreq) item["changefreq"] = changefreq;
    const priority = /<priority>([^<]*)<\/priority>/.exec(body)?.[1];
    if (priority) item["priority"] = Number(priority);
    const images = [...body.matchAll(/<image:loc>([^<]*)<\/image:loc>/g)].map(([, u = ""]) => ({ url: text(u) }));
    if (images.length > 0) item["img"] = images;
    const links = [...body.matchAll(/<xhtml:link rel="alternate" hreflang="([^"]*)" href="([^"]*)"/g)].map(([, lang = "", u = ""]) => ({
      lang,
      url: text(u),
    }));
    if (links.length > 0) item["links"] = links;
    items.push(item);
  }
  return items;
}

/** sitemap.js: SitemapStream piped into zlib gzip (or not), as its README shows; resolves to the bytes out. */
export function peer(items: readonly object[], compress: boolean): Case {
  return () =>
    new Promise<number>((resolve, reject) => {
      const sms = new SitemapStream({ hostname: BENCH_ORIGIN });
      const out = compress ? Readable.from(items).pipe(sms).pipe(createGzip()) : Readable.from(items).pipe(sms);
      let bytes = 0;
      out.on("data", (chunk: Buffer | string) => {
        bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
      });
      out.on("end", () => resolve(bytes));
      out.on("error", reject);
      sms.on("error", reject);
    });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return chunks;
}

export interface RendererResult {
  section: Section;
  medians: Record<string, number>;
}

export async function rendererBench(options: BenchOptions): Promise<RendererResult> {
  const count = options.quick ? 2_000 : 50_000;
  const records = benchRecords(count);
  const chunks = await collect(renderUrlset(records));
  const xmlBytes = chunks.reduce((n, c) => n + c.byteLength, 0);
  const avgLoc = records.reduce((n, r) => n + r.loc.length, 0) / records.length;
  const withAmp = records.filter((r) => r.loc.includes("&")).length;
  const items = sitemapItems(records);

  const cases: Record<string, Case> = {
    floor: floor(chunks),
    ours: ours(records, true),
    oursPlain: ours(records, false),
    peer: peer(items, true),
    peerPlain: peer(items, false),
  };
  // Runs per case: the fast cases are cheap, so more runs steady their medians; sitemap.js with gzip
  // takes seconds per run, so it gets the fewest. Rounds interleave the cases (round robin).
  const runsOf: Record<string, number> = options.quick
    ? { floor: 5, ours: 5, oursPlain: 5, peer: 1, peerPlain: 3 }
    : { floor: 15, ours: 15, oursPlain: 15, peer: 5, peerPlain: 9 };
  const times: Record<string, number[]> = {};
  /** Process CPU time per run (main thread + zlib's threadpool): the work, whatever the scheduling. */
  const cpu: Record<string, number[]> = {};
  const sizes: Record<string, number> = {};
  const warmItems = items.slice(0, 2_000);
  for (const name of Object.keys(cases)) {
    times[name] = [];
    cpu[name] = [];
    // Warm-up (JIT, zlib init); the peers on a small slice, their full runs are long.
    sizes[name] = await (name === "peer" ? peer(warmItems, true) : name === "peerPlain" ? peer(warmItems, false) : cases[name]!)();
  }
  const rounds = Math.max(...Object.values(runsOf));
  for (let round = 0; round < rounds; round++) {
    for (const [name, fn] of Object.entries(cases)) {
      if (round >= runsOf[name]!) continue;
      forceGc();
      const cpu0 = process.cpuUsage();
      const { ms: t, value } = await timed(fn);
      const used = process.cpuUsage(cpu0);
      times[name]!.push(t);
      cpu[name]!.push((used.user + used.system) / 1000);
      sizes[name] = value;
    }
  }
  const m: Record<string, number> = {};
  for (const name of Object.keys(cases)) m[name] = median(times[name]!);

  const oursVsFloor = m["ours"]! / m["floor"]!;
  const peerVsOurs = m["peer"]! / m["ours"]!;
  const peerPlainVsOurs = m["peerPlain"]! / m["oursPlain"]!;
  const runsNote = (name: string): string =>
    `CPU ${ms(median(cpu[name]!))}; ${times[name]!.length} runs: ${times[name]!.map((t) => t.toFixed(0)).join(", ")} ms`;
  const full = count === 50_000;
  return {
    medians: m,
    section: {
      title: `Renderer throughput (Node ${process.version}, ${int(count)} records)`,
      note:
        `${int(count)} validated "products" records (mean loc ${avgLoc.toFixed(0)} chars, ${int(withAmp)} with \`&\`, lastmod/changefreq/priority mixed), ` +
        `${mib(xmlBytes)} of XML. Medians of interleaved runs; each run reads the whole output stream. ` +
        "CPU = process CPU time of a run (main thread + zlib's threads): above the wall time when the two overlap." +
        (full ? "" : " Quick mode: small data set, ratios only indicative."),
      rows: [
        { name: "floor: CompressionStream gzip over the built XML", value: ms(m["floor"]!), detail: `${mib(sizes["floor"]!)} gz; ${runsNote("floor")}` },
        {
          name: "ours: records → renderUrlset → CompressionStream gzip",
          value: ms(m["ours"]!),
          detail: `${ratio(oursVsFloor)} the floor; ${mib(sizes["ours"]!)} gz; ${runsNote("ours")}`,
          target: "≤ 1.2× floor",
          met: full ? oursVsFloor <= 1.2 : undefined,
        },
        { name: "sitemap.js: SitemapStream → zlib gzip", value: ms(m["peer"]!), detail: `${mib(sizes["peer"]!)} gz; ${runsNote("peer")}` },
        {
          name: "ours vs sitemap.js, gzip",
          value: `${ratio(peerVsOurs)} faster`,
          detail: `${ms(m["peer"]!)} / ${ms(m["ours"]!)}`,
          target: "≥ 30× faster",
          met: full ? peerVsOurs >= 30 : undefined,
        },
        { name: "ours without gzip: records → renderUrlset", value: ms(m["oursPlain"]!), detail: `${mib(sizes["oursPlain"]!)}; ${runsNote("oursPlain")}` },
        { name: "sitemap.js without gzip", value: ms(m["peerPlain"]!), detail: `${mib(sizes["peerPlain"]!)}; ${runsNote("peerPlain")}` },
        {
          name: "ours vs sitemap.js, no gzip",
          value: `${ratio(peerPlainVsOurs)} faster`,
          detail: `${ms(m["peerPlain"]!)} / ${ms(m["oursPlain"]!)}`,
          target: "≥ 10× faster",
          met: full ? peerPlainVsOurs >= 10 : undefined,
        },
      ],
    },
  };
}
