/**
 * `npm run deploy`: from a fresh clone to a deployed Worker in one command (docs/deploy.md).
 *
 *   npm run deploy                 the queues wrangler.jsonc names, created when missing (automatic
 *                                  provisioning does not cover queues in wrangler 4.164: it creates
 *                                  KV, D1 and R2 only, and `wrangler deploy` refuses a consumer of a
 *                                  queue that does not exist), then wrangler deploy (provisions D1/KV
 *                                  bindings that have no id and writes the ids back), then the
 *                                  migrations of every D1 binding remotely, then the sitemap URLs and
 *                                  the secrets still unset
 *   npm run deploy -- --dry-run    everything that needs no account: the configuration check, the
 *                                  bundle (`wrangler deploy --dry-run`) and its gzip size against the
 *                                  plan limits, the migrations of every D1 binding, and the queues
 *                                  (producer, consumers and dead-letter queues that exist)
 *   npm run deploy -- --plan       prints the commands the real deploy runs, runs nothing
 *
 * Extra arguments after the mode go to `wrangler deploy` (e.g. `--env staging`).
 * EDGE_SITEMAPS_WRANGLER names another wrangler entry script (run with this Node): the tests put a
 * recording stand-in there to check the real path's commands without an account.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { unstable_readConfig } from "wrangler";
import { VARIABLES } from "../src/config/variables/index.ts";
import { parseConfig } from "../src/config.ts";
import { configProblems } from "./local-config.ts";
import { databaseListProblems, recordDeployedLists } from "./partitions-lock.ts";

/**
 * Compressed Worker size limits (Cloudflare Workers "Limits" page, "Worker size": 3 MB on the Free
 * plan, 10 MB on Paid, after compression). Read as 10^6-byte MB: the smaller reading is the safe one.
 */
export const PLAN_LIMITS = [
  { plan: "Free", bytes: 3 * 1000 * 1000 },
  { plan: "Paid", bytes: 10 * 1000 * 1000 },
] as const;

/** `wrangler secret list --format json` is a short list of names; more than this is not it. */
const MAX_SECRET_LIST_BYTES = 256 * 1024;

export interface Step {
  /** What the step does, for the plan and the log. */
  why: string;
  args: readonly string[];
}

interface D1Binding {
  binding: string;
  migrations_dir?: string;
}

/** What wrangler.jsonc says of queues (`queues.producers`, `queues.consumers`). */
interface QueuesConfig {
  producers?: readonly { binding: string; queue?: string }[];
  consumers?: readonly { queue: string; dead_letter_queue?: string }[];
}

/** Every queue the Worker sends to or consumes, dead-letter queues included, each once. */
export function queueNames(queues: QueuesConfig | undefined): string[] {
  const names = [
    ...(queues?.producers ?? []).flatMap((p) => (p.queue ? [p.queue] : [])),
    ...(queues?.consumers ?? []).flatMap((c) => [c.queue, ...(c.dead_letter_queue ? [c.dead_letter_queue] : [])]),
  ];
  return [...new Set(names)];
}

/** Per queue: `queues info` (does it exist?) and, when that fails, `queues create`. */
export function queueSteps(names: readonly string[]): { info: Step; create: Step }[] {
  return names.map((name) => ({
    info: { why: `does queue ${name} exist?`, args: ["queues", "info", name] },
    create: { why: `create queue ${name} (not provisioned by wrangler deploy)`, args: ["queues", "create", name] },
  }));
}

/** The real deploy, in order: every command a reader can check before running it. */
export function deployPlan(d1: readonly D1Binding[], extra: readonly string[], queues: readonly string[] = []): Step[] {
  return [
    ...queueSteps(queues).map((q) => ({ why: `${q.create.why}, unless \`queues info\` finds it`, args: q.create.args })),
    { why: "bundle, upload, and provision every D1/KV binding without an id (ids written back to wrangler.jsonc)", args: ["deploy", ...extra] },
    ...d1.map((d) => ({ why: `apply the migrations of ${d.binding}`, args: ["d1", "migrations", "apply", d.binding, "--remote"] })),
    { why: "which secrets are set (names only)", args: ["secret", "list", "--format", "json"] },
  ];
}

/** Declared secrets missing from `wrangler secret list`'s answer, with what their absence turns off. */
export function unsetSecrets(listed: readonly string[]): { name: string; unset: string }[] {
  const have = new Set(listed);
  return VARIABLES.filter((v) => v.secret && !have.has(v.name)).map((v) => ({ name: v.name, unset: v.unset ?? "—" }));
}

