/**
 * `npm start [-- --port N]`: migrations, demo seed (when empty), then `wrangler dev` with the
 * cron test route. The site served is http://localhost:PORT.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { applyMigrations, seedIfEmpty } from "./local-db.ts";

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

const args = process.argv.slice(2);
const portFlag = args.indexOf("--port");
const port = portFlag >= 0 ? Number(args[portFlag + 1]) : 8787;
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`--port must be a TCP port, got ${args[portFlag + 1]}`);
  process.exit(2);
}
const rest = portFlag >= 0 ? [...args.slice(0, portFlag), ...args.slice(portFlag + 2)] : args;
const origin = `http://localhost:${port}`;
// `URL_SOURCE=kv npm start` (and MANIFEST_STORE=kv): read records (and manifests) from local KV.
const storeVars: Record<string, string> = {};
for (const name of ["URL_SOURCE", "MANIFEST_STORE"] as const) if (process.env[name]) storeVars[name] = process.env[name];
const store = storeVars["URL_SOURCE"] === "kv" ? "KV" : "D1";

const devVars = ensureDevVars();
applyMigrations();
const started = Date.now();
const seed = await seedIfEmpty(origin, { vars: { SITES: origin, ...storeVars } });
if (seed.seeded > 0) {
  console.log(`Seeded ${seed.seeded} demo URLs into local ${store} for ${origin} in ${Date.now() - started} ms (${seed.shards} shards).`);
} else {
  console.log(`Local ${store} already has URLs for ${origin}; not seeding.`);
}

console.log(`
  edge-sitemaps is starting on ${origin}
    index:      ${origin}/sitemap.xml
    a shard:    ${origin}/sitemap-products-1.xml   (.xml.gz for the gzip file)
    cron:       ${origin}/__scheduled?cron=17+*+*+*+*
    robots.txt: ${origin}/robots.txt
    admin API:  ${origin}/sitemap-admin/status   (${devVars})
    import:     npm run import -- my-sitemap.xml.gz
`);

const child = spawn(
  "npx",
  [
    "wrangler",
    "dev",
    "--test-scheduled",
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--var",
    `SITES:${origin}`,
    ...Object.entries(storeVars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
    ...rest,
  ],
  { stdio: "inherit" },
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
