/**
 * The typed configuration the Worker reads: built from the declared variables
 * (src/config/variables/) by src/config/parse.ts, which type-checks every field against the
 * value its declaration parses to. Word choices come from the declarations themselves.
 */
import type { SectionRule } from "../core/section-rules.ts";
import type { DisabledFeature } from "./features.ts";
import type { NotifyConfig } from "./notify.ts";
import type { Variable } from "./variable.ts";
import type { INDEX_LINK_FORM, INVOCATION_LIMITS, MANIFEST_STORE, URL_SOURCE } from "./variables/sites.ts";

/** The value a declared variable parses to. */
type ValueOf<V> = V extends Variable<infer T> ? T : never;

type IndexLinkForm = ValueOf<typeof INDEX_LINK_FORM>;

export interface Config {
  /** Origins served (e.g. `https://example.com`); any other host gets 404. */
  sites: ReadonlySet<string>;
  defaultSection: string;
  /** SECTION_RULES: sections of records that name none, by path prefix (first match wins). */
  sectionRules: readonly SectionRule[];
  maxUrlsPerShard: number;
  maxBytesPerShard: number;
  indexLinkForm: IndexLinkForm;
  /** Emit `<lastmod>` as dates only. */
  lastmodDateOnly: boolean;
  /** Sites (origins) that get date-only `<lastmod>` even when LASTMOD_DATE_ONLY is off (DATE_ONLY_SITES). */
  dateOnlySites: ReadonlySet<string>;
  /** Browser view: `<?xml-stylesheet?>` in every sitemap and /sitemap.xsl served (BROWSER_VIEW, default on). */
  browserView: boolean;
  /** Entries of the Atom feed of recent changes, /sitemap-feed.atom; 0 turns the feed off (FEED_SIZE). */
  feedSize: number;
  /** List the feed in the sitemap index too (FEED_IN_INDEX, default off: some tools expect only urlsets there). */
  feedInIndex: boolean;
  /** Admin ingest: most records per request (413 beyond). */
  adminMaxRecords: number;
  /** Admin ingest: most request body bytes (413 beyond). */
  adminMaxBytes: number;
  /** SYNC_TTL_SECONDS in ms: an open sync idle this long is abandoned. */
  syncTtlMs: number;
  /** Mirrors (MIRROR_*): what the cron fetches and syncs, and its bounds. */
  mirror: MirrorConfig;
  /** IndexNow, ping endpoints, Search Console, robots.txt (types in src/config/notify.ts). */
  notify: NotifyConfig;
  /** Where URL records are read from (URL_SOURCE): D1 table `urls`, or the KV namespace URLS (docs/kv.md). */
  urlSource: ValueOf<typeof URL_SOURCE>;
  /**
   * The D1 bindings of each listed site (SITE_DATABASES); a site not listed uses `DB`. Several: the
   * site's records are spread over them, its partitions in this order (docs/capacity.md "Partitions").
   */
  siteDatabases: ReadonlyMap<string, readonly string[]>;
  /**
   * SITE_SETTINGS_ANY_HOST: a registered site's settings naming hosts (mirrors, the robots.txt origin,
   * ping URLs) may name hosts other than its own domain's (src/registry/hosts.ts). Off by default.
   */
  settingsAnyHost: boolean;
  /**
   * Set by the wiring for one partition's services (src/services.ts): the partition's first shard
   * number per partitioned site, so that shard URLs of different partitions never collide. Empty otherwise.
   */
  shardBase: ReadonlyMap<string, number>;
  /** Where shard manifests live (MANIFEST_STORE): D1 (strongly consistent), or URLS in KV for deployments without D1. */
  manifestStore: ValueOf<typeof MANIFEST_STORE>;
  /** What the meter does past a Cloudflare limit (INVOCATION_LIMITS): checked here with the rest; the entry reads it before any config (src/index.ts). */
  invocationLimits: ValueOf<typeof INVOCATION_LIMITS>;
  /** Key rows a request may walk to build a missing manifest (MANIFEST_REQUEST_ROWS); a larger site answers 503 while its regeneration builds it. */
  manifestRequestRows: number;
  /** HTTP caching of sitemap documents (docs/caching.md). */
  cache: CacheConfig;
  /** Cron regeneration and snapshots (docs/regeneration.md). */
  regen: RegenConfig;
  /** Crawler verification and the crawler log (docs/crawlers.md). */
  crawlers: CrawlersConfig;
  /** Optional features a bad variable turned off (src/config/features.ts): shown by the admin status. */
  disabled: readonly DisabledFeature[];
}

export interface MirrorConfig {
  urls: readonly string[];
  maxRecordsPerRun: number;
  /** Requests to mirrored hosts per run, all mirrors together (MIRROR_MAX_REQUESTS_PER_RUN). */
  maxRequestsPerRun: number;
  maxBytes: number;
  timeoutMs: number;
  maxDelete: number;
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

export interface CrawlersConfig {
  /**
   * CRAWLER_IP_RANGES: each crawler verified by its published IP ranges, in the order listed: its
   * name (the token looked for in a request's User-Agent) and the URL of its list. Empty: only
   * Cloudflare's verified-bot flag verifies.
   */
  ranges: { name: string; url: string }[];
  /** CRAWLER_STALE_DAYS: a listed document no verified crawler fetched in this many days is stale. */
  staleDays: number;
  /** CRAWLER_COUNT_FLUSH_SECONDS: counts wait in an isolate at most this long before a timer writes them; 0: no timer. */
  countFlushSeconds: number;
}

export interface RegenConfig {
  /** False when a bad regeneration variable turned it off: documents are then served live. */
  enabled: boolean;
  /** Most shards one run renders per site (REGEN_MAX_SHARDS); the rest waits for the next run. */
  maxShards: number;
  /** Most record rows one run reads per site (REGEN_MAX_ROWS); checked at shard boundaries. */
  maxRows: number;
  /** Changes stamped within this many seconds of a run are read again by the next (REGEN_SETTLE_SECONDS). */
  settleSeconds: number;
  /** Superseded snapshots are deleted once this old (SNAPSHOT_GRACE_SECONDS). */
  snapshotGraceSeconds: number;
}