/** The names in `wrangler secret list --format json` output; null when it is not that. */
export function secretNames(output: string): string[] | null {
  if (output.length > MAX_SECRET_LIST_BYTES) return null;
  const start = output.indexOf("[");
  if (start < 0) return null;
  try {
    const list = JSON.parse(output.slice(start)) as unknown;
    if (!Array.isArray(list)) return null;
    return list.flatMap((s) => (s && typeof s === "object" && typeof (s as { name?: unknown }).name === "string" ? [(s as { name: string }).name] : []));
  } catch {
    return null;
  }
}

/** Gzip bytes of every module in the bundle directory (source maps and wrangler's README left out). */
export function bundleGzipBytes(dir: string): { files: number; raw: number; gzip: number } {
  let files = 0;
  let raw = 0;
  let gzip = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (!statSync(path).isFile() || name.endsWith(".map") || name === "README.md") continue;
    const bytes = readFileSync(path);
    files++;
    raw += bytes.byteLength;
    gzip += gzipSync(bytes).byteLength;
  }
  return { files, raw, gzip };
}

const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;

/** One line per plan: the share of its limit the bundle takes, and whether it fits. */
export function sizeReport(gzip: number): { lines: string[]; fitsSomePlan: boolean } {
  const lines = PLAN_LIMITS.map(
    (p) => `  ${p.plan.padEnd(5)} ${(p.bytes / 1e6).toFixed(0)} MB: ${((gzip / p.bytes) * 100).toFixed(1)}% ${gzip <= p.bytes ? "fits" : "TOO BIG"}`,
  );
  return { lines, fitsSomePlan: PLAN_LIMITS.some((p) => gzip <= p.bytes) };
}

const ROOT = fileURLToPath(new URL("../", import.meta.url));

function wranglerEntry(): string {
  const override = process.env["EDGE_SITEMAPS_WRANGLER"];
  return override ? resolve(override) : join(ROOT, "node_modules/wrangler/bin/wrangler.js");
}

