/**
 * From env to the typed Config: every declared variable read once (src/config/variables.ts), then
 * the checks that span several variables. Throws the first ConfigError.
 */
import { GSC_TOKEN_URL_DEFAULT, type NotifyConfig } from "../notify/config.ts";
import { ConfigError } from "./error.ts";
import type { Config } from "./types.ts";
import { type Presence, type Variable, isHttpUrl, readVariable } from "./variable.ts";
import * as v from "./variables.ts";

type RawEnv = Readonly<Record<string, unknown>>;

function notifyConfig(env: RawEnv): NotifyConfig {
  const read = <T, P extends Presence>(variable: Variable<T, P>) => readVariable(env, variable);
  const key = read(v.INDEXNOW_KEY);
  const endpoint = read(v.INDEXNOW_ENDPOINT);
  const batchesPerRun = read(v.INDEXNOW_BATCHES_PER_RUN);
  const account = read(v.GSC_SERVICE_ACCOUNT);
  const property = read(v.GSC_PROPERTY);
  const apiBase = read(v.GSC_API_BASE);
  // The key file names its token endpoint; GSC_TOKEN_URL overrides it, and either must be a URL.
  const tokenUrl = read(v.GSC_TOKEN_URL) ?? account?.tokenUri ?? GSC_TOKEN_URL_DEFAULT;
  if (!isHttpUrl(tokenUrl)) throw new ConfigError(v.GSC_TOKEN_URL.name, v.GSC_TOKEN_URL.rule);
  return {
    indexNow: key === null ? null : { key, endpoint, batchesPerRun },
    pingUrls: read(v.PING_URLS),
    searchConsole:
      account === null
        ? null
        : {
            clientEmail: account.clientEmail,
            privateKey: account.privateKey,
            privateKeyId: account.privateKeyId,
            tokenUrl,
            apiBase,
            property,
          },
    timeoutMs: read(v.NOTIFY_TIMEOUT_MS),
    settleMs: read(v.NOTIFY_SETTLE_SECONDS) * 1000,
    robots: { originUrl: read(v.ROBOTS_ORIGIN_URL), timeoutMs: read(v.ROBOTS_ORIGIN_TIMEOUT_MS), maxAge: read(v.ROBOTS_MAX_AGE) },
  };
}

export function parseConfig(env: RawEnv): Config {
  const read = <T, P extends Presence>(variable: Variable<T, P>) => readVariable(env, variable);
  const sites = read(v.SITES);
  const dateOnlySites = read(v.DATE_ONLY_SITES);
  if ([...dateOnlySites].some((origin) => !sites.has(origin))) throw new ConfigError(v.DATE_ONLY_SITES.name, v.DATE_ONLY_SITES.rule);
  const siteDatabases = read(v.SITE_DATABASES);
  if ([...siteDatabases.keys()].some((origin) => !sites.has(origin))) throw new ConfigError(v.SITE_DATABASES.name, v.SITE_DATABASES.rule);
  return {
    sites,
    defaultSection: read(v.DEFAULT_SECTION),
    sectionRules: read(v.SECTION_RULES),
    maxUrlsPerShard: read(v.MAX_URLS_PER_SHARD),
    maxBytesPerShard: read(v.MAX_BYTES_PER_SHARD),
    indexLinkForm: read(v.INDEX_LINK_FORM),
    lastmodDateOnly: read(v.LASTMOD_DATE_ONLY),
    dateOnlySites,
    browserView: read(v.BROWSER_VIEW),
    feedSize: read(v.FEED_SIZE),
    feedInIndex: read(v.FEED_IN_INDEX),
    adminMaxRecords: read(v.ADMIN_MAX_RECORDS),
    adminMaxBytes: read(v.ADMIN_MAX_BYTES),
    syncTtlMs: read(v.SYNC_TTL_SECONDS) * 1000,
    mirror: {
      urls: read(v.MIRROR_SITEMAPS),
      maxRecordsPerRun: read(v.MIRROR_MAX_RECORDS_PER_RUN),
      maxBytes: read(v.MIRROR_MAX_BYTES),
      timeoutMs: read(v.MIRROR_TIMEOUT_MS),
      maxDelete: read(v.MIRROR_MAX_DELETE) / 100,
    },
    notify: notifyConfig(env),
    urlSource: read(v.URL_SOURCE),
    siteDatabases,
    manifestStore: read(v.MANIFEST_STORE),
    cache: {
      maxAge: read(v.CACHE_MAX_AGE),
      sMaxAge: read(v.CACHE_S_MAXAGE),
      staleWhileRevalidate: read(v.CACHE_STALE_WHILE_REVALIDATE),
      edgeTtl: read(v.EDGE_CACHE_TTL),
      manifestTtl: read(v.MANIFEST_CACHE_TTL),
    },
    regen: {
      maxShards: read(v.REGEN_MAX_SHARDS),
      maxRows: read(v.REGEN_MAX_ROWS),
      settleSeconds: read(v.REGEN_SETTLE_SECONDS),
      snapshotGraceSeconds: read(v.SNAPSHOT_GRACE_SECONDS),
    },
  };
}
