/**
 * From env to the typed Config: every declared variable read once (src/config/variables/), then
 * the checks that span several variables.
 *
 * Serving sitemaps and robots.txt reads only the core variables: a bad one throws the first
 * ConfigError (nothing can be served right). Every optional feature is read on its own
 * (src/config/features.ts): a bad variable there turns that feature off and is listed in
 * `Config.disabled`, so a typo in a notification secret never takes the sitemaps down.
 * `checkConfig` lists every problem, for `npm start` and `npm run check-config`.
 */

import { ConfigError } from "./error.ts";
import { type DisabledFeature, featureOrOff } from "./features.ts";
import { GSC_TOKEN_URL_DEFAULT, type NotifyConfig, ROBOTS_ORIGIN_URL_DEFAULT } from "./notify.ts";
import type { Config, CrawlersConfig, MirrorConfig, RegenConfig } from "./types.ts";
import { type Presence, type Variable, isSecureUrl, readVariable } from "./variable.ts";
import * as v from "./variables/index.ts";

type RawEnv = Readonly<Record<string, unknown>>;

/**
 * Variables refused whatever they read as, each with its rule: a registered site's setting that a
 * rule beyond its declaration refuses (src/registry/hosts.ts). Read as a bad value is: its feature off.
 */
export type Refused = ReadonlyMap<string, string>;

const NONE_REFUSED: Refused = new Map();

const readFrom =
  (env: RawEnv, refused: Refused) =>
  <T, P extends Presence>(variable: Variable<T, P>) => {
    const rule = refused.get(variable.name);
    if (rule !== undefined) throw new ConfigError(variable.name, rule);
    return readVariable(env, variable);
  };

/** The declared default of a variable (what "unset" gives); declarations always parse their default. */
const defaultOf = <T>(variable: Variable<T, "default">): T => readVariable({}, variable);

function notifyConfig(env: RawEnv, disabled: DisabledFeature[], refused: Refused): NotifyConfig {
  const read = readFrom(env, refused);
  const robots = featureOrOff(
    disabled,
    "robots",
    () => ({ originUrl: read(v.ROBOTS_ORIGIN_URL), timeoutMs: read(v.ROBOTS_ORIGIN_TIMEOUT_MS), maxAge: read(v.ROBOTS_MAX_AGE) }),
    // Off means no Sitemap: lines of ours worth caching: the origin's own file, fetched as crawlers would.
    { originUrl: ROBOTS_ORIGIN_URL_DEFAULT, timeoutMs: defaultOf(v.ROBOTS_ORIGIN_TIMEOUT_MS), maxAge: 0 },
  );
  const shared = featureOrOff(
    disabled,
    "notifications",
    () => ({ timeoutMs: read(v.NOTIFY_TIMEOUT_MS), settleMs: read(v.NOTIFY_SETTLE_SECONDS) * 1000 }),
    null,
  );
  if (shared === null) return { indexNow: null, pingUrls: [], searchConsole: null, timeoutMs: defaultOf(v.NOTIFY_TIMEOUT_MS), settleMs: 0, robots };
  const indexNow = featureOrOff(
    disabled,
    "indexnow",
    () => {
      const key = read(v.INDEXNOW_KEY);
      const endpoint = read(v.INDEXNOW_ENDPOINT);
      const batchesPerRun = read(v.INDEXNOW_BATCHES_PER_RUN);
      return key === null ? null : { key, endpoint, batchesPerRun };
    },
    null,
  );
  const searchConsole = featureOrOff(
    disabled,
    "search-console",
    () => {
      const account = read(v.GSC_SERVICE_ACCOUNT);
      const property = read(v.GSC_PROPERTY);
      const apiBase = read(v.GSC_API_BASE);
      // The key file names its token endpoint; GSC_TOKEN_URL overrides it, and either gets the signed assertion: https only.
      const tokenUrl = read(v.GSC_TOKEN_URL) ?? account?.tokenUri ?? GSC_TOKEN_URL_DEFAULT;
      if (!isSecureUrl(tokenUrl)) throw new ConfigError(v.GSC_TOKEN_URL.name, v.GSC_TOKEN_URL.rule);
      if (account === null) return null;
      return { clientEmail: account.clientEmail, privateKey: account.privateKey, privateKeyId: account.privateKeyId, tokenUrl, apiBase, property };
    },
    null,
  );
  return {
    indexNow,
    pingUrls: featureOrOff(disabled, "ping", () => read(v.PING_URLS), []),
    searchConsole,
    ...shared,
    robots,
  };
}

