/**
 * The Worker in workerd for end-to-end benchmarks: bench/worker/bench-worker.ts (the real Worker
 * plus `/__bench/*` seed and counting routes) bundled with esbuild and run by Miniflare 5 with the
 * bindings of wrangler.jsonc, local D1/KV/Cache persisted in a temporary directory (removed on
 * dispose). Requests go over real loopback HTTP to workerd's socket; `upstream` makes the Worker see
 * them as https://shop.example.com/… (the configured site).
 *
 * By default D1, KV and Cache run in a second workerd process: Miniflare's shared storage, whose
 * first instance owns the simulators and whose later instances reach them over the dev registry
 * (workerd's debug-port RPC). In production those are services outside the Worker's isolate; in
 * one workerd process the simulators run on the Worker's thread, so a D1 query in flight cannot
 * overlap the render (BENCHMARKS.md "Overlapped cold render"), and the process's memory mixes the
 * isolate's with the simulators'. `storage: "same"` gives the one-process layout of `wrangler dev`.
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
import { BENCH_ORIGIN, type BenchOptions, mib, now } from "./lib.ts";
import { type InvocationUsage, pathOf, recordInvocation } from "./limits.ts";

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
  /**
   * A `/__bench/*` route; throws on a non-2xx answer. A metered route's `usage` (its invocation's,
   * bench/limits.ts) is recorded under `path` (default: what the route stands for), a failed one's too.
   */
  bench<T>(route: string, params?: Record<string, string | number>, method?: "GET" | "POST", path?: string): Promise<T>;
  /** Resident memory of the Worker's workerd process (bytes), from /proc. */
  workerdRss(): number;
  /** Resident memory of the storage process (bytes); NaN when storage runs in the Worker's process. */
  storageRss(): number;
  /**
   * The Worker isolate's V8 heap now (inspector `Runtime.getHeapUsage`): the memory the 128 MB
   * isolate limit is about, apart from workerd's own buffers and, with storage in the same process,
   * the simulators'. `used`: live objects and garbage not yet collected; `total`: the heap's size.
   */
  isolateHeap(): Promise<{ used: number; total: number }>;
  /** CPU time (user + system, ms) the Worker's workerd process has used so far, from /proc. */
  workerdCpu(): number;
  /** The same for the storage process; NaN when storage runs in the Worker's process. */
  storageCpu(): number;
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

/** A CDP session on the bench Worker's isolate, through workerd's inspector socket. */
async function inspectorSession(mf: Miniflare): Promise<{ call<T>(method: string): Promise<T>; close(): void }> {
  const base = await mf.getInspectorURL();
  const targets = (await (await fetch(`http://${base.host}/json`)).json()) as { id: string; webSocketDebuggerUrl: string }[];
  const target = targets.find((t) => t.id === "core:user:bench");
  if (!target) throw new Error(`no inspector target for the bench Worker among ${targets.map((t) => t.id).join(", ")}`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error("inspector connection failed")), { once: true });
  });
  const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (err: Error) => void }>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const call = message.id === undefined ? undefined : waiting.get(message.id);
    if (!call) return; // an event, not an answer
    waiting.delete(message.id!);
    if (message.error) call.reject(new Error(`inspector: ${message.error.message}`));
    else call.resolve(message.result);
  });
  // A crashed workerd (e.g. over --heap-cap) closes the socket: pending and later calls fail.
  let closed = false;
  socket.addEventListener("close", () => {
    closed = true;
    for (const call of waiting.values()) call.reject(new Error("inspector: the connection closed"));
    waiting.clear();
  });
  let id = 0;
  return {
    call<T>(method: string): Promise<T> {
      const callId = ++id;
      return new Promise<T>((resolve, reject) => {
        if (closed) return reject(new Error("inspector: the connection closed"));
        waiting.set(callId, { resolve: resolve as (result: unknown) => void, reject });
        socket.send(JSON.stringify({ id: callId, method }));
      });
    },
    close: () => socket.close(),
  };
}

/** True once the process has exited (gone, or a zombie not yet reaped). */
function exited(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z");
  } catch {
    return true;
  }
}

/**
 * `work`, or a rejection once the Worker's workerd process exits: Miniflare restarts a crashed
 * runtime, and a request that was in flight in the old one would otherwise wait forever.
 */
function unlessCrashed<T>(pid: number | null, work: Promise<T>): Promise<T> {
  if (pid === null) return work;
  const crash = (): Error => new Error("workerd exited during the request (signal 6 with --heap-cap: V8 ran out of heap)");
  let timer: ReturnType<typeof setInterval> | undefined;
  const crashed = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      if (exited(pid)) reject(crash());
    }, 250);
  });
  // A request that fails because the process died says so (the socket may close before the exit shows).
  const worked = work.catch(async (err: unknown) => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    throw exited(pid) ? crash() : err;
  });
  return Promise.race([worked, crashed]).finally(() => clearInterval(timer));
}

