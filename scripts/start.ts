/**
 * `npm start [-- --port N] [-- --verbose] [-- --demo-sites N] [-- --crawler-ranges-local] [-- wrangler dev args]`: migrations, demo seed (when
 * empty) into the store the Worker will read, then `wrangler dev` with the cron test route. The
 * site served is http://localhost:PORT. `URL_SOURCE=kv npm start` and `npm start -- --var
 * URL_SOURCE:kv` alike seed and serve KV (scripts/start-plan.ts reads the passed-through arguments).
 *
 * It prints one line per step and, once the server is ready, where to look (the dashboard first);
 * wrangler's own output (tables, warnings of the seeding's platform proxy, the dev server's
 * start-up) is held back (scripts/start-prepare.ts, DevOutputGate) and printed when a step fails.
 * `--verbose` shows all of it as it comes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseEnv } from "node:util";
import { ROBOTS_ORIGIN_URL_DEFAULT } from "../src/config/notify.ts";
import { configProblems, deploymentVars } from "./local-config.ts";
import { serveLocalCrawlerRanges } from "./local-crawler-ranges.ts";
import { forgetLocalServer, recordLocalServer } from "./local-server.ts";
import { type AdminAccess, DevOutputGate, demoSitesLine, migrationsLine, seedLine, stepLine, whereToLook } from "./start-output.ts";
import { StartArgsError, type StartPlan, startPlan } from "./start-plan.ts";
import type { PrepareMessage, PrepareRequest } from "./start-prepare.ts";

/**
 * Local secrets: a fresh clone has no .dev.vars (git-ignored), so the admin API (and with it
 * `npm run import`) would be off. Create one with a random ADMIN_TOKEN, from the example file.
 * With `--env-file` wrangler reads those files instead, and so does this.
 */
function adminAccess(plan: StartPlan): AdminAccess {
  if (plan.vars["ADMIN_TOKEN"]) return { token: "from", where: "--var" };
  const envFiles = plan.state.envFiles ?? [];
  if (envFiles.length > 0) {
    const has = envFiles.some((file) => existsSync(file) && Boolean(parseEnv(readFileSync(file, "utf8"))["ADMIN_TOKEN"]));
    return { token: has ? "from" : "missing", where: envFiles.join(", ") };
  }
  if (!existsSync(".dev.vars")) {
    const example = existsSync(".dev.vars.example") ? readFileSync(".dev.vars.example", "utf8") : "";
    writeFileSync(".dev.vars", `${example.replace(/^# ADMIN_TOKEN=.*$/m, "").trimEnd()}\nADMIN_TOKEN=${randomBytes(24).toString("hex")}\n`, {
      mode: 0o600,
    });
    console.log(stepLine("created .dev.vars with a random ADMIN_TOKEN (local only, git-ignored)"));
  }
  return { token: /^ADMIN_TOKEN=\S+/m.test(readFileSync(".dev.vars", "utf8")) ? "from" : "missing", where: ".dev.vars" };
}

/** On a terminal (and without --verbose, whose output would interleave), what is under way, replaced by its result line. */
let live = Boolean(process.stdout.isTTY);
let pendingShown = false;
const pending = (text: string): void => {
  if (!live) return;
  process.stdout.write(`… ${text}`);
  pendingShown = true;
};
/** Clears what `pending` wrote, so that the next line starts on a line of its own. */
const clearPending = (): void => {
  if (pendingShown) process.stdout.write("\r\x1b[K");
  pendingShown = false;
};
const done = (line: string): void => {
  clearPending();
  console.log(line);
};

/** Collects a child's stdout and stderr (printed only if it fails), or lets them through with --verbose. */
function captured(child: ChildProcess): () => string {
  const chunks: Buffer[] = [];
  child.stdout?.on("data", (d: Buffer) => chunks.push(d));
  child.stderr?.on("data", (d: Buffer) => chunks.push(d));
  return () => Buffer.concat(chunks).toString("utf8");
}

function fail(what: string, output: string): never {
  clearPending();
  if (output) process.stderr.write(output.endsWith("\n") ? output : `${output}\n`);
  console.error(`npm start: ${what}${output ? " (wrangler's output above)" : ""}`);
  process.exit(1);
}

