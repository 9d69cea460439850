/**
 * Starts `wrangler dev` (real workerd, real local D1/KV/Cache) on a free loopback port with fresh
 * storage, seeds it, and stops everything it started — also when a test fails or the process
 * is interrupted.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { applyMigrations, seedIfEmpty } from "../../../scripts/local-db.ts";
import type { DemoInput } from "../../../src/demo/demo-data.ts";
import { send } from "./http.ts";
import { templatePrefix } from "./run.ts";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface DevServer {
  port: number;
  origin: string;
  persistTo: string;
  /** The vars the Worker runs with now. */
  vars: Record<string, string>;
  /** The local D1, as `wrangler d1 execute` sees it (a separate process: ~2–3 s per call). */
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  stop(): Promise<void>;
  /**
   * Stops the Worker (SIGKILL when `hard`) and starts it again on the same port and storage
   * (D1, KV, Cache API), optionally with other vars (SITES stays).
   */
  restart(options?: { hard?: boolean; vars?: Record<string, string> }): Promise<void>;
  /**
   * Runs the cron trigger (`GET /__scheduled`); resolves when the jobs it queued (and their
   * continuations) ran on the local queue: the cron only schedules (docs/jobs.md). With
   * `waitForJobs: false`, as soon as the trigger answered.
   */
  scheduled(cron?: string, options?: { waitForJobs?: boolean }): Promise<{ status: number; body: string }>;
  /**
   * Resolves when no job is pending in `jobs` (none claimed after its last run started, none being
   * retried): the background work a write, a regenerate request or a cron queued has run.
   */
  jobsDone(timeoutMs?: number): Promise<void>;
  /** Everything wrangler and the Worker printed so far (console.log lines included). */
  logs(): string;
  /** The process group of `wrangler dev` and its workerd (for memory readings); undefined when stopped. */
  group(): number | undefined;
}

const running = new Set<ChildProcess>();
function killAll(): void {
  for (const child of running) {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
process.once("exit", killAll);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });

export interface DevServerOptions {
  vars?: Record<string, string>;
  seed?: ((origin: string) => DemoInput[]) | false;
}

/** Vars that only change how the running Worker behaves, not what seeding writes (records, manifest). */
const RUNTIME_ONLY = /^(ADMIN_TOKEN|FAULT_.+|REGEN_.+|NOTIFY_.+|INDEXNOW_.+|PING_URLS|SNAPSHOT_GRACE_SECONDS|MANIFEST_CACHE_TTL|EDGE_CACHE_TTL|CACHE_.+)$/;

/**
 * Seeding (migrations, 126,000 rows, the manifest) takes ~15 s. Within one run, the files that seed
 * the same data set share it: the first seeds fresh storage and keeps a copy; the others start from
 * a copy of that (fresh storage all the same: nothing of a previous server is in it). The records'
 * locs carry the origin, so a copy is served on the port it was seeded for; if that port is taken
 * by then, the server seeds afresh on another.
 */
