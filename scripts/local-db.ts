/**
 * Local data for `npm start` (and the e2e harness): applies migrations to the local D1 that
 * `wrangler dev` uses and seeds the demo data set when the site has no records.
 *
 * Seeding goes to the record store the Worker will read (URL_SOURCE, decided as wrangler decides
 * the Worker's vars): D1 through multi-row INSERTs with `wrangler d1 execute --file` (≈ 8 s for
 * 126,000 rows here), KV through the platform proxy; then the manifest is built with the Worker's
 * own code (servicesFor(), so MANIFEST_STORE and SITE_DATABASES are honoured) through the platform
 * proxy. A site over several databases (SITE_DATABASES "origin=DB,DB_2,…") is seeded across them,
 * each record into its home partition, and each partition's manifest is built.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getPlatformProxy, unstable_readConfig } from "wrangler";
import { recordColumns } from "../src/adapters/d1/writer.ts";
import { kvBulkEntries } from "../src/adapters/kv/bulk.ts";
import { sitePrefix } from "../src/adapters/kv/layout.ts";
import { type Config, parseConfig } from "../src/config.ts";
import { type ValidRecord, validateBatch } from "../src/core/validate.ts";
import { type DemoInput, demoRecords, demoSection } from "../src/demo/demo-data.ts";
import { demoStamps } from "../src/demo/stamps.ts";
import { listedShards } from "../src/manifest/manifest.ts";
import { partitionOf } from "../src/partitions/home.ts";
import { servicesFor } from "../src/services.ts";
import type { Services } from "../src/services-type.ts";
import { rebuildManifest } from "../src/sitemaps.ts";

/** Rows per INSERT: ~300 × ~180 bytes stays far below D1's 100 KB statement limit. */
const ROWS_PER_INSERT = 300;

