/**
 * Record validation throughput in Node: `validateBatch` over plain records (loc, lastmod,
 * changefreq, priority, section) and over extension-heavy records (images, a video, hreflang
 * alternates on every record). The ingest API validates each request's batch this way before it
 * writes anything. Reported as µs per record, median of several runs, with zod's JIT (Node) and
 * without it (`jitless`: workerd forbids `eval`, so zod takes its interpreted path there).
 *
 * `npx node bench/validation.ts` runs this section alone.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { validateBatch } from "../src/core/validate.ts";
import { type DemoInput, demoSection, demoVideo } from "../src/demo/demo-data.ts";
import { BENCH_ORIGIN, type BenchOptions, type Section, forceGc, median, now } from "./lib.ts";

/** Issue 13: validation stays at about 10 µs per record (in workerd) or better; plain records are the common case. */
const TARGET_US = 10;

const ctx = { sites: new Set([BENCH_ORIGIN]), defaultSection: "products" };

/** Every record with two images, a video with every field and a three-language hreflang set. */
function extensionHeavy(records: readonly DemoInput[]): DemoInput[] {
  return records.map((record, i) => ({
    ...record,
    images: [
      `https://cdn.example.com/products/${i}/front.jpg`,
      { loc: `https://cdn.example.com/products/${i}/side.jpg`, caption: `Side view of "item ${i}" & its box`, title: `Item ${i}` },
    ],
    videos: [demoVideo(i)],
    alternates: [
      { hreflang: "en", href: record.loc },
      { hreflang: "de", href: `${BENCH_ORIGIN}/de/item-${i}` },
      { hreflang: "x-default", href: record.loc },
    ],
  }));
}

/** Median µs per record of `validateBatch` over `inputs`, in batches of 1,000 (the ingest API's batch size). */
function perRecord(inputs: readonly DemoInput[], runs: number): number {
  const batches: DemoInput[][] = [];
  for (let i = 0; i < inputs.length; i += 1_000) batches.push(inputs.slice(i, i + 1_000));
  for (let warm = 0; warm < 3; warm++) for (const batch of batches) validateBatch(batch, ctx); // JIT warm-up
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    forceGc();
    const start = now();
    for (const batch of batches) validateBatch(batch, ctx);
    times.push(((now() - start) * 1000) / inputs.length);
  }
  return median(times);
}

/**
 * zod decides at schema construction whether to compile its fast path, so the jitless case runs
 * in a child process whose zod config says `jitless` before any schema exists.
 */
const JITLESS_CHILD = "--jitless-child";
const JITLESS_CONFIG = "data:text/javascript,globalThis.__zod_globalConfig={jitless:true}";

function measure(count: number, runs: number): { plainUs: number; heavyUs: number } {
  const plain = demoSection(BENCH_ORIGIN, "products", count);
  return { plainUs: perRecord(plain, runs), heavyUs: perRecord(extensionHeavy(plain), runs) };
}

function measureJitless(count: number, runs: number): { plainUs: number; heavyUs: number } {
  const args = ["--expose-gc", "--import", JITLESS_CONFIG, fileURLToPath(import.meta.url), JITLESS_CHILD, String(count), String(runs)];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: "utf8" })) as { plainUs: number; heavyUs: number };
}

export function validationBench(options: BenchOptions): Section {
  const count = options.quick ? 2_000 : 10_000;
  const runs = options.quick ? 3 : Math.max(options.runs, 7);
  const { plainUs, heavyUs } = measure(count, runs);
  const jitless = measureJitless(count, runs);
  const plainJitlessUs = jitless.plainUs;
  const heavyJitlessUs = jitless.heavyUs;
  const target = `≤ ${TARGET_US} µs/record`;
  return {
    title: "Validation (Node)",
    note: `validateBatch over ${count.toLocaleString("en-US")} records in batches of 1,000; median of ${runs} runs. "jitless": zod without its compiled fast path, as in workerd (no \`eval\` there).`,
    rows: [
      { name: "plain records", value: `${plainUs.toFixed(2)} µs/record`, target, met: plainUs <= TARGET_US },
      // About ten URLs to normalise per record: no target of its own, compare with earlier runs.
      { name: "extension-heavy records (2 images, 1 video, 3 alternates)", value: `${heavyUs.toFixed(2)} µs/record` },
      { name: "plain records, jitless", value: `${plainJitlessUs.toFixed(2)} µs/record`, target, met: plainJitlessUs <= TARGET_US },
      { name: "extension-heavy records, jitless", value: `${heavyJitlessUs.toFixed(2)} µs/record` },
    ],
  };
}

if (import.meta.main && process.argv[2] === JITLESS_CHILD) {
  console.log(JSON.stringify(measure(Number(process.argv[3]), Number(process.argv[4]))));
} else if (import.meta.main) {
  const { markdownTable, parseArgs } = await import("./lib.ts");
  console.log(markdownTable(validationBench(parseArgs(process.argv.slice(2)))));
}
