/**
 * The Worker in workerd for end-to-end benchmarks: bench/worker/bench-worker.ts (the real Worker
 * plus `/__bench/*` seed and counting routes) bundled with esbuild and run by Miniflare 5 with the
 * bindings of wrangler.jsonc, local D1/KV/Cache persisted in a temporary directory (removed on
 * dispose). Requests go over real loopback HTTP to workerd's socket; `upstream` makes the Worker see
 * them as https://shop.example.com/… (the configured site).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare, convertV4MiniflareOptions } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig, unstable_splitSqlQuery } from "wrangler";
import { BENCH_ORIGIN, now } from "./lib.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface HttpResult {
  status: number;
  /** Request start to last body byte. */
  ms: number;
  /** Bytes on the wire (body as sent: gzip stays gzip). */
  bytes: number;
  headers: Record<string, string | string[] | undefined>;
}

export interface Harness {
  url: URL;
  origin: string;
  dir: string;
  mf: Miniflare;
  /** GET over loopback HTTP, timed to the last byte; the body is counted, not decoded. */
  get(path: string, headers?: Record<string, string>): Promise<HttpResult>;
  /** A `/__bench/*` route; throws on a non-2xx answer. */
  bench<T>(route: string, params?: Record<string, string | number>, method?: "GET" | "POST"): Promise<T>;
  /** Resident memory of the workerd process (bytes), from /proc. */
  workerdRss(): number;
  dispose(): Promise<void>;
}

async function bundle(outdir: string): Promise<string> {
  const outfile = join(outdir, "worker.js");
  await build({
    entryPoints: [join(ROOT, "bench/worker/bench-worker.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2024",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    outfile,
    external: ["cloudflare:*", "node:*"],
    logLevel: "warning",
  });
  return outfile;
}

/** The workerd child of this process (Miniflare spawns one per instance). */
function findWorkerdPid(known: ReadonlySet<number>): number | null {
  try {
    const out = execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" });
    for (const line of out.trim().split("\n")) {
      const [pid, comm] = line.trim().split(/\s+/);
      if (comm?.startsWith("workerd") && !known.has(Number(pid))) return Number(pid);
    }
  } catch {
    // no children yet
  }
  return null;
}

function rssOf(pid: number | null): number {
  if (pid === null) return Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Temporary directories of running harnesses: removed on Ctrl-C too, not only on dispose. */
const liveDirs = new Set<string>();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
}

export async function startHarness(vars: Record<string, string> = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-bench-"));
  liveDirs.add(dir);
  try {
    const scriptPath = await bundle(dir);
    // Bindings (D1, KV, …) as wrangler.jsonc declares them; vars exactly from wrangler.jsonc (not
    // from a developer's .dev.vars, so every run measures the same configuration).
    process.env["WRANGLER_LOG"] ??= "error"; // no "Using secrets defined in .dev.vars" in the tables
    const config = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
    const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
    const { modulesRules: _rules, ...options } = workerOptions as typeof workerOptions & { modulesRules?: unknown };
    const configVars = config.vars as Record<string, unknown>;
    const before = new Set<number>();
    const existing = findWorkerdPid(new Set());
    if (existing !== null) before.add(existing);
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        host: "127.0.0.1",
        port: 0,
        upstream: BENCH_ORIGIN,
        // No Request.cf download (no network): the fallback object, without clientAcceptEncoding.
        cf: false,
        resourcePersistencePath: join(dir, "state"),
        log: new Log(LogLevel.WARN),
        // The Worker's console output (regeneration summaries, …) would interleave with the tables.
        handleStructuredLogs: (entry: { level?: string; message?: string }) => {
          if (entry.level === "error") process.stderr.write(`[workerd] ${entry.message ?? ""}\n`);
        },
        workers: [
          {
            ...options,
            name: "bench",
            modules: true,
            modulesRoot: dir,
            scriptPath,
            bindings: { ...configVars, SITES: BENCH_ORIGIN, ...vars },
          },
        ],
      } as Parameters<typeof convertV4MiniflareOptions>[0]),
    );
    const url = await mf.ready;
    const workerdPid = findWorkerdPid(before);

    // Migrations, split the way wrangler splits them, each file in one batch.
    const db = await mf.getD1Database("DB");
    for (const file of readdirSync(join(ROOT, "migrations"))
      .filter((f) => f.endsWith(".sql"))
      .sort()) {
      const statements = unstable_splitSqlQuery(readFileSync(join(ROOT, "migrations", file), "utf8"));
      await db.batch(statements.map((sql: string) => db.prepare(sql)));
    }

    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const get = (path: string, headers: Record<string, string> = {}): Promise<HttpResult> =>
      new Promise((resolve, reject) => {
        const started = now();
        const req = request(new URL(path, url), { agent, headers }, (res) => {
          let bytes = 0;
          res.on("data", (chunk: Buffer) => (bytes += chunk.byteLength));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: now() - started, bytes, headers: res.headers }));
          res.on("error", reject);
        });
        req.on("error", reject);
        req.end();
      });

    const bench = async <T>(route: string, params: Record<string, string | number> = {}, method: "GET" | "POST" = "POST"): Promise<T> => {
      const target = new URL(`/__bench/${route}`, url);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, String(v));
      const res = await fetch(target, { method });
      const text = await res.text();
      if (!res.ok) throw new Error(`/__bench/${route} → ${res.status}: ${text.slice(0, 2000)}`);
      return JSON.parse(text) as T;
    };

    return {
      url,
      origin: BENCH_ORIGIN,
      dir,
      mf,
      get,
      bench,
      workerdRss: () => rssOf(workerdPid),
      async dispose() {
        agent.destroy();
        await mf.dispose();
        rmSync(dir, { recursive: true, force: true });
        liveDirs.delete(dir);
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
    throw err;
  }
}

/** Samples a value every `everyMs` while `work` runs; returns the work's result and the peak. */
export async function withPeak<T>(sample: () => number, work: () => Promise<T>, everyMs = 20): Promise<{ value: T; peak: number; before: number }> {
  const before = sample();
  let peak = before;
  const timer = setInterval(() => {
    const v = sample();
    if (v > peak) peak = v;
  }, everyMs);
  try {
    const value = await work();
    const v = sample();
    if (v > peak) peak = v;
    return { value, peak, before };
  } finally {
    clearInterval(timer);
  }
}