/** `wrangler …`: its stdout, also written to this process's stdout (and its stderr) unless quiet; a failure throws with its output. */
function wrangler(args: string[], quiet = false): string {
  const run = spawnSync("npx", ["wrangler", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  if (!quiet) {
    process.stdout.write(run.stdout ?? "");
    process.stderr.write(run.stderr ?? "");
  }
  if (run.status !== 0) {
    const output = quiet ? `\n${run.stdout ?? ""}${run.stderr ?? ""}` : "";
    throw new Error(`wrangler ${args.slice(0, 3).join(" ")} failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`})${output}`);
  }
  return run.stdout;
}

function persistArgs(persistTo?: string): string[] {
  return persistTo ? ["--persist-to", persistTo] : [];
}

export interface MigrationsApplied {
  binding: string;
  /** How many migrations this run applied (0: up to date); null when wrangler's output did not say. */
  applied: number | null;
}

/** How many migrations `wrangler d1 migrations apply` says it applies, from its output. */
export function appliedCount(output: string): number | null {
  if (/No migrations to apply/i.test(output)) return 0;
  const about = /About to apply (\d+) migration/i.exec(output);
  return about ? Number(about[1]) : null;
}

/** Migrations for every D1 database wrangler.jsonc binds: `DB` and the per-site ones of SITE_DATABASES. */
export function applyMigrations(persistTo?: string, quiet = false): MigrationsApplied[] {
  const databases: string[] = unstable_readConfig({ config: "wrangler.jsonc" }).d1_databases.map((d: { binding: string }) => d.binding);
  return databases.map((binding) => ({
    binding,
    applied: appliedCount(wrangler(["d1", "migrations", "apply", binding, "--local", ...persistArgs(persistTo)], quiet)),
  }));
}

/** Where the local Worker keeps its state and which env files it reads (wrangler dev's --persist-to and --env-file). */
export interface LocalState {
  persistTo?: string;
  /** `--env-file` paths: when given, wrangler reads these instead of `.dev.vars`. */
  envFiles?: string[];
}

/**
 * The bindings and vars the Worker will see: wrangler.jsonc's vars, then `.dev.vars` (or the env
 * files), then `vars` (what `wrangler dev --var` passes), in wrangler's own order of precedence.
 */
async function withLocalEnv<T>(vars: Record<string, string>, state: LocalState, use: (env: Env, config: Config) => Promise<T>): Promise<T> {
  const proxy = await getPlatformProxy<Env>({
    configPath: "wrangler.jsonc",
    ...(state.persistTo ? { persist: { path: join(state.persistTo, "v3") } } : {}),
    ...(state.envFiles?.length ? { envFiles: state.envFiles } : {}),
  });
  try {
    const env = { ...proxy.env, ...vars } as Env;
    return await use(env, parseConfig(env as unknown as Record<string, unknown>));
  } finally {
    await proxy.dispose();
  }
}

const sqlValue = (v: unknown): string =>
  v === null || v === undefined ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replaceAll("'", "''")}'`;

/** Multi-row INSERT statements for validated records (literal values, SQL-quoted). */
export function insertSql(records: readonly ValidRecord[], stampOf: (i: number) => number): string {
  const statements: string[] = [];
  for (let i = 0; i < records.length; i += ROWS_PER_INSERT) {
    const rows = records.slice(i, i + ROWS_PER_INSERT).map((r, j) => `(${[r.origin, ...recordColumns(r), stampOf(i + j)].map(sqlValue).join(",")})`);
    statements.push(`INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at) VALUES ${rows.join(",")};`);
  }
  return statements.join("\n");
}

export interface SeedOptions extends LocalState {
  /** The vars `wrangler dev` is given on its command line (`--var`): they win over the files. */
  vars: Record<string, string>;
  records?: (origin: string) => DemoInput[];
  quiet?: boolean;
}

export interface SeedResult {
  /** The record store the Worker reads (URL_SOURCE as the Worker will see it): where the demo went. */
  store: "d1" | "kv";
  seeded: number;
  /** Listed shards of the manifest built after seeding; -1 when nothing was seeded. */
  shards: number;
  /** Not seeded: whether the manifest was missing or behind its rows and was rebuilt. */
  manifestRebuilt: boolean;
}

/** The D1 bindings a site's records live in (SITE_DATABASES; several for a partitioned site). */
const bindingsOf = (config: Config, origin: string): readonly string[] => config.siteDatabases.get(origin) ?? ["DB"];

/** The services that hold a site's records and manifests: the site's database, or each of its partitions. */
const unitsOf = (env: Env, origin: string): Services[] => {
  const site = servicesFor(env, origin);
  return site.partitions ?? [site];
};

async function hasRecords(env: Env, config: Config, origin: string): Promise<boolean> {
  if (config.urlSource === "kv") return (await env.URLS.list({ prefix: sitePrefix(origin), limit: 1 })).keys.length > 0;
  for (const binding of bindingsOf(config, origin)) {
    const db = (env as unknown as Record<string, D1Database>)[binding]!;
    if ((await db.prepare("SELECT 1 AS one FROM urls WHERE origin = ?1 LIMIT 1").bind(origin).first()) !== null) return true;
  }
  return false;
}

/**
 * Seeds demo records for `origin` into the store the Worker will read (URL_SOURCE from
 * wrangler.jsonc, `.dev.vars` or the env files, and `vars`), unless the site already has records
 * there; then builds its manifest in the manifest store the Worker will read (MANIFEST_STORE).
 * A site that has records keeps them; its manifest is rebuilt only when missing or behind its rows.
 */
export async function seedIfEmpty(origin: string, options: SeedOptions): Promise<SeedResult> {
  const found = await withLocalEnv(options.vars, options, async (env, config) => {
    // The site's list first, before anything is written: one that leaves out or moves the database holding the site is refused here.
    await servicesFor(env, origin).databaseList?.assert();
    return { config, has: await hasRecords(env, config, origin) };
  });
  const store = found.config.urlSource;
  if (found.has) {
    const manifestRebuilt = await withLocalEnv(options.vars, options, async (env) => {
      let rebuilt = false;
      for (const unit of unitsOf(env, origin)) rebuilt = (await rebuildManifestIfBehind(unit, origin)) || rebuilt;
      return rebuilt;
    });
    return { store, seeded: 0, shards: -1, manifestRebuilt };
  }
  const { config } = found;
  const records = validateBatch((options.records ?? demoRecords)(origin), { sites: config.sites, defaultSection: config.defaultSection });
  const stampOf = demoStamps(records.length, Date.now(), config.regen.settleSeconds);
  if (store === "d1") {
    // A partitioned site: each record into the database its loc's hash names (src/partitions/home.ts).
    const bindings = bindingsOf(config, origin);
    const indices = bindings.map((): number[] => []);
    for (const [i, r] of records.entries()) indices[partitionOf(r.loc, bindings.length)]!.push(i);
    for (const [p, binding] of bindings.entries()) {
      const share = indices[p]!;
      if (share.length > 0)
        writeD1(
          binding,
          share.map((i) => records[i]!),
          (j) => stampOf(share[j]!),
          options.persistTo,
        );
    }
  }
  const shards = await withLocalEnv(options.vars, options, async (env) => {
    if (store === "kv") await writeKv(env, records, stampOf);
    let listed = 0;
    for (const unit of unitsOf(env, origin)) listed += listedShards(await rebuildManifest(unit, origin)).length;
    return listed;
  });
  return { store, seeded: records.length, shards, manifestRebuilt: false };
}

/** Demo records of each registered demo site. */
const DEMO_SITE_RECORDS = 50;

export interface DemoSitesResult {
  /** Registered by this run (the others were already). */
  registered: number;
  /** Demo records written (to the sites that had none). */
  seeded: number;
  origins: string[];
}

/**
 * `npm start -- --demo-sites N`: N registered sites (the site registry, docs/tenants.md) at
 * http://t1.test:PORT … http://tN.test:PORT, in the database bound as DB, each given 50 demo records
 * when it has none (URL_SOURCE=d1; with KV they are registered only). Their own tokens are never
 * shown (a random hash is stored): the platform token writes to every site, and
 * `POST /sitemap-admin/sites/{host}/token` gives one its own. The first heartbeat's registry sweep
 * schedules them (docs/jobs.md "Registered sites"). A site `SITES` names is left to the variables.
 */
export async function registerDemoSites(port: number, count: number, options: SeedOptions): Promise<DemoSitesResult> {
  const wanted = Array.from({ length: count }, (_, i) => `http://t${i + 1}.test:${port}`);
  const found = await withLocalEnv(options.vars, options, async (env, config) => {
    const origins = wanted.filter((o) => !config.sites.has(o));
    const now = Date.now();
    // Each row with its host (UNIQUE, migration 0027): a host registered already keeps its site.
    const { meta } = await env.DB.prepare(
      `INSERT INTO registry_sites (origin, settings, token_hash, created_at, updated_at, host)
       SELECT json_extract(value, '$[0]'), '{}', lower(hex(randomblob(32))), ?2, ?2, json_extract(value, '$[1]') FROM json_each(?1) WHERE true
       ON CONFLICT DO NOTHING`,
    )
      .bind(JSON.stringify(origins.map((o) => [o, new URL(o).hostname])), now)
      .run();
    const empty =
      config.urlSource === "d1"
        ? (
            await env.DB.prepare("SELECT value AS origin FROM json_each(?1) WHERE NOT EXISTS (SELECT 1 FROM urls WHERE origin = value)")
              .bind(JSON.stringify(origins))
              .all<{ origin: string }>()
          ).results.map((r) => r.origin)
        : [];
    return { config, origins, registered: meta.changes ?? 0, empty };
  });
  const { config, empty } = found;
  const records = validateBatch(
    empty.flatMap((origin) => demoSection(origin, config.defaultSection, DEMO_SITE_RECORDS)),
    { sites: new Set(empty), defaultSection: config.defaultSection },
  );
  if (records.length > 0) writeD1("DB", records, demoStamps(records.length, Date.now(), config.regen.settleSeconds), options.persistTo);
  return { registered: found.registered, seeded: records.length, origins: found.origins };
}

/**
 * Rebuilds the site's manifest when there is none, or when a listed shard's rows changed after it
 * was built (less the settle window): such a shard would be served without validators until the
 * next cron run. Whether it rebuilt.
 */
async function rebuildManifestIfBehind(deps: Services, origin: string): Promise<boolean> {
  const manifest = await deps.manifests.load(origin);
  const freshness = deps.store.freshness;
  let behind = manifest === null;
  if (manifest && freshness) {
    const since = manifest.builtAt - deps.config.regen.settleSeconds * 1000;
    for (const shard of listedShards(manifest)) {
      const range = { origin, section: shard.section, firstKey: shard.firstKey, lastKey: shard.lastKey };
      if (await freshness.changedAfter(range, since)) {
        behind = true;
        break;
      }
    }
  }
  if (behind) await rebuildManifest(deps, origin, manifest);
  return behind;
}

/**
 * URL_SOURCE=d1: multi-row INSERTs through `wrangler d1 execute --file` (per-statement calls
 * through the platform proxy took over a minute for 126,000 rows).
 */
function writeD1(binding: string, records: readonly ValidRecord[], stampOf: (i: number) => number, persistTo: string | undefined): void {
  const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-seed-"));
  try {
    const file = join(dir, "seed.sql");
    writeFileSync(file, insertSql(records, stampOf));
    wrangler(["d1", "execute", binding, "--local", "--yes", "--file", file, ...persistArgs(persistTo)], true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * URL_SOURCE=kv: the records into the local KV namespace URLS, in the layout of docs/kv.md:
 * kvBulkEntries (the entries a `wrangler kv bulk put` file holds) written through the platform
 * proxy's binding, which saves a second wrangler start-up. The layout packs 1,000 records per key
 * (126,000 records are ~130 blocks). The site's writer object adopts them on its first call
 * (docs/kv.md "Adoption"): Durable Objects are not reachable through the platform proxy.
 */
async function writeKv(env: Env, records: readonly ValidRecord[], stampOf: (i: number) => number): Promise<void> {
  const entries = await kvBulkEntries(records, { stampOf });
  let next = 0;
  const put = async (): Promise<void> => {
    while (next < entries.length) {
      const entry = entries[next++]!;
      await env.URLS.put(entry.key, entry.value, entry.metadata ? { metadata: entry.metadata } : {});
    }
  };
  await Promise.all(Array.from({ length: 8 }, put));
}