/** CPU time of a process so far (utime + stime, ms; Linux counts in 1/100 s ticks). */
function cpuOf(pid: number | null): number {
  if (pid === null) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
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

/**
 * The storage owner: a workerd process with the same D1/KV bindings and a Worker that does
 * nothing. Shared storage elects the oldest instance on a persistence path as its owner, so it
 * must be ready before the bench Worker starts.
 */
async function startStorage(options: object, shared: object): Promise<Miniflare> {
  const { durableObjects: _objects, ...bindings } = options as { durableObjects?: unknown };
  const storage = new Miniflare({
    ...convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      cf: false,
      log: new Log(LogLevel.WARN),
      workers: [{ ...bindings, name: "storage", modules: true, script: "export default { fetch: () => new Response(null, { status: 204 }) };" }],
    } as Parameters<typeof convertV4MiniflareOptions>[0]),
    ...shared,
  });
  await storage.ready;
  return storage;
}

export async function startHarness(
  vars: Record<string, string> = {},
  layout: Pick<BenchOptions, "storage" | "heapCapMiB"> = { storage: "separate", heapCapMiB: null },
  /** D1 bindings besides wrangler.jsonc's (a site over several databases, bench/partitions.ts), each migrated. */
  extraD1: readonly string[] = [],
  /**
   * Storage that outlives the harness (bench/partition-files.ts builds D1 files between two harnesses):
   * `keep` leaves the directory on dispose; `reopen` runs in an existing one, already migrated.
   */
  persist: { keep?: boolean; reopen?: string } = {},
): Promise<Harness> {
  const dir = persist.reopen ?? mkdtempSync(join(tmpdir(), "edge-sitemaps-bench-"));
  liveDirs.add(dir);
  // A reopened directory keeps its data, not the last run's dev registry (its workers are gone).
  if (persist.reopen) rmSync(join(dir, "registry"), { recursive: true, force: true });
  const removeDir = (): void => {
    liveDirs.delete(dir);
    if (!persist.keep) rmSync(dir, { recursive: true, force: true });
  };
  let storage: Miniflare | undefined;
  try {
    const scriptPath = await bundle(dir);
    // Bindings (D1, KV, …) as wrangler.jsonc declares them; vars exactly from wrangler.jsonc (not
    // from a developer's .dev.vars, so every run measures the same configuration).
    process.env["WRANGLER_LOG"] ??= "error"; // no "Using secrets defined in .dev.vars" in the tables
    const config = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
    const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
    // No queue consumer: the benches run each job step themselves, one invocation a call (a request
    // that queues a regeneration, say the first one after a bulk load, must not start a chain that
    // races the bench's own runs). Messages sent to JOBS stay in the local queue, undelivered.
    const {
      modulesRules: _rules,
      queueConsumers: _consumers,
      ...declared
    } = workerOptions as typeof workerOptions & { modulesRules?: unknown; queueConsumers?: unknown };
    const d1 = { ...(declared.d1Databases as Record<string, unknown>), ...Object.fromEntries(extraD1.map((b) => [b, { id: b }])) };
    const options = { ...declared, d1Databases: d1 };
    const configVars = config.vars as Record<string, unknown>;
    const before = new Set<number>();
    const existing = findWorkerdPid(new Set());
    if (existing !== null) before.add(existing);
    // The registry is the run's own (not Miniflare's global one), so no other dev server joins.
    const shared =
      layout.storage === "separate"
        ? {
            resourcePersistencePath: join(dir, "state"),
            isolatedResourcePersistencePath: join(dir, "isolated"),
            unsafeEnableSharedStorage: true,
            enableDevRegistry: true,
            unsafeDevRegistryPath: join(dir, "registry"),
          }
        : {};
    let storagePid: number | null = null;
    if (layout.storage === "separate") {
      storage = await startStorage(options, shared);
      storagePid = findWorkerdPid(before);
      if (storagePid !== null) before.add(storagePid);
    }
    // Miniflare reads workerd's V8 flags from the environment when it writes workerd's config
    // (only the Worker's process gets the cap, not the storage owner's).
    const flagsBefore = process.env["MINIFLARE_WORKERD_V8_FLAGS"];
    if (layout.heapCapMiB !== null) process.env["MINIFLARE_WORKERD_V8_FLAGS"] = `--max-old-space-size=${layout.heapCapMiB}`;
    const mf = new Miniflare({
      ...convertV4MiniflareOptions({
        host: "127.0.0.1",
        port: 0,
        upstream: BENCH_ORIGIN,
        // No Request.cf download (no network): the fallback object, without clientAcceptEncoding.
        cf: false,
        resourcePersistencePath: join(dir, "state"),
        log: new Log(LogLevel.WARN),
        inspectorPort: 0, // for the isolate's heap (isolateHeap)
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
      ...shared,
    });
    const url = await mf.ready.finally(() => {
      if (flagsBefore === undefined) delete process.env["MINIFLARE_WORKERD_V8_FLAGS"];
      else process.env["MINIFLARE_WORKERD_V8_FLAGS"] = flagsBefore;
    });
    const workerdPid = findWorkerdPid(before);
    const inspector = await inspectorSession(mf);

    // Migrations, split the way wrangler splits them, each file in one batch.
    for (const binding of persist.reopen ? [] : ["DB", ...extraD1]) {
      const db = await mf.getD1Database(binding);
      for (const file of readdirSync(join(ROOT, "migrations"))
        .filter((f) => f.endsWith(".sql"))
        .sort()) {
        const statements = unstable_splitSqlQuery(readFileSync(join(ROOT, "migrations", file), "utf8"));
        await db.batch(statements.map((sql: string) => db.prepare(sql)));
      }
    }

    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const get = (path: string, headers: Record<string, string> = {}): Promise<HttpResult> =>
      unlessCrashed(
        workerdPid,
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
        }),
      );

    /** Records a metered route's usage (an answer without one, scaffolding or not JSON, records nothing). */
    const record = (route: string, params: Record<string, string | number>, path: string | undefined, body: string): void => {
      let usage: InvocationUsage | undefined;
      try {
        usage = (JSON.parse(body) as { usage?: InvocationUsage }).usage;
      } catch {
        return;
      }
      if (usage) recordInvocation(path ?? pathOf(route, params), usage);
    };
    const bench = async <T>(route: string, params: Record<string, string | number> = {}, method: "GET" | "POST" = "POST", path?: string): Promise<T> => {
      const target = new URL(`/__bench/${route}`, url);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, String(v));
      const text = await unlessCrashed(
        workerdPid,
        (async () => {
          const res = await fetch(target, { method });
          const body = await res.text();
          record(route, params, path, body);
          if (!res.ok) throw new Error(`/__bench/${route} → ${res.status}: ${body.slice(0, 2000)}`);
          return body;
        })(),
      );
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
      storageRss: () => rssOf(storagePid),
      isolateHeap: async () => {
        const usage = await inspector.call<{ usedSize: number; totalSize: number }>("Runtime.getHeapUsage");
        return { used: usage.usedSize, total: usage.totalSize };
      },
      workerdCpu: () => cpuOf(workerdPid),
      storageCpu: () => cpuOf(storagePid),
      async dispose() {
        agent.destroy();
        inspector.close();
        await mf.dispose();
        await storage?.dispose();
        removeDir();
      },
    };
  } catch (err) {
    await storage?.dispose();
    removeDir();
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

export interface Peaks<T> {
  value: T;
  /** RSS growth of the Worker's process; its RSS before. */
  worker: number;
  workerBefore: number;
  /** RSS growth of the storage process (NaN when storage shares the Worker's process). */
  storage: number;
  /** The isolate's V8 heap at its largest (sampled every 50 ms through the inspector), and before. */
  heapUsed: number;
  heapTotal: number;
  heapBefore: number;
}

/**
 * Peak RSS growth of both processes and the isolate's largest heap while `work` runs. `heapUsed`
 * includes garbage not yet collected, which local workerd (no heap limit) lets pile up.
 */
export async function withPeaks<T>(h: Harness, work: () => Promise<T>): Promise<Peaks<T>> {
  const heapBefore = (await h.isolateHeap()).used;
  let heapUsed = heapBefore;
  let heapTotal = 0;
  let running = true;
  // One inspector call at a time: the isolate answers between its tasks, so busy stretches sample less often.
  const sampling = (async () => {
    while (running) {
      // A crashed isolate ends the sampling; the work's own error says what happened.
      const heap = await h.isolateHeap().catch(() => null);
      if (heap === null) return;
      heapUsed = Math.max(heapUsed, heap.used);
      heapTotal = Math.max(heapTotal, heap.total);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    const storage = await withPeak(h.storageRss, () => withPeak(h.workerdRss, work));
    const worker = storage.value;
    return {
      value: worker.value,
      worker: worker.peak - worker.before,
      workerBefore: worker.before,
      storage: storage.peak - storage.before,
      heapUsed,
      heapTotal,
      heapBefore,
    };
  } finally {
    running = false;
    await sampling;
  }
}

/** "isolate heap ≤ X MiB used (heap Y MiB); RSS growth: Worker process +A MiB (of B)[; storage process +C MiB]". */
export function peaksText(p: Omit<Peaks<unknown>, "value">): string {
  const storage = Number.isFinite(p.storage) ? `; storage process +${mib(p.storage)}` : "";
  return `isolate heap at most ${mib(p.heapUsed)} used, ${mib(p.heapTotal)} in all (${mib(p.heapBefore)} before); RSS growth: Worker process +${mib(p.worker)} (of ${mib(p.workerBefore)})${storage}`;
}
