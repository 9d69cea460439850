/**
 * `npm run deploy` (scripts/deploy.ts, docs/deploy.md):
 * - `--dry-run` on a clean copy of the project (what git would check out: no .dev.vars, no
 *   .wrangler state) exits 0 and prints the configuration check, the bundle's gzip size against
 *   the plan limits and every D1 binding's migrations, changing no file;
 * - the real path, with a recording stand-in for wrangler (no account here): deploy, then each D1
 *   binding's migrations remotely, then the secret list; it prints the sitemap URL and the
 *   secrets still unset, and stops at the first failing command;
 * - wrangler.jsonc carries no placeholder ids (automatic provisioning).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { PLAN_LIMITS, deployPlan, secretNames, sizeReport, unsetSecrets } from "../../scripts/deploy.ts";
import { CPU_MS, RETRY_DELAY_SECONDS, STEP_BUDGET_MS } from "../../src/jobs/budget.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
let clone: string;
const scratch: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-fake-"));
  scratch.push(dir);
  return dir;
};

/** The project as a fresh clone has it: tracked and not-ignored files only, node_modules linked. */
function cleanCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-clone-"));
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && existsSync(join(ROOT, f)));
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

function npmDeploy(cwd: string, args: string[], env: Record<string, string> = {}) {
  const run = spawnSync("npm", ["run", "--silent", "deploy", "--", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", ...env },
    timeout: 120_000,
  });
  return { status: run.status, out: `${run.stdout}\n${run.stderr}` };
}

/** A wrangler stand-in: records each call's arguments, answers `secret list` with ADMIN_TOKEN set; exits 3 for calls starting with `failOn`. */
function fakeWrangler(dir: string, failOn: string | null): { script: string; calls: () => string[] } {
  const log = join(dir, "calls.log");
  const script = join(dir, "fake-wrangler.mjs");
  writeFileSync(
    script,
    `import { appendFileSync } from "node:fs";
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(log)}, args.join(" ") + "\\n");
if (${JSON.stringify(failOn)} !== null && args.join(" ").startsWith(${JSON.stringify(failOn)})) process.exit(3);
if (args[0] === "secret") console.log(JSON.stringify([{ name: "ADMIN_TOKEN", type: "secret_text" }]));
`,
  );
  return { script, calls: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []) };
}

