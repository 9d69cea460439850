/**
 * Typed configuration, validated once per `env` object. A bad variable becomes a ConfigError that
 * names the variable and what it should be; the Worker answers 500 with that message.
 */
import { DEFAULT_SECTION, MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, SECTION_PATTERN } from "./core/limits.ts";
import { normalizeOrigin } from "./core/url.ts";
import { type NotifyConfig, parseNotifyConfig } from "./notify/config.ts";

export type IndexLinkForm = "xml" | "xml.gz";

/** Defaults of the admin ingest limits (documented in docs/ingest.md). */
export const ADMIN_MAX_RECORDS_DEFAULT = 10_000;
export const ADMIN_MAX_BYTES_DEFAULT = 10 * 1024 * 1024;

export interface Config {
  /** Origins served (e.g. `https://example.com`); any other host gets 404. */
  sites: ReadonlySet<string>;
  defaultSection: string;
  maxUrlsPerShard: number;
  maxBytesPerShard: number;
  indexLinkForm: IndexLinkForm;
  /** Emit `<lastmod>` as dates only. */
  lastmodDateOnly: boolean;
  /** Sites (origins) that get date-only `<lastmod>` even when LASTMOD_DATE_ONLY is off (DATE_ONLY_SITES). */
  dateOnlySites: ReadonlySet<string>;
  /** Browser view: `<?xml-stylesheet?>` in every sitemap and /sitemap.xsl served (BROWSER_VIEW, default off). */
  browserView: boolean;
  /** Entries of the Atom feed of recent changes, /sitemap-feed.atom; 0 turns the feed off (FEED_SIZE). */
  feedSize: number;
  /** List the feed in the sitemap index too (FEED_IN_INDEX, default off: some tools expect only urlsets there). */
  feedInIndex: boolean;
  /** Test-only: shard reads fail after this many records (FAULT_INJECTION=on + FAULT_AFTER_RECORDS). */
  faultAfterRecords: number | null;
  /** Admin ingest: most records per request (413 beyond). */
  adminMaxRecords: number;
  /** Admin ingest: most request body bytes (413 beyond). */
  adminMaxBytes: number;
  /** IndexNow, ping endpoints, Search Console, robots.txt (src/notify/config.ts). */
  notify: NotifyConfig;
  /** Where URL records are read from (URL_SOURCE): D1 table `urls`, or the KV namespace URLS (docs/kv.md). */
  urlSource: "d1" | "kv";
  /** Where shard manifests live (MANIFEST_STORE): D1 (strongly consistent), or URLS in KV for deployments without D1. */
  manifestStore: "d1" | "kv";
  /** HTTP caching of sitemap documents (docs/caching.md). */
  cache: CacheConfig;
  /** Cron regeneration and snapshots (docs/regeneration.md). */
  regen: RegenConfig;
}

export interface CacheConfig {
  /** `Cache-Control: max-age` of sitemap documents, seconds (CACHE_MAX_AGE). */
  maxAge: number;
  /** `s-maxage` for shared caches, e.g. the tiered Workers Cache (CACHE_S_MAXAGE). */
  sMaxAge: number;
  /** `stale-while-revalidate` (CACHE_STALE_WHILE_REVALIDATE); 0 leaves it out. */
  staleWhileRevalidate: number;
  /** Lifetime of a versioned copy in the per-location Cache API (EDGE_CACHE_TTL); 0 turns that layer off. */
  edgeTtl: number;
  /** How long a location trusts its cached copy of a site's manifest (MANIFEST_CACHE_TTL); 0 = read D1 every time. */
  manifestTtl: number;
}

export interface RegenConfig {
  /** Most shards one run renders per site (REGEN_MAX_SHARDS); the rest waits for the next run. */
  maxShards: number;
  /** Most record rows one run reads per site (REGEN_MAX_ROWS); checked at shard boundaries. */
  maxRows: number;
  /** Changes stamped within this many seconds of a run are read again by the next (REGEN_SETTLE_SECONDS). */
  settleSeconds: number;
  /** Superseded snapshots are deleted once this old (SNAPSHOT_GRACE_SECONDS). */
  snapshotGraceSeconds: number;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`configuration error: ${variable} ${message}`);
    this.variable = variable;
  }
}

type RawEnv = Record<string, unknown>;

function text(env: RawEnv, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new ConfigError(name, `must be a string, got ${typeof value}`);
  return value.trim();
}