/** Runs wrangler with this Node; true when it exited 0. Its output is not shown (a probe). */
function wranglerSucceeds(step: Step): boolean {
  console.log(`\n> wrangler ${step.args.join(" ")}    # ${step.why}`);
  const run = spawnSync(process.execPath, [wranglerEntry(), ...step.args], {
    cwd: ROOT,
    stdio: ["inherit", "ignore", "ignore"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  return run.status === 0;
}

/** Runs wrangler with this Node; `capture` returns stdout instead of showing it. Exits on failure. */
function wrangler(step: Step, capture = false): string {
  console.log(`\n> wrangler ${step.args.join(" ")}    # ${step.why}`);
  const run = spawnSync(process.execPath, [wranglerEntry(), ...step.args], {
    cwd: ROOT,
    stdio: ["inherit", capture ? "pipe" : "inherit", "inherit"],
    encoding: "utf8",
    maxBuffer: MAX_SECRET_LIST_BYTES * 4,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  if (run.status !== 0) {
    console.error(`\ndeploy stopped: \`wrangler ${step.args.join(" ")}\` exited with ${run.status ?? run.signal}`);
    process.exit(1);
  }
  return capture ? (run.stdout ?? "") : "";
}

interface Project {
  d1: D1Binding[];
  queues: string[];
  vars: Record<string, unknown>;
  hasRoutes: boolean;
}

function readProject(): Project {
  const config = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
  return {
    d1: config.d1_databases.map((d: D1Binding) => ({ binding: d.binding, ...(d.migrations_dir ? { migrations_dir: d.migrations_dir } : {}) })),
    queues: queueNames(config.queues as QueuesConfig),
    vars: config.vars as Record<string, unknown>,
    hasRoutes: (config.routes?.length ?? 0) > 0 || config.route !== undefined,
  };
}

/** What production runs with: wrangler.jsonc's vars (of `--env`'s environment) and declared names from the environment, never `.dev.vars`. */
function productionSources(extra: readonly string[]) {
  const envAt = extra.indexOf("--env");
  const env = envAt >= 0 ? extra[envAt + 1] : undefined;
  return { configPath: join(ROOT, "wrangler.jsonc"), devVarsPath: null, ...(env ? { env } : {}) };
}

/**
 * The configuration check of `npm run check-config` (scripts/local-config.ts) on what production
 * runs with (local secrets are not deployed), and each partitioned site's database list against
 * the one deployed last (scripts/partitions-lock.ts). Exits on any problem (variable and rule,
 * never the value; a list that reorders, repoints, replaces or drops a database).
 */
function checkConfig(project: Project, extra: readonly string[]): ReturnType<typeof parseConfig> {
  const sources = productionSources(extra);
  const problems = [...configProblems(sources).map((p) => p.message), ...databaseListProblems(sources)];
  if (problems.length > 0) {
    for (const problem of problems) console.error(`configuration: ${problem}`);
    process.exit(1);
  }
  const config = parseConfig(project.vars);
  console.log(`configuration: ok (${config.sites.size} site${config.sites.size === 1 ? "" : "s"}: ${[...config.sites].join(", ")})`);
  return config;
}

function listMigrations(d1: readonly D1Binding[]): void {
  for (const d of d1) {
    const dir = join(ROOT, d.migrations_dir ?? "migrations");
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort();
    console.log(`migrations of ${d.binding} (${d.migrations_dir ?? "migrations"}): ${files.length}`);
    for (const f of files) console.log(`  ${f}`);
  }
}

function dryRun(project: Project, extra: readonly string[]): void {
  checkConfig(project, extra);
  const outdir = mkdtempSync(join(tmpdir(), "edge-sitemaps-bundle-"));
  try {
    wrangler({ why: "bundle without uploading", args: ["deploy", "--dry-run", "--outdir", outdir, ...extra] });
    const size = bundleGzipBytes(outdir);
    const report = sizeReport(size.gzip);
    console.log(`\nbundle: ${size.files} module${size.files === 1 ? "" : "s"}, ${kib(size.raw)}, gzip ${kib(size.gzip)} (${size.gzip} bytes)`);
    console.log("against the compressed Worker size limits:");
    for (const line of report.lines) console.log(line);
    listMigrations(project.d1);
    console.log(`queues (created by \`npm run deploy\` when missing): ${project.queues.length > 0 ? project.queues.join(", ") : "none"}`);
    if (!report.fitsSomePlan) {
      console.error("deploy would fail: the bundle is over every plan's limit");
      process.exit(1);
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
  console.log("\ndry run: ok (nothing was uploaded; `npm run deploy -- --plan` shows what a deploy runs)");
}

function sitemapUrls(project: Project, sites: ReadonlySet<string>): void {
  console.log("\nsitemaps:");
  for (const origin of sites) console.log(`  ${origin}/sitemap.xml`);
  if ([...sites].some((o) => /^https?:\/\/(localhost|127\.)/.test(o))) {
    console.log('  SITES still names a local origin: set your site\'s origin in wrangler.jsonc "vars" and deploy again');
  }
  if (!project.hasRoutes)
    console.log('  no "routes" in wrangler.jsonc: route example.com/sitemap* and example.com/robots.txt to the Worker (README "Deploy")');
}

function deploy(project: Project, extra: readonly string[]): void {
  const config = checkConfig(project, extra);
  const envArgs = extra.includes("--env") ? ["--env", extra[extra.indexOf("--env") + 1] ?? ""] : [];
  for (const q of queueSteps(project.queues)) {
    if (!wranglerSucceeds({ ...q.info, args: [...q.info.args, ...envArgs] })) wrangler({ ...q.create, args: [...q.create.args, ...envArgs] });
  }
  const steps = deployPlan(project.d1, extra);
  for (const step of steps.slice(0, -1)) wrangler(step);
  // Deployed and migrated: the partitioned sites' lists, with the ids the deploy provisioned, are what the next deploy is checked against.
  const lock = recordDeployedLists(productionSources(extra));
  if (lock) console.log(`\ndatabase lists of the sites recorded in ${lock}: commit it with wrangler.jsonc`);
  const names = secretNames(wrangler(steps.at(-1)!, true));
  sitemapUrls(project, config.sites);
  if (names === null) {
    console.log("\nsecrets: could not read `wrangler secret list`; check with `npx wrangler secret list`");
    return;
  }
  const missing = unsetSecrets(names);
  console.log(missing.length === 0 ? "\nsecrets: all set" : "\nsecrets still unset (each is optional; set with `npx wrangler secret put NAME`):");
  for (const s of missing) console.log(`  ${s.name.padEnd(20)} ${s.unset}`);
}

function main(argv: readonly string[]): void {
  const modes = argv.filter((a) => a === "--dry-run" || a === "--plan");
  const extra = argv.filter((a) => a !== "--dry-run" && a !== "--plan");
  if (modes.length > 1) {
    console.error("use one of --dry-run and --plan");
    process.exit(2);
  }
  const project = readProject();
  if (modes[0] === "--dry-run") {
    dryRun(project, extra);
    return;
  }
  if (modes[0] === "--plan") {
    console.log("npm run deploy runs, in order:");
    for (const step of deployPlan(project.d1, extra, project.queues)) console.log(`  npx wrangler ${step.args.join(" ")}    # ${step.why}`);
    console.log("and, after the migrations, records each site's database list in partitions.lock.json");
    return;
  }
  deploy(project, extra);
}

// Imported by the tests for its pure parts; run as a script, it deploys.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
