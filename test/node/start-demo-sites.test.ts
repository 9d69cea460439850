/**
 * `npm start -- --demo-sites N` (scripts/start-plan.ts, scripts/local-db.ts `registerDemoSites`):
 * N registered sites http://tN.test:PORT, each with its demo records, registered once; the real
 * Worker, started with npm start's `wrangler dev` arguments, serves each by its Host with its own
 * URLs only. Fresh storage (`--persist-to` a temporary directory), an empty `--env-file` instead of
 * the checkout's `.dev.vars`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { getPlatformProxy } from "wrangler";
import { applyMigrations, registerDemoSites } from "../../scripts/local-db.ts";
import { StartArgsError, startPlan } from "../../scripts/start-plan.ts";

async function freePort(): Promise<number> {
  for (let port = 18300; port < 18350; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error("no free port in 18300-18349");
}

/** GET on the local server with another Host (what `curl --resolve` does): status and body. */
function get(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("npm start -- --demo-sites N", () => {
  it("is read from the arguments and not passed to wrangler", () => {
    const plan = startPlan(["--demo-sites", "3", "--port", "18400"], {});
    expect(plan.demoSites).toBe(3);
    expect(plan.wranglerArgs).not.toContain("--demo-sites");
    expect(startPlan(["--demo-sites=200"], {}).demoSites).toBe(200);
    expect(startPlan([], {}).demoSites).toBe(0);
    for (const bad of [["--demo-sites"], ["--demo-sites", "0"], ["--demo-sites", "x"], ["--demo-sites", "10001"]]) {
      expect(() => startPlan(bad, {}), bad.join(" ")).toThrow(StartArgsError);
    }
  });

  let cleanup: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await cleanup?.();
    cleanup = null;
  });

  it("registers the sites once, each with its demo records, and the Worker serves each by its Host", { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-demo-sites-"));
    const envFile = join(dir, "empty.env");
    writeFileSync(envFile, "");
    const port = await freePort();
    const persistTo = join(dir, "state");
    const plan = startPlan(["--port", String(port), "--persist-to", persistTo, "--env-file", envFile, "--demo-sites", "3"], {});
    let child: ChildProcess | null = null;
    cleanup = async () => {
      const proc = child;
      if (proc?.pid && proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((resolve) => proc.once("exit", resolve));
        process.kill(-proc.pid, "SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (proc.exitCode === null && proc.signalCode === null) process.kill(-proc.pid, "SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
    };

    applyMigrations(persistTo, true);
    const origins = [1, 2, 3].map((i) => `http://t${i}.test:${port}`);
    expect(await registerDemoSites(port, plan.demoSites, { vars: plan.vars, ...plan.state })).toEqual({ registered: 3, seeded: 150, origins });
    // Started again on the same storage: nothing new.
    expect(await registerDemoSites(port, plan.demoSites, { vars: plan.vars, ...plan.state })).toEqual({ registered: 0, seeded: 0, origins });
    const proxy = await getPlatformProxy<Env>({ configPath: "wrangler.jsonc", persist: { path: join(persistTo, "v3") }, envFiles: [envFile] });
    try {
      const { results } = await proxy.env.DB.prepare(
        "SELECT r.origin AS origin, r.deleted_at AS deletedAt, (SELECT COUNT(*) FROM urls u WHERE u.origin = r.origin) AS urls FROM registry_sites r ORDER BY r.origin",
      ).all<{ origin: string; deletedAt: number | null; urls: number }>();
      expect(results).toEqual(origins.map((origin) => ({ origin, deletedAt: null, urls: 50 })));
    } finally {
      await proxy.dispose();
    }

    const proc = spawn("npx", ["wrangler", ...plan.wranglerArgs, "--show-interactive-dev-session=false"], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    });
    child = proc;
    let output = "";
    proc.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`wrangler dev exited (${proc.exitCode}):\n${output}`);
      const res = await get(port, `localhost:${port}`, "/sitemap-health-probe").catch(() => null);
      if (res?.status === 404) break;
      if (Date.now() > deadline) throw new Error(`wrangler dev did not start within 90 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }

    for (const origin of origins) {
      const host = new URL(origin).host;
      const index = await get(port, host, "/sitemap.xml");
      expect(index.status, `${origin}/sitemap.xml:\n${index.body}\n${output}`).toBe(200);
      const shard = /<loc>([^<]+)<\/loc>/.exec(index.body)?.[1];
      expect(shard?.startsWith(`${origin}/`)).toBe(true);
      const urls = await get(port, host, new URL(shard!).pathname);
      expect(urls.status).toBe(200);
      const locs = [...urls.body.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]!);
      expect(locs).toHaveLength(50);
      expect(locs.every((loc) => loc.startsWith(`${origin}/`))).toBe(true);
    }
    expect((await get(port, `t9.test:${port}`, "/sitemap.xml")).status).toBe(404);
  });
});