function integer(env: RawEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got ${value}`);
  return value;
}

function oneOf<T extends string>(env: RawEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.map((a) => `"${a}"`).join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

function boolean(env: RawEnv, name: string, fallback: boolean): boolean {
  const raw = oneOf(env, name, ["true", "false", "1", "0"] as const, fallback ? "true" : "false");
  return raw === "true" || raw === "1";
}

/** Origins listed in `name`, each of which must be one of `sites`. */
function siteSubset(env: RawEnv, name: string, sites: ReadonlySet<string>): Set<string> {
  const subset = new Set<string>();
  for (const raw of listVar(text(env, name))) {
    const origin = normalizeOrigin(raw);
    if (!origin || !sites.has(origin)) throw new ConfigError(name, `has "${raw}", which is not one of the SITES origins`);
    subset.add(origin);
  }
  return subset;
}

/** Splits a list var on commas and/or whitespace. */
export function listVar(raw: string | undefined): string[] {
  return raw ? raw.split(/[\s,]+/).filter(Boolean) : [];
}

export function parseConfig(env: RawEnv): Config {
  const siteList = listVar(text(env, "SITES"));
  if (siteList.length === 0) throw new ConfigError("SITES", 'must list at least one origin, e.g. "https://example.com"');
  const sites = new Set<string>();
  for (const raw of siteList) {
    const origin = normalizeOrigin(raw);
    if (!origin) throw new ConfigError("SITES", `has "${raw}", which is not an http(s) origin like "https://example.com"`);
    sites.add(origin);
  }
  const defaultSection = text(env, "DEFAULT_SECTION") ?? DEFAULT_SECTION;
  if (!SECTION_PATTERN.test(defaultSection)) {
    throw new ConfigError("DEFAULT_SECTION", `must be lowercase letters, digits, "-" or "_" (≤ 64), got "${defaultSection}"`);
  }
  return {
    sites,
    defaultSection,
    maxUrlsPerShard: integer(env, "MAX_URLS_PER_SHARD", MAX_URLS_PER_SITEMAP, 1, MAX_URLS_PER_SITEMAP),
    maxBytesPerShard: integer(env, "MAX_BYTES_PER_SHARD", MAX_SITEMAP_BYTES, 1024, MAX_SITEMAP_BYTES),
    indexLinkForm: oneOf(env, "INDEX_LINK_FORM", ["xml", "xml.gz"] as const, "xml"),
    lastmodDateOnly: boolean(env, "LASTMOD_DATE_ONLY", false),
    dateOnlySites: siteSubset(env, "DATE_ONLY_SITES", sites),
    browserView: boolean(env, "BROWSER_VIEW", false),
    feedSize: integer(env, "FEED_SIZE", 100, 0, 1_000),
    feedInIndex: boolean(env, "FEED_IN_INDEX", false),
    faultAfterRecords: text(env, "FAULT_INJECTION") === "on" ? integer(env, "FAULT_AFTER_RECORDS", 0, 0, Number.MAX_SAFE_INTEGER) : null,
    adminMaxRecords: integer(env, "ADMIN_MAX_RECORDS", ADMIN_MAX_RECORDS_DEFAULT, 1, 50_000),
    adminMaxBytes: integer(env, "ADMIN_MAX_BYTES", ADMIN_MAX_BYTES_DEFAULT, 1024, 32 * 1024 * 1024),
    notify: parseNotifyConfig(env),
    urlSource: oneOf(env, "URL_SOURCE", ["d1", "kv"] as const, "d1"),
    manifestStore: oneOf(env, "MANIFEST_STORE", ["d1", "kv"] as const, "d1"),
    cache: {
      maxAge: integer(env, "CACHE_MAX_AGE", 300, 0, 31_536_000),
      sMaxAge: integer(env, "CACHE_S_MAXAGE", 3_600, 0, 31_536_000),
      staleWhileRevalidate: integer(env, "CACHE_STALE_WHILE_REVALIDATE", 600, 0, 31_536_000),
      edgeTtl: integer(env, "EDGE_CACHE_TTL", 86_400, 0, 31_536_000),
      manifestTtl: integer(env, "MANIFEST_CACHE_TTL", 60, 0, 86_400),
    },
    regen: {
      maxShards: integer(env, "REGEN_MAX_SHARDS", 50, 1, 10_000),
      maxRows: integer(env, "REGEN_MAX_ROWS", 2_000_000, 1, 1_000_000_000),
      settleSeconds: integer(env, "REGEN_SETTLE_SECONDS", 60, 0, 3_600),
      snapshotGraceSeconds: integer(env, "SNAPSHOT_GRACE_SECONDS", 3_600, 0, 30 * 86_400),
    },
  };
}

const cache = new WeakMap<object, Config>();

/** Parses once per env object (one per isolate in production). Throws ConfigError. */
export function loadConfig(env: object): Config {
  let config = cache.get(env);
  if (!config) {
    config = parseConfig(env as RawEnv);
    cache.set(env, config);
  }
  return config;
}
