/**
 * Shared benchmark helpers: timing, medians, markdown tables, targets, the record generator.
 * Benchmarks never assert: a missed target is printed as "missed" and the run still exits 0.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type ValidRecord, validateBatch } from "../src/core/validate.ts";
import { demoSection } from "../src/demo/demo-data.ts";

export const BENCH_ORIGIN = "https://shop.example.com";

export interface BenchOptions {
  quick: boolean;
  /** Record counts for the end-to-end parts (e.g. [100_000, 1_000_000]). */
  scales: number[];
  /** Timed repetitions per case (medians are taken over these). */
  runs: number;
  /** Load-test duration per target, seconds. */
  loadSeconds: number;
  /** partitions: scattered changes after the first regeneration (--changes; 10,000 by default, two batches). */
  changes: number;
  /**
   * Where local D1, KV and Cache run: "separate" (default), a second workerd process, as in
   * production, where they are services outside the Worker's isolate; "same", the Worker's own
   * workerd process and thread (`wrangler dev`'s layout), so reads and render take turns.
   */
  storage: "separate" | "same";
  /**
   * A V8 old-space limit (MiB) for the Worker's workerd process (`--max-old-space-size`), or null
   * for none (local workerd's default). A walk that completes under a cap of N MiB kept at most
   * N MiB of live objects: a lower bound on what production's 128 MB isolate limit leaves spare.
   */
  heapCapMiB: number | null;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * A full GC between timed runs, so each run starts from the same heap state (and one case's
 * garbage is not collected on the next case's clock). Works without `--expose-gc` on the command line.
 */
export const forceGc: () => void = (() => {
  if (typeof globalThis.gc === "function") return globalThis.gc as () => void;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();

export function now(): number {
  return performance.now();
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

/** `n` validated, realistic records of one section, generated in slices (same data every run). */
export function benchRecords(count: number, section = "products", start = 0): ValidRecord[] {
  const ctx = { sites: new Set([BENCH_ORIGIN]), defaultSection: "pages" };
  return validateBatch(demoSection(BENCH_ORIGIN, section, count, start), ctx);
}

/** Lazily generated records: `total` of them, generated and validated `slice` at a time (flat memory). */
export function* streamRecords(total: number, start = 0, section = "products", slice = 1_000): Generator<ValidRecord> {
  const ctx = { sites: new Set([BENCH_ORIGIN]), defaultSection: "pages" };
  for (let i = start; i < start + total; i += slice) {
    const n = Math.min(slice, start + total - i);
    yield* validateBatch(demoSection(BENCH_ORIGIN, section, n, i), ctx);
  }
}

/** Reads a Web stream to the end, counting bytes without keeping them. */
export async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let bytes = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    bytes += value.byteLength;
  }
}

// ---------- formatting ----------

export const ms = (v: number): string =>
  !Number.isFinite(v)
    ? "—"
    : v >= 1000
      ? `${(v / 1000).toFixed(2)} s`
      : v >= 100
        ? `${v.toFixed(0)} ms`
        : v >= 10
          ? `${v.toFixed(1)} ms`
          : `${v.toFixed(2)} ms`;
export const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;
export const int = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "—");
export const ratio = (v: number): string => (Number.isFinite(v) ? `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)}×` : "—");

export interface Row {
  /** What was measured. */
  name: string;
  /** Measured value, formatted. */
  value: string;
  /** Extra measured facts (ratios, bytes, rows read). */
  detail?: string;
  /** The target, formatted (e.g. "≤ 1.2× floor"). */
  target?: string;
  /** true = met, false = missed, undefined = no target or not measurable. */
  met?: boolean | undefined;
}

export interface Section {
  title: string;
  /** One line under the title: data set, runs, how it was measured. */
  note?: string;
  rows: Row[];
}

/** A row measured once per scale (e.g. 100,000 and 1,000,000 records): one column each. */
export interface ScaledRow {
  name: string;
  /** Formatted value per scale, in the order of ScaledSection.columns. */
  values: string[];
  target?: string;
  /** Per scale: met / missed / not measurable; the row is met when every measured scale is. */
  met?: (boolean | undefined)[];
}

export interface ScaledSection {
  title: string;
  note?: string;
  columns: string[];
  rows: ScaledRow[];
}

export function scaledTable(section: ScaledSection): string {
  const lines = [`### ${section.title}`, ""];
  if (section.note) lines.push(section.note, "");
  lines.push(`| Measure | ${section.columns.map(cell).join(" | ")} | Target | Met |`, `|---|${section.columns.map(() => "---:").join("|")}|---|:-:|`);
  for (const r of section.rows) {
    const measured = (r.met ?? []).filter((m): m is boolean => m !== undefined);
    const met = !r.target ? "" : measured.length === 0 ? "—" : measured.every(Boolean) ? "✅ met" : "❌ missed";
    const values = section.columns.map((_, i) => cell(r.values[i] ?? ""));
    lines.push(`| ${cell(r.name)} | ${values.join(" | ")} | ${cell(r.target ?? "")} | ${met} |`);
  }
  return `${lines.join("\n")}\n`;
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

export function markdownTable(section: Section): string {
  const lines = [`### ${section.title}`, ""];
  if (section.note) lines.push(section.note, "");
  lines.push("| Measure | Result | Detail | Target | Met |", "|---|---:|---|---|:-:|");
  for (const r of section.rows) {
    const met = r.met === undefined ? (r.target ? "—" : "") : r.met ? "✅ met" : "❌ missed";
    lines.push(`| ${cell(r.name)} | ${cell(r.value)} | ${cell(r.detail ?? "")} | ${cell(r.target ?? "")} | ${met} |`);
  }
  return `${lines.join("\n")}\n`;
}

export function parseArgs(argv: readonly string[]): BenchOptions & { only: Set<string> | null } {
  const has = (flag: string): boolean => argv.includes(flag);
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    if (i >= 0) return argv[i + 1];
    const eq = argv.find((a) => a.startsWith(`${flag}=`));
    return eq?.slice(flag.length + 1);
  };
  const quick = has("--quick");
  const scaleArg = value("--scale") ?? (quick ? "quick" : "all");
  const scaleOf: Record<string, number[]> = {
    quick: [10_000],
    "100k": [100_000],
    "1m": [1_000_000],
    all: [100_000, 1_000_000],
    // Not in CI: minutes to hours of seeding (BENCHMARKS.md "10 million records").
    "2m": [2_000_000],
    "10m": [10_000_000],
    // Partitions only (bench/partition-files.ts builds the D1 files): ~41 GB of disk.
    "100m": [100_000_000],
    // The 100m path (eight databases, files built) at an eighth of the size: ~15 min, a check before the long run.
    "12m": [12_000_000],
  };
  const scales = scaleOf[scaleArg];
  if (!scales) throw new Error(`--scale must be one of ${Object.keys(scaleOf).join(", ")}, got "${scaleArg}"`);
  const runs = Number(value("--runs") ?? (quick ? 2 : 5));
  const loadSeconds = Number(value("--load-seconds") ?? (quick ? 2 : 20));
  const changes = Number(value("--changes") ?? 10_000);
  if (!(Number.isInteger(changes) && changes >= 2 && changes <= 10_000))
    throw new Error(`--changes must be a whole number from 2 to 10,000, got "${changes}"`);
  const onlyArg = value("--only");
  const storage = value("--storage") ?? "separate";
  if (storage !== "separate" && storage !== "same") throw new Error(`--storage must be separate or same, got "${storage}"`);
  const heapCapArg = value("--heap-cap");
  const heapCapMiB = heapCapArg === undefined ? null : Number(heapCapArg);
  if (heapCapMiB !== null && !(Number.isInteger(heapCapMiB) && heapCapMiB > 0))
    throw new Error(`--heap-cap must be a whole number of MiB, got "${heapCapArg}"`);
  return {
    storage,
    heapCapMiB,
    quick,
    scales,
    runs: Number.isInteger(runs) && runs > 0 ? runs : 5,
    changes,
    loadSeconds: Number.isFinite(loadSeconds) && loadSeconds > 0 ? loadSeconds : 20,
    only: onlyArg ? new Set(onlyArg.split(",")) : null,
  };
}

/** The note's clause for --heap-cap ("" without one). */
export function heapCapText(options: Pick<BenchOptions, "heapCapMiB">): string {
  return options.heapCapMiB === null
    ? ""
    : ` The Worker's workerd process ran with \`--max-old-space-size=${options.heapCapMiB}\` (--heap-cap): every step that completed kept under ${options.heapCapMiB} MiB of live objects in old space.`;
}

/** Every SQLite file under `dir` (a local D1 persist directory), metadata files aside. */
export function sqliteFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sqliteFiles(path));
    else if (name.endsWith(".sqlite") && !name.includes("metadata")) out.push(path);
  }
  return out;
}

/** What the bench Worker reports of one request: its answer and what D1 did for it. */
export interface Count {
  status: number;
  bytes: number;
  ms: number;
  source: string | null;
  rowsRead: number;
  rowsWritten: number;
  queries: number;
}