function templateFor(options: DevServerOptions): string | null {
  const runId = process.env.E2E_RUN_ID;
  if (!runId || options.seed !== undefined) return null;
  const seedVars = Object.entries(options.vars ?? {})
    .filter(([name]) => !RUNTIME_ONLY.test(name))
    .sort();
  return templatePrefix(runId) + createHash("sha256").update(JSON.stringify(seedVars)).digest("hex").slice(0, 12);
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const template = templateFor(options);
  const persistTo = mkdtempSync(join(tmpdir(), "edge-sitemaps-e2e-"));
  let port: number;
  if (template && existsSync(join(template, "port")) && (await portIsFree(Number(readFileSync(join(template, "port"), "utf8"))))) {
    port = Number(readFileSync(join(template, "port"), "utf8"));
    cpSync(join(template, "storage"), persistTo, { recursive: true });
  } else {
    port = await freePort();
    const seedVars = { SITES: `http://localhost:${port}`, ...options.vars };
    applyMigrations(persistTo, true);
    if (options.seed !== false) await seedIfEmpty(seedVars.SITES, { vars: seedVars, persistTo, ...(options.seed ? { records: options.seed } : {}) });
    if (template) {
      const staging = `${template}.${process.pid}`;
      cpSync(persistTo, join(staging, "storage"), { recursive: true });
      writeFileSync(join(staging, "port"), String(port));
      rmSync(template, { recursive: true, force: true });
      renameSync(staging, template);
    }
  }
  const origin = `http://localhost:${port}`;
  // Nothing stands behind wrangler dev: the default ROBOTS_ORIGIN_URL would loop back into the
  // Worker (a 503, docs/notify.md), so no origin file unless a test names one.
  let vars: Record<string, string> = { SITES: origin, ROBOTS_ORIGIN_URL: "none", ...options.vars };

  let child: ChildProcess | undefined;
  let output = "";

  const launch = async (): Promise<void> => {
    const args = [
      "wrangler",
      "dev",
      "--test-scheduled",
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
      "--persist-to",
      persistTo,
      "--show-interactive-dev-session=false",
    ];
    for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
    const proc = spawn("npx", args, {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    });
    child = proc;
    running.add(proc);
    proc.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    proc.once("exit", () => running.delete(proc));
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`wrangler dev exited (${proc.exitCode}):\n${output}`);
      // Ready when the Worker itself answers (its plain-text 404), not a dev-server error page.
      const res = await send(port, { path: "/sitemap-health-probe", timeoutMs: 5_000 });
      if (res.status === 404 && res.body.toString().startsWith("404 Not Found")) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`wrangler dev did not start within 90 s:\n${output}`);
  };

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    if (!proc?.pid || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    try {
      process.kill(-proc.pid, signal);
    } catch {
      return;
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (proc.exitCode === null && proc.signalCode === null) {
      try {
        process.kill(-proc.pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  };

  try {
    await launch();
  } catch (error) {
    await halt("SIGKILL");
    rmSync(persistTo, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    origin,
    persistTo,
    get vars() {
      return vars;
    },
    query<T>(sql: string): Promise<T[]> {
      return d1Query<T>(sql, persistTo);
    },
    async stop() {
      await halt("SIGTERM");
      rmSync(persistTo, { recursive: true, force: true });
    },
    async restart({ hard = false, vars: next }: { hard?: boolean; vars?: Record<string, string> } = {}) {
      await halt(hard ? "SIGKILL" : "SIGTERM");
      if (next) vars = { ROBOTS_ORIGIN_URL: "none", ...next, SITES: origin };
      await launch();
    },
    async scheduled(cron = "17 * * * *", { waitForJobs = true } = {}) {
      const res = await send(port, { path: `/__scheduled?cron=${encodeURIComponent(cron)}`, timeoutMs: 170_000 });
      // The heartbeat claimed its jobs in `jobs`; each run records its start, so none is pending once all ran.
      if (res.status === 200 && waitForJobs) await jobsDone(persistTo, 170_000);
      return { status: res.status, body: res.body.toString() };
    },
    jobsDone: (timeoutMs = 170_000) => jobsDone(persistTo, timeoutMs),
    logs: () => output,
    group: () => child?.pid,
  };
}

const execFileAsync = promisify(execFile);

/** Jobs with a message on its way (claimed after their last run started) or being retried (test/node/support/jobs.ts). */
const PENDING_JOBS = "SELECT COUNT(*) AS n FROM jobs WHERE chain IS NOT NULL OR (error IS NOT NULL AND dead_at IS NULL)";

async function jobsDone(persistTo: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const pending = Number((await d1Query<{ n: number }>(PENDING_JOBS, persistTo))[0]?.n ?? 0);
    if (pending === 0) return;
    if (Date.now() > until) throw new Error(`${pending} job(s) still pending after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Asynchronous, so pollers and load generators in this process keep running meanwhile. */
async function d1Query<T>(sql: string, persistTo: string): Promise<T[]> {
  const { stdout } = await execFileAsync("npx", ["wrangler", "d1", "execute", "DB", "--local", "--persist-to", persistTo, "--json", "--command", sql], {
    encoding: "utf8",
    maxBuffer: 512 * 1024 * 1024,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  const parsed = JSON.parse(stdout) as { results: T[] }[];
  return parsed.flatMap((r) => r.results);
}