function mirrorConfig(env: RawEnv, disabled: DisabledFeature[], refused: Refused): MirrorConfig {
  const read = readFrom(env, refused);
  const parse = () => ({
    urls: read(v.MIRROR_SITEMAPS),
    maxRecordsPerRun: read(v.MIRROR_MAX_RECORDS_PER_RUN),
    maxRequestsPerRun: read(v.MIRROR_MAX_REQUESTS_PER_RUN),
    maxBytes: read(v.MIRROR_MAX_BYTES),
    timeoutMs: read(v.MIRROR_TIMEOUT_MS),
    maxDelete: read(v.MIRROR_MAX_DELETE) / 100,
  });
  const off = {
    urls: [],
    maxRecordsPerRun: defaultOf(v.MIRROR_MAX_RECORDS_PER_RUN),
    maxRequestsPerRun: defaultOf(v.MIRROR_MAX_REQUESTS_PER_RUN),
    maxBytes: defaultOf(v.MIRROR_MAX_BYTES),
    timeoutMs: defaultOf(v.MIRROR_TIMEOUT_MS),
    maxDelete: 0,
  };
  return featureOrOff(disabled, "mirrors", parse, off);
}

function regenConfig(env: RawEnv, manifestTtl: number, disabled: DisabledFeature[], refused: Refused): RegenConfig {
  const read = readFrom(env, refused);
  const parse = (): RegenConfig => {
    const snapshotGraceSeconds = read(v.SNAPSHOT_GRACE_SECONDS);
    // A location trusts its cached manifest for MANIFEST_CACHE_TTL: the snapshots it names must live at least that long.
    if (snapshotGraceSeconds < manifestTtl) throw new ConfigError(v.SNAPSHOT_GRACE_SECONDS.name, "must be at least MANIFEST_CACHE_TTL");
    return {
      enabled: true,
      maxShards: read(v.REGEN_MAX_SHARDS),
      maxRows: read(v.REGEN_MAX_ROWS),
      settleSeconds: read(v.REGEN_SETTLE_SECONDS),
      snapshotGraceSeconds,
    };
  };
  const off: RegenConfig = {
    enabled: false,
    maxShards: defaultOf(v.REGEN_MAX_SHARDS),
    maxRows: defaultOf(v.REGEN_MAX_ROWS),
    settleSeconds: defaultOf(v.REGEN_SETTLE_SECONDS),
    snapshotGraceSeconds: defaultOf(v.SNAPSHOT_GRACE_SECONDS),
  };
  return featureOrOff(disabled, "regeneration", parse, off);
}

function crawlersConfig(env: RawEnv, disabled: DisabledFeature[], refused: Refused): CrawlersConfig {
  const read = readFrom(env, refused);
  // Off: no ranges (Cloudflare's verified-bot flag alone verifies), stale after the default.
  const off = { ranges: [], staleDays: defaultOf(v.CRAWLER_STALE_DAYS), countFlushSeconds: defaultOf(v.CRAWLER_COUNT_FLUSH_SECONDS) };
  const parse = () => ({
    ranges: read(v.CRAWLER_IP_RANGES),
    staleDays: read(v.CRAWLER_STALE_DAYS),
    countFlushSeconds: read(v.CRAWLER_COUNT_FLUSH_SECONDS),
  });
  return featureOrOff(disabled, "crawler-log", parse, off);
}

