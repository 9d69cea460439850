/**
 * `npm start [-- --port N] [-- wrangler dev args]`: migrations, demo seed (when empty) into the
 * store the Worker will read, then `wrangler dev` with the cron test route. The site served is
 * http://localhost:PORT. `URL_SOURCE=kv npm start` and `npm start -- --var URL_SOURCE:kv` alike
 * seed and serve KV (scripts/start-plan.ts reads the passed-through arguments).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { ROBOTS_ORIGIN_URL_DEFAULT } from "../src/config/notify.ts";
import { configProblems, deploymentVars } from "./local-config.ts";
import { applyMigrations, seedIfEmpty } from "./local-db.ts";
import { StartArgsError, type StartPlan, startPlan } from "./start-plan.ts";

/**
 * Local secrets: a fresh clone has no .dev.vars (git-ignored), so the admin API (and with it
 * `npm run import`) would be off. Create one with a random ADMIN_TOKEN, from the example file.
 */
function ensureDevVars(): string {
  if (!existsSync(".dev.vars")) {
    const example = existsSync(".dev.vars.example") ? readFileSync(".dev.vars.example", "utf8") : "";
    writeFileSync(".dev.vars", `${example.replace(/^# ADMIN_TOKEN=.*$/m, "").trimEnd()}\nADMIN_TOKEN=${randomBytes(24).toString("hex")}\n`, {
      mode: 0o600,
    });
    return "created .dev.vars with a random ADMIN_TOKEN (local only, git-ignored)";
  }
  return /^ADMIN_TOKEN=\S+/m.test(readFileSync(".dev.vars", "utf8")) ? "ADMIN_TOKEN from .dev.vars" : "no ADMIN_TOKEN in .dev.vars: the admin API is off";
}

let plan: StartPlan;
try {
  plan = startPlan(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof StartArgsError)) throw err;
  console.error(err.message);
  process.exit(2);
}
const { origin } = plan;

const devVars = ensureDevVars();
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
const robotsNote = robotsLoops ? "no origin file: set --var ROBOTS_ORIGIN_URL:<your origin's robots.txt>" : "from ROBOTS_ORIGIN_URL";
applyMigrations(plan.state.persistTo);
const started = Date.now();
// Into the store the Worker will read: URL_SOURCE from wrangler.jsonc, .dev.vars (or --env-file),
// the environment or --var, as wrangler resolves it.
const seed = await seedIfEmpty(origin, { vars: plan.vars, ...plan.state });
const store = seed.store.toUpperCase();
if (seed.seeded > 0) {
  console.log(`Seeded ${seed.seeded} demo URLs into local ${store} for ${origin} in ${Date.now() - started} ms (${seed.shards} shards).`);
} else {
  console.log(`Local ${store} already has URLs for ${origin}; not seeding${seed.manifestRebuilt ? " (its manifest was behind its rows: rebuilt)" : ""}.`);
}

console.log(`
  edge-sitemaps is starting on ${origin}
    index:      ${origin}/sitemap.xml
    a shard:    ${origin}/sitemap-products-1.xml   (.xml.gz for the gzip file)
    cron:       ${origin}/__scheduled?cron=17+*+*+*+*
    robots.txt: ${origin}/robots.txt   (${robotsNote})
    admin API:  ${origin}/sitemap-admin/status   (${devVars})
    import:     npm run import -- my-sitemap.xml.gz
`);

const child = spawn("npx", ["wrangler", ...plan.wranglerArgs], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