beforeAll(() => {
  clone = cleanCopy();
});
afterAll(() => {
  for (const dir of [clone, ...scratch]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("wrangler.jsonc", () => {
  it("has no placeholder ids: D1 and KV bindings are provisioned by the first deploy", () => {
    const config = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
    expect(config.d1_databases.length).toBeGreaterThan(0);
    for (const d of config.d1_databases) expect(d.database_id).toBeUndefined();
    expect(config.kv_namespaces.length).toBeGreaterThan(0);
    for (const kv of config.kv_namespaces) expect(kv.id).toBeUndefined();
    expect(readFileSync(join(ROOT, "wrangler.jsonc"), "utf8")).not.toMatch(/"(database_)?id"\s*:\s*"0{8}/);
  });

  it("declares the JOBS queue, its consumer (one job per invocation) and a dead-letter queue", () => {
    const config = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
    expect(config.queues.producers).toEqual([expect.objectContaining({ binding: "JOBS", queue: "edge-sitemaps-jobs" })]);
    const consumer = config.queues.consumers?.find((c: { queue: string }) => c.queue === "edge-sitemaps-jobs");
    expect(consumer).toMatchObject({ max_batch_size: 1, dead_letter_queue: "edge-sitemaps-jobs-dlq" });
    expect(consumer?.max_retries).toBeGreaterThan(0);
    expect(config.queues.consumers?.some((c: { queue: string }) => c.queue === "edge-sitemaps-jobs-dlq")).toBe(true);
    // The consumer's retry delay is the one the jobs' state records for a failed step (src/jobs/budget.ts).
    expect(consumer?.retry_delay).toBe(RETRY_DELAY_SECONDS);
  });

  it("declares limits.cpu_ms, the CPU a job step takes half of (src/jobs/budget.ts), and the flag of the per-invocation meter", () => {
    const config = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
    expect(config.limits?.cpu_ms).toBe(CPU_MS);
    expect(STEP_BUDGET_MS).toBe(CPU_MS / 2);
    expect(CPU_MS).toBeLessThanOrEqual(300_000);
    expect(config.compatibility_flags).toContain("nodejs_als");
  });
});

describe("npm run deploy -- --dry-run on a clean clone", () => {
  it("exits 0 with the config check, the bundle size against both plans and every migration, changing nothing", () => {
    const before = readFileSync(join(clone, "wrangler.jsonc"), "utf8");
    const { status, out } = npmDeploy(clone, ["--dry-run"]);
    expect(status, out).toBe(0);
    expect(out).toMatch(/configuration: ok \(1 site: http:\/\/localhost:8787\)/);
    const gzip = Number(/gzip [\d.]+ KiB \((\d+) bytes\)/.exec(out)?.[1]);
    expect(gzip).toBeGreaterThan(10_000);
    expect(gzip).toBeLessThan(PLAN_LIMITS[0].bytes);
    // docs/deploy.md states what the dry run prints: within 5 % of today's bundle, or the doc is updated.
    const stated = Number(/gzip [\d.]+ KiB \((\d+) bytes\)/.exec(readFileSync(join(ROOT, "docs/deploy.md"), "utf8"))?.[1]);
    expect(Math.abs(stated - gzip) / gzip, `docs/deploy.md says ${stated} bytes, the dry run ${gzip}`).toBeLessThan(0.05);
    expect(out).toMatch(/Free\s+3 MB: [\d.]+% fits/);
    expect(out).toMatch(/Paid\s+10 MB: [\d.]+% fits/);
    expect(out).toContain("migrations of DB (migrations):");
    for (const f of execFileSync("ls", [join(ROOT, "migrations")], { encoding: "utf8" })
      .trim()
      .split("\n"))
      expect(out).toContain(`  ${f}`);
    expect(out).toContain("queues (created by `npm run deploy` when missing): edge-sitemaps-jobs, edge-sitemaps-jobs-dlq");
    expect(out).toContain("dry run: ok");
    // Nothing written into the project: no ids, no local secrets, no state.
    expect(readFileSync(join(clone, "wrangler.jsonc"), "utf8")).toBe(before);
    expect(existsSync(join(clone, ".dev.vars"))).toBe(false);
  });

  it("--plan prints the real path's commands and runs none of them", () => {
    const fake = fakeWrangler(tempDir(), null);
    const { status, out } = npmDeploy(clone, ["--plan"], { EDGE_SITEMAPS_WRANGLER: fake.script });
    expect(status, out).toBe(0);
    expect(out).toContain("npx wrangler queues create edge-sitemaps-jobs    #");
    expect(out).toContain("npx wrangler queues create edge-sitemaps-jobs-dlq    #");
    expect(out).toContain("npx wrangler deploy    #");
    expect(out).toContain("npx wrangler d1 migrations apply DB --remote");
    expect(out).toContain("npx wrangler secret list --format json");
    expect(fake.calls()).toEqual([]);
  });
});

describe("the real deploy path (wrangler replaced by a recording stand-in)", () => {
  it("deploys, migrates every D1 binding remotely, then names the sitemap and the unset secrets", () => {
    const fake = fakeWrangler(tempDir(), null);
    const { status, out } = npmDeploy(clone, ["--env", "staging"], { EDGE_SITEMAPS_WRANGLER: fake.script });
    expect(status, out).toBe(0);
    expect(fake.calls()).toEqual([
      "queues info edge-sitemaps-jobs --env staging",
      "queues info edge-sitemaps-jobs-dlq --env staging",
      "deploy --env staging",
      "d1 migrations apply DB --remote",
      "secret list --format json",
    ]);
    expect(out).toContain("http://localhost:8787/sitemap.xml");
    expect(out).toContain("SITES still names a local origin");
    expect(out).toMatch(/secrets still unset/);
    expect(out).toMatch(/^\s+INDEXNOW_KEY\s/m);
    expect(out).toMatch(/^\s+GSC_SERVICE_ACCOUNT\s/m);
    expect(out).not.toMatch(/^\s+ADMIN_TOKEN\s/m);
  });

  it("stops at the first failing command: no migrations after a failed deploy", () => {
    const fake = fakeWrangler(tempDir(), "deploy");
    const { status, out } = npmDeploy(clone, [], { EDGE_SITEMAPS_WRANGLER: fake.script });
    expect(status).toBe(1);
    expect(out).toContain("deploy stopped: `wrangler deploy` exited with 3");
    expect(fake.calls()).toEqual(["queues info edge-sitemaps-jobs", "queues info edge-sitemaps-jobs-dlq", "deploy"]);
  });

  it("creates the queues that do not exist yet (automatic provisioning does not), before the deploy that binds them", () => {
    const fake = fakeWrangler(tempDir(), "queues info");
    const { status, out } = npmDeploy(clone, [], { EDGE_SITEMAPS_WRANGLER: fake.script });
    expect(status, out).toBe(0);
    expect(fake.calls().slice(0, 5)).toEqual([
      "queues info edge-sitemaps-jobs",
      "queues create edge-sitemaps-jobs",
      "queues info edge-sitemaps-jobs-dlq",
      "queues create edge-sitemaps-jobs-dlq",
      "deploy",
    ]);
  });
});

describe("a partitioned site's database list (partitions.lock.json)", () => {
  it("is recorded after a deploy and its migrations; a later deploy of a reordered list stops before any wrangler command", () => {
    const project = cleanCopy();
    scratch.push(project);
    const config = join(project, "wrangler.jsonc");
    const databases = (list: string) =>
      writeFileSync(
        config,
        readFileSync(join(ROOT, "wrangler.jsonc"), "utf8")
          .replace(
            '"d1_databases": [',
            '"d1_databases": [\n    { "binding": "DB_2", "database_name": "edge-sitemaps-2", "migrations_dir": "migrations" },\n    { "binding": "DB_3", "database_name": "edge-sitemaps-3", "migrations_dir": "migrations" },',
          )
          .replace('"vars": {', `"vars": {\n    "SITE_DATABASES": "http://localhost:8787=${list}",`),
      );
    databases("DB,DB_2,DB_3");
    const first = fakeWrangler(tempDir(), null);
    const deployed = npmDeploy(project, [], { EDGE_SITEMAPS_WRANGLER: first.script });
    expect(deployed.status, deployed.out).toBe(0);
    expect(first.calls()).toContain("d1 migrations apply DB_3 --remote");
    expect(deployed.out).toContain("partitions.lock.json: commit it with wrangler.jsonc");
    const lock = JSON.parse(readFileSync(join(project, "partitions.lock.json"), "utf8")) as {
      workers: Record<string, Record<string, { binding: string }[]>>;
    };
    expect(lock.workers["edge-sitemaps"]?.["http://localhost:8787"]?.map((d) => d.binding)).toEqual(["DB", "DB_2", "DB_3"]);

    databases("DB,DB_3,DB_2");
    const second = fakeWrangler(tempDir(), null);
    const refused = npmDeploy(project, [], { EDGE_SITEMAPS_WRANGLER: second.script });
    expect(refused.status).toBe(1);
    expect(refused.out).toContain("configuration: configuration error: SITE_DATABASES for http://localhost:8787 lists DB_3 second");
    expect(second.calls()).toEqual([]);
  });
});

describe("deploy's parts", () => {
  it("plans one remote migration per D1 binding, in wrangler.jsonc's order", () => {
    const steps = deployPlan([{ binding: "DB" }, { binding: "DB_B" }], []);
    expect(steps.map((s) => s.args.join(" "))).toEqual([
      "deploy",
      "d1 migrations apply DB --remote",
      "d1 migrations apply DB_B --remote",
      "secret list --format json",
    ]);
  });

  it("reads secret names from wrangler's JSON (after any banner) and refuses what is not that list", () => {
    expect(secretNames('⛅️ wrangler\n[{"name":"ADMIN_TOKEN","type":"secret_text"},{"name":"INDEXNOW_KEY","type":"secret_text"}]')).toEqual([
      "ADMIN_TOKEN",
      "INDEXNOW_KEY",
    ]);
    expect(secretNames("not json")).toBeNull();
    expect(secretNames(`[${'{"name":"X"},'.repeat(30_000)}{"name":"Y"}]`)).toBeNull();
    expect(unsetSecrets(["ADMIN_TOKEN", "INDEXNOW_KEY", "GSC_SERVICE_ACCOUNT"])).toEqual([]);
    expect(unsetSecrets([]).map((s) => s.name)).toContain("ADMIN_TOKEN");
  });

  it("says which plan a bundle fits", () => {
    expect(sizeReport(2_000_000).fitsSomePlan).toBe(true);
    const paidOnly = sizeReport(5_000_000);
    expect(paidOnly.lines[0]).toContain("TOO BIG");
    expect(paidOnly.lines[1]).toContain("fits");
    expect(sizeReport(10_000_001).fitsSomePlan).toBe(false);
  });
});