/** Throws a ConfigError for a bad core variable; a bad (or `refused`) feature variable turns the feature off (`disabled`). */
export function parseConfig(env: RawEnv, refused: Refused = NONE_REFUSED): Config {
  const read = readFrom(env, refused);
  const disabled: DisabledFeature[] = [];
  const sites = read(v.SITES);
  const dateOnlySites = read(v.DATE_ONLY_SITES);
  if ([...dateOnlySites].some((origin) => !sites.has(origin))) throw new ConfigError(v.DATE_ONLY_SITES.name, v.DATE_ONLY_SITES.rule);
  const siteDatabases = read(v.SITE_DATABASES);
  if ([...siteDatabases.keys()].some((origin) => !sites.has(origin))) throw new ConfigError(v.SITE_DATABASES.name, v.SITE_DATABASES.rule);
  // Partitions are D1's (docs/capacity.md "Partitions"): a KV site's records live in its one writer object.
  if (read(v.URL_SOURCE) === "kv" && [...siteDatabases.values()].some((list) => list.length > 1)) {
    throw new ConfigError(v.SITE_DATABASES.name, "lists several databases for a site, which only URL_SOURCE=d1 can spread records over");
  }
  const manifestTtl = read(v.MANIFEST_CACHE_TTL);
  const feed = featureOrOff(disabled, "feed", () => ({ size: read(v.FEED_SIZE), inIndex: read(v.FEED_IN_INDEX) }), { size: 0, inIndex: false });
  const admin = featureOrOff(
    disabled,
    "admin-ingest",
    () => ({ maxRecords: read(v.ADMIN_MAX_RECORDS), maxBytes: read(v.ADMIN_MAX_BYTES), syncTtlMs: read(v.SYNC_TTL_SECONDS) * 1000 }),
    // Off: nothing can be sent (the admin API answers what is wrong on every write).
    { maxRecords: 0, maxBytes: 0, syncTtlMs: defaultOf(v.SYNC_TTL_SECONDS) * 1000 },
  );
  const config: Config = {
    sites,
    defaultSection: read(v.DEFAULT_SECTION),
    sectionRules: read(v.SECTION_RULES),
    maxUrlsPerShard: read(v.MAX_URLS_PER_SHARD),
    maxBytesPerShard: read(v.MAX_BYTES_PER_SHARD),
    indexLinkForm: read(v.INDEX_LINK_FORM),
    lastmodDateOnly: read(v.LASTMOD_DATE_ONLY),
    dateOnlySites,
    browserView: featureOrOff(disabled, "browser-view", () => read(v.BROWSER_VIEW), false),
    feedSize: feed.size,
    feedInIndex: feed.inIndex,
    adminMaxRecords: admin.maxRecords,
    adminMaxBytes: admin.maxBytes,
    syncTtlMs: admin.syncTtlMs,
    mirror: mirrorConfig(env, disabled, refused),
    notify: notifyConfig(env, disabled, refused),
    urlSource: read(v.URL_SOURCE),
    siteDatabases,
    settingsAnyHost: read(v.SITE_SETTINGS_ANY_HOST),
    shardBase: new Map(),
    manifestStore: read(v.MANIFEST_STORE),
    invocationLimits: read(v.INVOCATION_LIMITS),
    manifestRequestRows: read(v.MANIFEST_REQUEST_ROWS),
    cache: {
      maxAge: read(v.CACHE_MAX_AGE),
      sMaxAge: read(v.CACHE_S_MAXAGE),
      staleWhileRevalidate: read(v.CACHE_STALE_WHILE_REVALIDATE),
      edgeTtl: read(v.EDGE_CACHE_TTL),
      manifestTtl,
    },
    regen: regenConfig(env, manifestTtl, disabled, refused),
    crawlers: crawlersConfig(env, disabled, refused),
    disabled: [],
  };
  // Read where they are used (the admin API's auth, the cron's Search Console read), each turning
  // only its own feature off when bad; checked here too so that the status and check-config name them.
  featureOrOff(disabled, "admin", () => read(v.ADMIN_TOKEN), null);
  featureOrOff(
    disabled,
    "access-sign-in",
    () => [read(v.ACCESS_TEAM_DOMAIN), read(v.ACCESS_TEST_ISSUER), read(v.ACCESS_AUD), read(v.ACCESS_SERVICE_TOKEN_IDS)],
    null,
  );
  featureOrOff(disabled, "search-console-status", () => read(v.GSC_STATUS_INTERVAL), null);
  return { ...config, disabled };
}

/**
 * Every problem of a configuration, core and features alike, for a deployer to fix before
 * deploying (`npm run check-config`, `npm start`). Empty: all good.
 */
export function checkConfig(env: RawEnv): ConfigError[] {
  let config: Config;
  try {
    config = parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return [error];
    throw error;
  }
  const problems = config.disabled.map((d) => new ConfigError(d.variable, d.rule));
  // A local Access stand-in is never a deployment's: any value of it is a problem (docs/dashboard.md).
  const testIssuer = env[v.ACCESS_TEST_ISSUER.name];
  if (typeof testIssuer === "string" && testIssuer.trim() && !problems.some((p) => p.variable === v.ACCESS_TEST_ISSUER.name)) {
    problems.push(new ConfigError(v.ACCESS_TEST_ISSUER.name, v.ACCESS_TEST_ISSUER.rule));
  }
  return problems;
}
