/**
 * Starts `wrangler dev` (real workerd, real local D1/KV/Cache) on a free loopback port with fresh
 * storage, seeds it, and stops everything it started — also when a test fails or the process
 * is interrupted.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, seedIfEmpty } from "../../../scripts/local-db.ts";
import type { DemoInput } from "../../../src/demo/demo-data.ts";

export async function freePort(): Promise<number> {
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
  /** The local D1, as `wrangler d1 execute` sees it. */
  query<T = Record<string, unknown>>(sql: string): T[];
  stop(): Promise<void>;
  /** Stops the Worker (SIGKILL when `hard`) and starts it again on the same port and storage. */
  restart(hard?: boolean): Promise<void>;
  logs(): string;
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
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => (killAll(), process.exit(130)));

export interface DevServerOptions {
  vars?: Record<string, string>;
  seed?: ((origin: string) => DemoInput[]) | false;
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const persistTo = mkdtempSync(join(tmpdir(), "edge-sitemaps-e2e-"));
  const vars = { SITES: origin, ...options.vars };
  applyMigrations(persistTo, true);
  if (options.seed !== false) await seedIfEmpty(origin, { vars, persistTo, ...(options.seed ? { records: options.seed } : {}) });

  let child: ChildProcess | undefined;
  let output = "";

  const launch = async (): Promise<void> => {
    const args = ["wrangler", "dev", "--test-scheduled", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", persistTo, "--show-interactive-dev-session=false"];
    for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
    const proc = spawn("npx", args, { detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } });
    child = proc;
    running.add(proc);
    proc.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    proc.once("exit", () => running.delete(proc));
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`wrangler dev exited (${proc.exitCode}):\n${output}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/sitemap-health-probe`, { headers: { Host: `localhost:${port}` } });
        await res.body?.cancel();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
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

  await launch();
  return {
    port,
    origin,
    persistTo,
    query<T>(sql: string): T[] {
      return d1Query<T>(sql, persistTo);
    },
    async stop() {
      await halt("SIGTERM");
      rmSync(persistTo, { recursive: true, force: true });
    },
    async restart(hard = false) {
      await halt(hard ? "SIGKILL" : "SIGTERM");
      await launch();
    },
    logs: () => output,
  };
}


function d1Query<T>(sql: string, persistTo: string): T[] {
  const out = execFileSync("npx", ["wrangler", "d1", "execute", "DB", "--local", "--persist-to", persistTo, "--json", "--command", sql], {
    encoding: "utf8",
    maxBuffer: 512 * 1024 * 1024,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  const parsed = JSON.parse(out) as { results: T[] }[];
  return parsed.flatMap((r) => r.results);
}