/** Migrations and the demo seed, in scripts/start-prepare.ts. */
async function prepare(plan: StartPlan): Promise<void> {
  const request: PrepareRequest = { origin: plan.origin, vars: plan.vars, state: plan.state, demoSites: plan.demoSites };
  const child = spawn(process.execPath, [...process.execArgv, "scripts/start-prepare.ts", JSON.stringify(request)], {
    stdio: ["ignore", plan.verbose ? "inherit" : "pipe", plan.verbose ? "inherit" : "pipe", "ipc"],
  });
  const output = captured(child);
  pending("applying D1 migrations");
  let refused: string | null = null;
  child.on("message", (message: PrepareMessage) => {
    if (message.step === "migrations") {
      done(migrationsLine(message.databases));
      pending("seeding the demo data if the site has none (about 15 s the first time)");
    } else if (message.step === "refused") {
      refused = message.reason;
    } else if (message.step === "demo-sites") {
      done(demoSitesLine(message.sites, message.ms));
    } else {
      done(seedLine(message.seed, plan.origin, message.ms));
      if (plan.demoSites > 0) pending(`registering ${plan.demoSites} demo sites`);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (refused !== null) fail(refused, "");
  if (code !== 0) fail(`preparing the local stores failed (exit ${code})`, output());
}

/** `wrangler dev`: its start-up held back until it is ready, then where to look, then its request log. */
function serve(plan: StartPlan, admin: AdminAccess, robotsNote: string, rangesFetched: Promise<void> | null): void {
  const started = Date.now();
  // `npm run import` with no --url finds this server by it (scripts/local-server.ts), until it stops.
  recordLocalServer(process.cwd(), plan.origin);
  process.on("exit", () => forgetLocalServer(process.cwd(), plan.origin));
  if (plan.verbose) {
    for (const line of whereToLook(plan.origin, admin, true, robotsNote)) console.log(line);
    const child = spawn("npx", ["wrangler", ...plan.wranglerArgs], { stdio: "inherit" });
    forward(child);
    child.on("exit", (code) => process.exit(code ?? 0));
    return;
  }
  const color = process.stdout.isTTY && !process.env["NO_COLOR"] ? { FORCE_COLOR: "1" } : {};
  const child = spawn("npx", ["wrangler", ...plan.wranglerArgs], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...color } });
  forward(child);
  pending("starting wrangler dev");
  const gate = new DevOutputGate();
  for (const [stream, out] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    if (!stream) continue;
    createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
      const { show, ready } = gate.line(line);
      if (ready) {
        done(stepLine(`wrangler dev ready (${((Date.now() - started) / 1000).toFixed(1)} s)`));
        // With the stand-in ranges, "running" is said once they are in: the recipe's first Googlebot fetch is verified.
        void (rangesFetched ? firstHeartbeat(plan.origin, rangesFetched) : Promise.resolve()).then(() => {
          console.log("");
          for (const where of whereToLook(plan.origin, admin, false, robotsNote)) console.log(where);
          console.log("");
        });
      } else if (show) {
        clearPending();
        out.write(`${line}\n`);
      }
    });
  }
  child.on("exit", (code) => {
    if (!gate.ready) fail(`wrangler dev exited before it was ready (exit ${code})`, `${gate.held.join("\n")}\n`);
    process.exit(code ?? 0);
  });
}

/** The range lists need a heartbeat's `crawler-ranges` job: one is run now, so the crawler log verifies from the first request. */
async function firstHeartbeat(origin: string, rangesFetched: Promise<void>): Promise<void> {
  const waited = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 30_000).unref());
  try {
    await fetch(`${origin}/__scheduled?cron=17+*+*+*+*`);
  } catch {
    // Said below: the lists were not fetched.
  }
  if (await Promise.race([rangesFetched.then(() => true), waited])) {
    // The job stores the lists right after it fetched them.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    console.log(stepLine("crawler ranges in (the first heartbeat fetched the stand-in lists): a request with Googlebot's User-Agent is verified"));
  } else {
    console.log(stepLine(`crawler ranges not fetched within 30 s: run a heartbeat (curl "${origin}/__scheduled?cron=17+*+*+*+*")`));
  }
}

function forward(child: ChildProcess): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
}

let plan: StartPlan;
try {
  plan = startPlan(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof StartArgsError)) throw err;
  console.error(err.message);
  process.exit(2);
}
if (plan.verbose) live = false;

let rangesFetched: Promise<void> | null = null;
if (plan.crawlerRangesLocal) {
  // Before the configuration check: it checks this value too.
  const { value: ranges, fetched } = await serveLocalCrawlerRanges();
  rangesFetched = fetched;
  plan.vars["CRAWLER_IP_RANGES"] = ranges;
  plan.wranglerArgs.splice(1, 0, "--var", `CRAWLER_IP_RANGES:${ranges}`);
  console.log(stepLine(`crawler IP ranges served locally (127.0.0.0/8, ::1): ${ranges}`));
}
const admin = adminAccess(plan);
// Loud locally: production would turn a feature off (or answer 503) over any of these.
const sources = { overrides: plan.vars, processEnv: {}, ...(plan.state.envFiles?.length ? { envFiles: plan.state.envFiles } : {}) };
const problems = configProblems(sources);
if (problems.length > 0) {
  for (const problem of problems) console.error(problem.message);
  console.error("npm start refuses this configuration: fix it in wrangler.jsonc, .dev.vars or the --var arguments (npm run check-config)");
  process.exit(2);
}
// Nothing stands behind `wrangler dev`: the default ROBOTS_ORIGIN_URL would reach this very Worker,
// a loop (/robots.txt answers 503, status shows it; docs/notify.md). Unless one is set: none.
const robotsLoops = (deploymentVars(sources)["ROBOTS_ORIGIN_URL"] ?? ROBOTS_ORIGIN_URL_DEFAULT) === ROBOTS_ORIGIN_URL_DEFAULT;
if (robotsLoops) plan.wranglerArgs.splice(1, 0, "--var", "ROBOTS_ORIGIN_URL:none");
const robotsNote = robotsLoops ? "no origin file: --var ROBOTS_ORIGIN_URL:<your origin's robots.txt>" : "from ROBOTS_ORIGIN_URL";
await prepare(plan);
serve(plan, admin, robotsNote, rangesFetched);
