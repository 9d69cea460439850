/**
 * `npm start`: its arguments are read as wrangler reads them (scripts/start-plan.ts), the demo is
 * seeded into the store the Worker will read (scripts/local-db.ts), and the real Worker, started
 * with the very `wrangler dev` arguments npm start uses, serves every listed shard whole and with
 * its ETag before any cron run.
 *
 * The servers run on fresh storage (`--persist-to` a temporary directory) and read an empty
 * `--env-file` instead of the checkout's `.dev.vars`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { getPlatformProxy } from "wrangler";
import { applyMigrations, seedIfEmpty } from "../../scripts/local-db.ts";
import { DevOutputGate } from "../../scripts/start-output.ts";
import { StartArgsError, startPlan } from "../../scripts/start-plan.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { locsOf } from "../shared/locs.ts";
import { validateXml } from "./support/xsd.ts";

describe("npm start's arguments", () => {
  const varsOf = (args: string[], environment: Record<string, string> = {}) => startPlan(args, environment).vars;

  it("reads --var in every form wrangler accepts; a later value wins, values keep their colons", () => {
    expect(varsOf(["--var", "URL_SOURCE:kv"])).toMatchObject({ URL_SOURCE: "kv" });
    expect(varsOf(["--var=URL_SOURCE:kv"])).toMatchObject({ URL_SOURCE: "kv" });
    expect(varsOf(["--var", "URL_SOURCE:kv", "MANIFEST_STORE:kv", "--ip", "127.0.0.1"])).toMatchObject({ URL_SOURCE: "kv", MANIFEST_STORE: "kv" });
    expect(varsOf(["--var", "URL_SOURCE:kv", "--var", "URL_SOURCE:d1"])).toMatchObject({ URL_SOURCE: "d1" });
    expect(varsOf(["--var=MIRROR_SITEMAPS:https://a.example:8443/s.xml"])).toMatchObject({ MIRROR_SITEMAPS: "https://a.example:8443/s.xml" });
    // Words after `--` are not options.
    expect(varsOf(["--", "--var", "URL_SOURCE:kv"])).not.toHaveProperty("URL_SOURCE");
  });

  it("takes URL_SOURCE and MANIFEST_STORE from the environment, and a --var over them, as wrangler orders them", () => {
    const plan = startPlan(["--var", "URL_SOURCE:d1"], { URL_SOURCE: "kv", MANIFEST_STORE: "kv", OTHER: "x" });
    expect(plan.vars).toEqual({ SITES: "http://localhost:8787", URL_SOURCE: "d1", MANIFEST_STORE: "kv" });
    // wrangler merges repeated --var in order (the last wins): ours first, the passed-through ones after.
    const args = plan.wranglerArgs;
    expect(args.indexOf("URL_SOURCE:kv")).toBeGreaterThan(-1);
    expect(args.indexOf("URL_SOURCE:d1")).toBeGreaterThan(args.indexOf("URL_SOURCE:kv"));
  });

  it("sets the port and SITES from --port, and passes --persist-to and --env-file on to wrangler and the seeding", () => {
    const plan = startPlan(["--port=18401", "--persist-to", "/tmp/x", "--env-file", "a.env", "b.env", "--log-level", "warn"], {});
    expect(plan.port).toBe(18401);
    expect(plan.origin).toBe("http://localhost:18401");
    expect(plan.vars["SITES"]).toBe("http://localhost:18401");
    expect(plan.state).toEqual({ persistTo: "/tmp/x", envFiles: ["a.env", "b.env"] });
    expect(plan.wranglerArgs).toEqual([
      "dev",
      "--test-scheduled",
      "--infer-origin-from-routes=false",
      "--port",
      "18401",
      "--ip",
      "127.0.0.1",
      "--var",
      "SITES:http://localhost:18401",
      "--persist-to",
      "/tmp/x",
      "--env-file",
      "a.env",
      "b.env",
      "--log-level",
      "warn",
    ]);
    expect(startPlan(["--port", "18402"], {}).port).toBe(18402);
  });

  it("refuses what would make it seed another store than the Worker reads, and bad values, with a clear message", () => {
    for (const args of [["--env", "staging"], ["-e", "staging"], ["--config", "other.jsonc"], ["-c=other.jsonc"]]) {
      expect(() => startPlan(args, {}), args.join(" ")).toThrow(StartArgsError);
    }
    expect(() => startPlan(["--port", "http"], {})).toThrow(/--port must be a TCP port/);
    expect(() => startPlan(["--port", "70000"], {})).toThrow(/--port must be a TCP port/);
    expect(() => startPlan(["--port"], {})).toThrow(/--port needs a value/);
    expect(() => startPlan(["--var"], {})).toThrow(/--var needs NAME:VALUE/);
  });

  it("takes --verbose out (wrangler has no such option): it only makes npm start show wrangler's own output", () => {
    const plan = startPlan(["--verbose", "--port", "18403"], {});
    expect(plan.verbose).toBe(true);
    expect(plan.wranglerArgs).not.toContain("--verbose");
    expect(startPlan([], {}).verbose).toBe(false);
    expect(() => startPlan(["--verbose=yes"], {})).toThrow(/--verbose takes no value/);
  });
});

describe("wrangler dev's start-up output under npm start", () => {
  it("is held until 'Ready on'; its warning and error blocks pass at once; everything after passes", () => {
    const gate = new DevOutputGate();
    const shown = (line: string) => gate.line(line);
    expect(shown(" ⛅️ wrangler 4.164.0")).toEqual({ show: false, ready: false });
    expect(shown("Your Worker has access to the following bindings:").show).toBe(false);
    expect(shown("env.DB (edge-sitemaps)     D1 Database     local").show).toBe(false);
    expect(shown("\x1b[33m▲ \x1b[43;33m[\x1b[43;30mWARNING\x1b[43;33m]\x1b[0m \x1b[1mProcessing wrangler.jsonc configuration:").show).toBe(true);
    expect(shown("    - unexpected field").show).toBe(true);
    expect(shown("  ").show).toBe(true); // a blank line inside the block is indented
    expect(shown("    - another").show).toBe(true);
    expect(shown("").show).toBe(true); // the end of the block
    expect(shown("Using secrets defined in .dev.vars").show).toBe(false);
    expect(shown("[wrangler:warn] Unable to fetch the `Request.cf` object!").show).toBe(false);
    expect(gate.ready).toBe(false);
    expect(shown("\x1b[32m[wrangler:info]\x1b[39m Ready on http://127.0.0.1:8787")).toEqual({ show: false, ready: true });
    expect(shown("[wrangler:info] GET /sitemap.xml 200 OK (12ms)")).toEqual({ show: true, ready: false });
    expect(shown("Your Worker has access to the following bindings:").show).toBe(true); // a reload after ready: shown
    expect(gate.held).toEqual([
      " ⛅️ wrangler 4.164.0",
      "Your Worker has access to the following bindings:",
      "env.DB (edge-sitemaps)     D1 Database     local",
      "Using secrets defined in .dev.vars",
      "[wrangler:warn] Unable to fetch the `Request.cf` object!",
    ]);
  });
});

/** A free port of this suite's range (18400–18499). */
async function freePort(): Promise<number> {
  for (let port = 18450; port < 18500; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error("no free port in 18450-18499");
}

/** Three sections over four shards at 1,000 URLs per shard. */
const records = (origin: string) => [...demoSection(origin, "pages", 700), ...demoSection(origin, "products", 1_800), ...demoSection(origin, "blog", 500)];
const SHARDS = ["blog-1", "pages-1", "products-1", "products-2"];

describe("npm start on fresh storage", () => {
  let cleanup: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await cleanup?.();
    cleanup = null;
  });

  /** Seeds as npm start does, starts `wrangler <plan.wranglerArgs>`, and returns the plan and the seeding's answer. */
  async function start(extraArgs: string[]) {
    const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-start-"));
    const envFile = join(dir, "empty.env");
    writeFileSync(envFile, "");
    const port = await freePort();
    const persistTo = join(dir, "state");
    const plan = startPlan(
      ["--port", String(port), "--persist-to", persistTo, "--env-file", envFile, "--var", "MAX_URLS_PER_SHARD:1000", ...extraArgs],
      {},
    );
    let child: ChildProcess | null = null;
    let output = "";
    const stop = async (): Promise<void> => {
      const proc = child;
      const running = (): boolean => proc !== null && proc.exitCode === null && proc.signalCode === null;
      if (!proc?.pid || !running()) return;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      process.kill(-proc.pid, "SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (running()) process.kill(-proc.pid, "SIGKILL");
    };
    cleanup = async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    };

    applyMigrations(persistTo, true);
    const seed = await seedIfEmpty(plan.origin, { vars: plan.vars, ...plan.state, records });
    // What each store holds, read before the Worker starts (through the same local storage).
    const proxy = await getPlatformProxy<Env>({ configPath: "wrangler.jsonc", persist: { path: join(persistTo, "v3") }, envFiles: [envFile] });
    const held = {
      d1Rows: ((await proxy.env.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1").bind(plan.origin).first<{ n: number }>())?.n ??
        0) as number,
      kvKeys: (await proxy.env.URLS.list({ limit: 10 })).keys.length,
    };
    await proxy.dispose();

    const proc = spawn("npx", ["wrangler", ...plan.wranglerArgs, "--show-interactive-dev-session=false"], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    });
    child = proc;
    proc.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`wrangler dev exited (${proc.exitCode}):\n${output}`);
      const res = await fetch(`${plan.origin}/sitemap-health-probe`).catch(() => null);
      if (res?.status === 404 && (await res.text()).startsWith("404 Not Found")) break;
      if (Date.now() > deadline) throw new Error(`wrangler dev did not start within 90 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return { plan, seed, held, stop, envFile, persistTo };
  }

  /** The index and every shard it lists: each a valid document answered whole, with its ETag. */
  async function expectEveryShardWhole(origin: string): Promise<void> {
    const index = await fetch(`${origin}/sitemap.xml`);
    expect(index.status).toBe(200);
    const indexXml = await index.text();
    expect(await validateXml(indexXml, "siteindex")).toEqual({ valid: true, errors: [] });
    const shards = locsOf(indexXml).filter((loc) => loc.endsWith(".xml"));
    expect(shards).toEqual(SHARDS.map((s) => `${origin}/sitemap-${s}.xml`));
    let urls = 0;
    for (const shard of shards) {
      const res = await fetch(shard);
      expect(res.status, shard).toBe(200);
      expect(res.headers.get("ETag"), shard).toMatch(/^".+"$/);
      expect(res.headers.get("Last-Modified"), shard).not.toBeNull();
      expect(res.headers.get("X-Sitemap-Source"), shard).toBe("live"); // no cron ran: nothing pre-rendered
      const xml = await res.text();
      expect(await validateXml(xml, "urlset"), shard).toEqual({ valid: true, errors: [] });
      urls += locsOf(xml).length;
    }
    expect(urls).toBe(3_000);
  }

  it("with `--var URL_SOURCE:kv`: seeds KV, not D1, and every listed shard is a valid sitemap", { timeout: 240_000 }, async () => {
    const { plan, seed, held } = await start(["--var", "URL_SOURCE:kv"]);
    expect(seed).toMatchObject({ store: "kv", seeded: 3_000, shards: 4 });
    expect(held.d1Rows).toBe(0);
    expect(held.kvKeys).toBeGreaterThan(0);
    await expectEveryShardWhole(plan.origin);
  });

  it("with URL_SOURCE=kv in the env file the Worker reads (as in .dev.vars): seeds KV", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-start-"));
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
    const envFile = join(dir, "kv.env");
    writeFileSync(envFile, "URL_SOURCE=kv\n");
    const persistTo = join(dir, "state");
    const plan = startPlan(["--port", "18499", "--persist-to", persistTo, "--env-file", envFile], {});
    expect(plan.vars).not.toHaveProperty("URL_SOURCE"); // not on the command line: the file decides
    applyMigrations(persistTo, true);
    const seed = await seedIfEmpty(plan.origin, { vars: plan.vars, ...plan.state, records });
    expect(seed).toMatchObject({ store: "kv", seeded: 3_000, shards: 3 });
    const proxy = await getPlatformProxy<Env>({ configPath: "wrangler.jsonc", persist: { path: join(persistTo, "v3") }, envFiles: [envFile] });
    try {
      expect(proxy.env.URL_SOURCE).toBe("kv");
      expect((await proxy.env.DB.prepare("SELECT COUNT(*) AS n FROM urls").first<{ n: number }>())?.n).toBe(0);
      expect((await proxy.env.URLS.list({ limit: 10 })).keys.length).toBeGreaterThan(0);
    } finally {
      await proxy.dispose();
    }
  });

  it("plain: seeds D1 and every listed shard has its ETag before any cron run", { timeout: 240_000 }, async () => {
    const { plan, seed, held, stop, envFile, persistTo } = await start([]);
    expect(seed).toMatchObject({ store: "d1", seeded: 3_000, shards: 4 });
    expect(held.d1Rows).toBe(3_000);
    expect(held.kvKeys).toBe(0);
    await expectEveryShardWhole(plan.origin);
    await stop();

    // Started again on the same storage: nothing to seed, and the manifest is not behind its rows.
    const again = await seedIfEmpty(plan.origin, { vars: plan.vars, ...plan.state, records });
    expect(again).toEqual({ store: "d1", seeded: 0, shards: -1, manifestRebuilt: false });

    // A row changed after the manifest was built (as in storage seeded by an older npm start, or
    // written outside the API): the next start rebuilds the manifest, once.
    const proxy = await getPlatformProxy<Env>({ configPath: "wrangler.jsonc", persist: { path: join(persistTo, "v3") }, envFiles: [envFile] });
    await proxy.env.DB.prepare("UPDATE urls SET updated_at = ?1 WHERE origin = ?2 AND section = 'pages'").bind(Date.now(), plan.origin).run();
    await proxy.dispose();
    const behind = await seedIfEmpty(plan.origin, { vars: plan.vars, ...plan.state, records });
    expect(behind).toEqual({ store: "d1", seeded: 0, shards: -1, manifestRebuilt: true });
  });
});

describe("npm start's output", () => {
  let proc: ChildProcess | null = null;
  let dir = "";
  afterEach(async () => {
    const running = proc;
    proc = null;
    if (running?.pid && running.exitCode === null && running.signalCode === null) {
      const exited = new Promise((resolve) => running.once("exit", resolve));
      process.kill(-running.pid, "SIGINT");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (running.exitCode === null && running.signalCode === null) process.kill(-running.pid, "SIGKILL");
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is one line per step, then where to look with the dashboard first; no wrangler table or Durable Object warning", { timeout: 240_000 }, async () => {
    dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-start-output-"));
    const envFile = join(dir, "admin.env");
    writeFileSync(envFile, "ADMIN_TOKEN=start-output-test-token-0123456789abcdef\n");
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    // As `npm start -- --port … --persist-to … --env-file …` runs it (a pipe, not a terminal).
    const child = spawn(process.execPath, ["scripts/start.ts", "--port", String(port), "--persist-to", join(dir, "state"), "--env-file", envFile], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    });
    proc = child;
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 200_000;
    while (!output.includes("Ctrl-C stops it")) {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`npm start was not ready within 200 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    // Where it points answers: the dashboard (its sign-in form, signed out) and the index.
    const dashboard = await fetch(`${origin}/sitemap-admin/`);
    expect(dashboard.status).toBe(401);
    expect(await dashboard.text()).toContain("<form");
    expect((await fetch(`${origin}/sitemap.xml`)).status).toBe(200);

    const lines = output.trimEnd().split("\n");
    expect(output).not.toMatch(/[┌┬┐├┼┤└┴┘│]/); // wrangler's migration and binding tables
    expect(output).not.toMatch(/Durable Object|WARNING|warn/i);
    expect(output).not.toMatch(/Migrations to be applied|Your Worker has access/);
    const migrations = readdirSync("migrations").filter((f) => f.endsWith(".sql")).length;
    expect(lines.slice(0, 3)).toEqual([
      `✓ D1 migrations applied (DB: ${migrations} new)`,
      expect.stringMatching(new RegExp(`^✓ demo seeded: 126,000 URLs into local D1 for ${origin} \\(4 shards, \\d+\\.\\d s\\)$`)),
      expect.stringMatching(/^✓ wrangler dev ready \(\d+\.\d s\)$/),
    ]);
    const list = lines.indexOf(`edge-sitemaps is running on ${origin}:`);
    expect(list).toBe(4);
    expect(lines[list + 1]).toMatch(new RegExp(`^  dashboard: +${origin}/sitemap-admin/ +\\(sign in with ADMIN_TOKEN from ${envFile}\\)$`));
    expect(lines.slice(list + 2).some((line) => line.includes(`${origin}/sitemap.xml`))).toBe(true);
    // The request log follows (wrangler's lines pass once it is ready).
    expect(lines.length).toBeLessThanOrEqual(16);
  });
});
