/**
 * Local data for `npm start` (and the e2e harness): applies migrations to the local D1 that
 * `wrangler dev` uses and seeds the demo data set when the site has no records.
 *
 * Seeding writes multi-row INSERTs through `wrangler d1 execute --file` (≈ 8 s for 126,000 rows
 * here; per-statement calls through the platform proxy took over a minute), then builds the
 * manifest with the Worker's own code through the platform proxy.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getPlatformProxy, unstable_readConfig } from "wrangler";
import { D1ManifestStore } from "../src/adapters/d1/manifest-store.ts";
import { d1RecordStore } from "../src/adapters/d1/record-store.ts";
import { extJson } from "../src/adapters/d1/writer.ts";
import { kvBulkEntries } from "../src/adapters/kv/bulk.ts";
import { sitePrefix } from "../src/adapters/kv/layout.ts";
import { type Config, parseConfig } from "../src/config.ts";
import { type ValidRecord, validateBatch } from "../src/core/validate.ts";
import { urlElementBytes } from "../src/core/writers.ts";
import { type DemoInput, demoRecords } from "../src/demo/demo-data.ts";
import { services } from "../src/services.ts";
import { rebuildManifest } from "../src/sitemaps.ts";

/** Rows per INSERT: ~300 × ~180 bytes stays far below D1's 100 KB statement limit. */
const ROWS_PER_INSERT = 300;

function wrangler(args: string[], quiet = false): void {
  execFileSync("npx", ["wrangler", ...args], {
    stdio: ["ignore", quiet ? "ignore" : "inherit", "inherit"],
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
}

function persistArgs(persistTo?: string): string[] {
  return persistTo ? ["--persist-to", persistTo] : [];
}

/** Migrations for every D1 database wrangler.jsonc binds: `DB` and the per-site ones of SITE_DATABASES. */
export function applyMigrations(persistTo?: string, quiet = false): void {
  const databases = unstable_readConfig({ config: "wrangler.jsonc" }).d1_databases.map((d: { binding: string }) => d.binding);
  for (const binding of databases) wrangler(["d1", "migrations", "apply", binding, "--local", ...persistArgs(persistTo)], quiet);
}

async function withLocalEnv<T>(vars: Record<string, string>, persistTo: string | undefined, use: (env: Env, config: Config) => Promise<T>): Promise<T> {
  const proxy = await getPlatformProxy<Env>({ configPath: "wrangler.jsonc", ...(persistTo ? { persist: { path: join(persistTo, "v3") } } : {}) });
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
    const rows = records
      .slice(i, i + ROWS_PER_INSERT)
      .map(
        (r, j) =>
          `(${[r.origin, r.section, r.loc, r.lastmod, r.changefreq, r.priority, extJson(r), urlElementBytes(r), stampOf(i + j)].map(sqlValue).join(",")})`,
      );
    statements.push(`INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at) VALUES ${rows.join(",")};`);
  }
  return statements.join("\n");
}

export interface SeedOptions {
  vars: Record<string, string>;
  persistTo?: string;
  records?: (origin: string) => DemoInput[];
  quiet?: boolean;
}

export interface SeedResult {
  seeded: number;
  shards: number;
}

/** Seeds demo records for `origin` unless the site already has records; then builds its manifest. */
export async function seedIfEmpty(origin: string, options: SeedOptions): Promise<SeedResult> {
  if (parseConfig(options.vars).urlSource === "kv") return seedKvIfEmpty(origin, options);
  const { vars, persistTo } = options;
  const existing = await withLocalEnv(vars, persistTo, (env) =>
    env.DB.prepare("SELECT 1 AS one FROM urls WHERE origin = ?1 LIMIT 1").bind(origin).first(),
  );
  if (existing) return { seeded: 0, shards: -1 };

  const config = parseConfig(vars);
  const records = validateBatch((options.records ?? demoRecords)(origin), { sites: config.sites, defaultSection: config.defaultSection });
  // Stamps spread over the past days, so index lastmods differ between shards.
  const now = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-seed-"));
  try {
    const file = join(dir, "seed.sql");
    writeFileSync(
      file,
      insertSql(records, (i) => now - (records.length - i) * 1000),
    );
    wrangler(["d1", "execute", "DB", "--local", "--yes", "--file", file, ...persistArgs(persistTo)], true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const manifest = await withLocalEnv(vars, persistTo, (env, cfg) =>
    rebuildManifest({ config: cfg, store: d1RecordStore(env.DB), manifests: new D1ManifestStore(env.DB) }, origin),
  );
  return { seeded: records.length, shards: manifest.shards.filter((s) => s.urlCount > 0).length };
}

/**
 * URL_SOURCE=kv: the same demo records into the local KV namespace URLS, in the layout of
 * docs/kv.md: kvBulkEntries (the entries a `wrangler kv bulk put` file holds) written through
 * the platform proxy's binding, which saves a second wrangler start-up. The layout packs 1,000
 * records per key: 126,000 records are ~130 blocks plus 256 loc-index buckets.
 */
async function seedKvIfEmpty(origin: string, options: SeedOptions): Promise<SeedResult> {
  const { vars, persistTo } = options;
  return withLocalEnv(vars, persistTo, async (env, config) => {
    if ((await env.URLS.list({ prefix: sitePrefix(origin), limit: 1 })).keys.length > 0) return { seeded: 0, shards: -1 };
    const records = validateBatch((options.records ?? demoRecords)(origin), { sites: config.sites, defaultSection: config.defaultSection });
    const now = Date.now();
    const entries = await kvBulkEntries(records, { stampOf: (i) => now - (records.length - i) * 1000 });
    let next = 0;
    const put = async (): Promise<void> => {
      while (next < entries.length) {
        const entry = entries[next++]!;
        await env.URLS.put(entry.key, entry.value, entry.metadata ? { metadata: entry.metadata } : {});
      }
    };
    await Promise.all(Array.from({ length: 8 }, put));
    const manifest = await rebuildManifest(services(env), origin);
    return { seeded: records.length, shards: manifest.shards.filter((s) => s.urlCount > 0).length };
  });
}
