/**
 * Every environment variable and secret of the Worker, declared once: name, rule (zod, and in
 * words), default and doc line. The typed Config is built from these (src/config/parse.ts), and a
 * test checks the README's configuration tables against them (test/node/config-readme.test.ts).
 * Test-only knobs are not declared here.
 */
import { z } from "zod";
import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, DEFAULT_SECTION as SECTION_DEFAULT, SECTION_PATTERN } from "../core/limits.ts";
import { SECTION_RULES_RULE, type SectionRule, parseSectionRules } from "../core/section-rules.ts";
import { normalizeOrigin } from "../core/url.ts";
import { GSC_API_BASE_DEFAULT, INDEXNOW_ENDPOINT_DEFAULT, INDEXNOW_KEY_PATTERN, ROBOTS_ORIGIN_URL_DEFAULT } from "../notify/config.ts";
import { type Variable, flag, isHttpUrl, isUrlTemplate, listVar, oneOf, variable, wholeNumber } from "./variable.ts";
import { ACCESS_AUD, ACCESS_TEAM_DOMAIN, GSC_STATUS_INTERVAL } from "./variables-operator.ts";

const YEAR = 31_536_000;
const DAY = 86_400;
const ORIGIN_SAMPLES = { "{origin}": "https://example.com", "{host}": "example.com" };
const HTTP_URL = "must be an http(s) URL";

/** A list of origins; an entry that is not one is named by its position, never by its text. */
function origins(rule: string) {
  return z.string().transform((text, ctx) => {
    const set = new Set<string>();
    for (const [i, raw] of listVar(text).entries()) {
      const origin = normalizeOrigin(raw);
      if (origin === null) {
        ctx.addIssue({ code: "custom", message: `${rule} (entry ${i + 1} is not an http(s) origin)` });
        return z.NEVER;
      }
      set.add(origin);
    }
    return set as ReadonlySet<string>;
  });
}

// Sites and shards

const SITES_RULE = 'must list at least one origin, e.g. "https://example.com"';
export const SITES = variable({
  name: "SITES",
  presence: "required",
  schema: origins('must list http(s) origins like "https://example.com"').refine((set) => set.size > 0, { message: SITES_RULE }),
  default: null,
  rule: SITES_RULE,
  doc: "origins served, comma or space separated, e.g. `https://example.com, https://shop.example.com`",
});
export const DEFAULT_SECTION = variable({
  name: "DEFAULT_SECTION",
  presence: "default",
  schema: z.string().regex(SECTION_PATTERN),
  default: SECTION_DEFAULT,
  rule: 'must be lowercase letters, digits, "-" or "_" (≤ 64)',
  doc: "section of records that name none (`[a-z0-9_-]`, ≤ 64)",
});
export const SECTION_RULES = variable({
  name: "SECTION_RULES",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    const rules = parseSectionRules(text);
    if (rules === null) {
      ctx.addIssue({ code: "custom", message: SECTION_RULES_RULE });
      return z.NEVER;
    }
    return rules as readonly SectionRule[];
  }),
  default: "",
  rule: SECTION_RULES_RULE,
  doc: "sections of records that name none, by path prefix: `section:/prefix/` pairs, first match wins (e.g. `products:/products/ blog:/blog/`); no match keeps a record's current section, else `DEFAULT_SECTION`",
});
export const MAX_URLS_PER_SHARD = wholeNumber({
  name: "MAX_URLS_PER_SHARD",
  default: MAX_URLS_PER_SITEMAP,
  min: 1,
  max: MAX_URLS_PER_SITEMAP,
  doc: "URLs per shard",
});
export const MAX_BYTES_PER_SHARD = wholeNumber({
  name: "MAX_BYTES_PER_SHARD",
  default: MAX_SITEMAP_BYTES,
  min: 1024,
  max: MAX_SITEMAP_BYTES,
  doc: "uncompressed bytes per shard",
});
export const INDEX_LINK_FORM = oneOf({
  name: "INDEX_LINK_FORM",
  allowed: ["xml", "xml.gz"],
  default: "xml",
  doc: "whether the index links `…-n.xml` or `…-n.xml.gz`",
});
export const LASTMOD_DATE_ONLY = flag({
  name: "LASTMOD_DATE_ONLY",
  default: false,
  doc: "emit `<lastmod>` as `YYYY-MM-DD` only, for every site",
});
export const DATE_ONLY_SITES = variable({
  name: "DATE_ONLY_SITES",
  presence: "default",
  schema: origins("must list origins that are also in SITES"),
  default: "",
  rule: "must list origins that are also in SITES",
  doc: "the same for the listed sites only (engines that reject times)",
});
export const URL_SOURCE = oneOf({
  name: "URL_SOURCE",
  allowed: ["d1", "kv"],
  default: "d1",
  doc: "where records are read from: `d1` or `kv`",
});
const SITE_DATABASES_RULE = 'must list "origin=BINDING" pairs (a D1 binding name per site in SITES), e.g. "https://a.example=DB_A"';
/** D1 binding names: what wrangler accepts as a JavaScript identifier for a binding. */
const BINDING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const SITE_DATABASES = variable({
  name: "SITE_DATABASES",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    const map = new Map<string, string>();
    for (const [i, pair] of listVar(text).entries()) {
      const eq = pair.lastIndexOf("=");
      const origin = eq > 0 ? normalizeOrigin(pair.slice(0, eq)) : null;
      const binding = pair.slice(eq + 1);
      if (origin === null || !BINDING_NAME.test(binding) || map.has(origin)) {
        ctx.addIssue({ code: "custom", message: `${SITE_DATABASES_RULE} (entry ${i + 1} is not one, or repeats a site)` });
        return z.NEVER;
      }
      map.set(origin, binding);
    }
    return map as ReadonlyMap<string, string>;
  }),
  default: "",
  rule: SITE_DATABASES_RULE,
  doc: "D1 database per site, space separated `origin=BINDING` pairs; unlisted sites use `DB` (docs/capacity.md)",
});
export const MANIFEST_STORE = oneOf({
  name: "MANIFEST_STORE",
  allowed: ["d1", "kv"],
  default: "d1",
  doc: "where manifests live: `d1` or `kv`",
});

// Other formats

export const BROWSER_VIEW = flag({
  name: "BROWSER_VIEW",
  default: true,
  doc: "the browser view: HTML for top-level browser navigations and the `<?xml-stylesheet?>` link to `/sitemap.xsl`",
});
export const FEED_SIZE = wholeNumber({ name: "FEED_SIZE", default: 100, min: 0, max: 1_000, doc: "entries of the Atom feed (0 = off)" });
export const FEED_IN_INDEX = flag({ name: "FEED_IN_INDEX", default: false, doc: "also list the feed in the index" });

// HTTP caching (docs/caching.md)

export const CACHE_MAX_AGE = wholeNumber({ name: "CACHE_MAX_AGE", default: 300, min: 0, max: YEAR, doc: "`max-age` of documents (s)" });
export const CACHE_S_MAXAGE = wholeNumber({ name: "CACHE_S_MAXAGE", default: 3_600, min: 0, max: YEAR, doc: "`s-maxage` (s)" });
export const CACHE_STALE_WHILE_REVALIDATE = wholeNumber({
  name: "CACHE_STALE_WHILE_REVALIDATE",
  default: 600,
  min: 0,
  max: YEAR,
  doc: "`stale-while-revalidate` (s; 0 = left out)",
});
export const EDGE_CACHE_TTL = wholeNumber({
  name: "EDGE_CACHE_TTL",
  default: DAY,
  min: 0,
  max: YEAR,
  doc: "lifetime of a versioned copy in the Cache API (0 = layer off)",
});
export const MANIFEST_CACHE_TTL = wholeNumber({
  name: "MANIFEST_CACHE_TTL",
  default: 60,
  min: 0,
  max: DAY,
  doc: "how long a location trusts its cached manifest (0 = read it each time)",
});

// Cron regeneration (docs/regeneration.md)

export const REGEN_MAX_SHARDS = wholeNumber({
  name: "REGEN_MAX_SHARDS",
  default: 50,
  min: 1,
  max: 10_000,
  doc: "shards rendered per run and site",
});
export const REGEN_MAX_ROWS = wholeNumber({
  name: "REGEN_MAX_ROWS",
  default: 2_000_000,
  min: 1,
  max: 1_000_000_000,
  doc: "record rows read per run and site",
});
export const REGEN_SETTLE_SECONDS = wholeNumber({
  name: "REGEN_SETTLE_SECONDS",
  default: 60,
  min: 0,
  max: 3_600,
  doc: "the change cursor stays this far behind the newest change",
});
export const SNAPSHOT_GRACE_SECONDS = wholeNumber({
  name: "SNAPSHOT_GRACE_SECONDS",
  default: 3_600,
  min: 0,
  max: 30 * DAY,
  doc: "superseded snapshots are kept this long",
});

// Admin ingest (docs/ingest.md)

// A request's cost in workerd grows with its body: a valid batch of many small images, parsed,
// validated and written in one D1 transaction, takes ~50 times its bytes of memory (measured in
// test/e2e/abuse.e2e.test.ts). 1 MiB keeps the largest well under an isolate's 128 MB; 2 MiB is
// the most that stays under it. The import CLI sends batches that fit.
export const ADMIN_MAX_RECORDS = wholeNumber({
  name: "ADMIN_MAX_RECORDS",
  default: 5_000,
  min: 1,
  max: 10_000,
  doc: "records per request",
});
export const ADMIN_MAX_BYTES = wholeNumber({
  name: "ADMIN_MAX_BYTES",
  default: 1024 * 1024,
  min: 1024,
  max: 2 * 1024 * 1024,
  doc: "request body bytes",
});
export const SYNC_TTL_SECONDS = wholeNumber({
  name: "SYNC_TTL_SECONDS",
  default: DAY,
  min: 60,
  max: 30 * DAY,
  doc: "an open sync that receives no batch for this long is abandoned (nothing deleted) and swept by the cron",
});

// Mirrors (docs/mirror.md)

const MIRROR_RULE = "must list http(s) URLs of sitemaps or sitemap indexes";
export const MIRROR_SITEMAPS = variable({
  name: "MIRROR_SITEMAPS",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    const urls = listVar(text);
    const bad = urls.findIndex((url) => !isHttpUrl(url));
    if (bad >= 0) {
      ctx.addIssue({ code: "custom", message: `${MIRROR_RULE} (entry ${bad + 1} is not one)` });
      return z.NEVER;
    }
    return [...new Set(urls.map((url) => new URL(url).href))] as readonly string[];
  }),
  default: "",
  rule: MIRROR_RULE,
  doc: "sitemaps or sitemap indexes (`.xml`, `.xml.gz`) the cron fetches and syncs, comma or space separated: each is a scope of its own",
});
export const MIRROR_MAX_RECORDS_PER_RUN = wholeNumber({
  name: "MIRROR_MAX_RECORDS_PER_RUN",
  default: 50_000,
  min: 100,
  max: 1_000_000,
  doc: "records a cron run reads from mirrors (all together); a larger mirror converges over runs",
});
export const MIRROR_MAX_BYTES = wholeNumber({
  name: "MIRROR_MAX_BYTES",
  default: 64 * 1024 * 1024,
  min: 1024,
  max: 256 * 1024 * 1024,
  doc: "decompressed bytes of one fetched sitemap (sitemaps.org allows 52,428,800); a larger one fails the mirror",
});
export const MIRROR_TIMEOUT_MS = wholeNumber({
  name: "MIRROR_TIMEOUT_MS",
  default: 30_000,
  min: 100,
  max: 600_000,
  doc: "time to fetch and read one sitemap of a mirror",
});
export const MIRROR_MAX_DELETE = wholeNumber({
  name: "MIRROR_MAX_DELETE",
  default: 50,
  min: 0,
  max: 100,
  doc: "the most a mirror pass may delete, in percent of what the mirror brought in; more fails the mirror, nothing deleted",
});

// Search-engine notification and robots.txt (docs/notify.md)

export const INDEXNOW_ENDPOINT = variable({
  name: "INDEXNOW_ENDPOINT",
  presence: "default",
  schema: z.string().refine(isHttpUrl, { message: HTTP_URL }),
  default: INDEXNOW_ENDPOINT_DEFAULT,
  rule: HTTP_URL,
  doc: "IndexNow endpoint",
});
export const INDEXNOW_BATCHES_PER_RUN = wholeNumber({
  name: "INDEXNOW_BATCHES_PER_RUN",
  default: 5,
  min: 1,
  max: 100,
  doc: "POSTs of ≤ 10,000 URLs per site and run",
});

const PING_RULE = 'must list http(s) URL templates with {sitemap}, e.g. "https://engine.example/ping?sitemap={sitemap}"';
export const PING_URLS = variable({
  name: "PING_URLS",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    const templates = listVar(text);
    for (const [i, template] of templates.entries()) {
      const problem = !template.includes("{sitemap}")
        ? "has no {sitemap} placeholder"
        : !isUrlTemplate(template, { "{sitemap}": "x" })
          ? "is not an http(s) URL template"
          : null;
      if (problem !== null) {
        ctx.addIssue({ code: "custom", message: `${PING_RULE} (entry ${i + 1} ${problem})` });
        return z.NEVER;
      }
    }
    return [...new Set(templates)] as readonly string[];
  }),
  default: "",
  rule: PING_RULE,
  doc: "ping URL templates with `{sitemap}`",
});

const PROPERTY_RULE = 'must be a URL-prefix property (e.g. "{origin}/") or "sc-domain:<domain>"';
export const GSC_PROPERTY = variable({
  name: "GSC_PROPERTY",
  presence: "default",
  schema: z.string().refine((text) => (text.startsWith("sc-domain:") ? /^sc-domain:[a-z0-9.{}-]+$/i.test(text) : isUrlTemplate(text, ORIGIN_SAMPLES)), {
    message: PROPERTY_RULE,
  }),
  default: "{origin}/",
  rule: PROPERTY_RULE,
  doc: "Search Console property of a site (`{origin}`, `{host}` filled in)",
});
export const GSC_TOKEN_URL = variable({
  name: "GSC_TOKEN_URL",
  presence: "optional",
  schema: z.string().refine(isHttpUrl, { message: HTTP_URL }),
  default: null,
  unset: "the key file's `token_uri`, else Google's",
  rule: HTTP_URL,
  doc: "OAuth token endpoint of Search Console",
});
export const GSC_API_BASE = variable({
  name: "GSC_API_BASE",
  presence: "default",
  schema: z
    .string()
    .refine(isHttpUrl, { message: HTTP_URL })
    .transform((text) => text.replace(/\/+$/, "")),
  default: GSC_API_BASE_DEFAULT,
  rule: HTTP_URL,
  doc: "Search Console API base",
});
export const NOTIFY_TIMEOUT_MS = wholeNumber({
  name: "NOTIFY_TIMEOUT_MS",
  default: 10_000,
  min: 100,
  max: 60_000,
  doc: "timeout of each outbound notification request (ms)",
});
export const NOTIFY_SETTLE_SECONDS = wholeNumber({
  name: "NOTIFY_SETTLE_SECONDS",
  default: 60,
  min: 0,
  max: 3_600,
  doc: "changes younger than this wait for the next run",
});

const ROBOTS_RULE = 'must be an http(s) URL (may use {origin} or {host}) or "none"';
export const ROBOTS_ORIGIN_URL = variable({
  name: "ROBOTS_ORIGIN_URL",
  presence: "default",
  schema: z
    .string()
    .refine((text) => text === "none" || isUrlTemplate(text, ORIGIN_SAMPLES), { message: ROBOTS_RULE })
    .transform((text) => (text === "none" ? null : text)),
  default: ROBOTS_ORIGIN_URL_DEFAULT,
  rule: ROBOTS_RULE,
  doc: "where `/robots.txt` fetches the site's own file (`none` = no file)",
});
export const ROBOTS_ORIGIN_TIMEOUT_MS = wholeNumber({
  name: "ROBOTS_ORIGIN_TIMEOUT_MS",
  default: 3_000,
  min: 100,
  max: 30_000,
  doc: "timeout of that fetch (ms)",
});
export const ROBOTS_MAX_AGE = wholeNumber({
  name: "ROBOTS_MAX_AGE",
  default: 300,
  min: 0,
  max: DAY,
  doc: "cache lifetime of the merged robots.txt (s)",
});

// Secrets

export const ADMIN_TOKEN = variable({
  name: "ADMIN_TOKEN",
  presence: "optional",
  // RFC 6750's token syntax: what hono/bearer-auth accepts in the Authorization header. At least
  // 32 characters, so it cannot be guessed (`npm start` generates a longer one).
  schema: z
    .string()
    .min(32)
    .regex(/^[A-Za-z0-9._~+/-]+=*$/),
  default: null,
  unset: "— (admin API off)",
  rule: "must be a bearer token of at least 32 characters: letters, digits and - . _ ~ + / (optionally ending in =)",
  doc: "enables the admin API under `/sitemap-admin/`",
  secret: true,
});
export const INDEXNOW_KEY = variable({
  name: "INDEXNOW_KEY",
  presence: "optional",
  schema: z.string().regex(INDEXNOW_KEY_PATTERN),
  default: null,
  unset: "— (IndexNow off)",
  rule: 'must be 8 to 128 characters of a-z, A-Z, 0-9 and "-"',
  doc: "enables IndexNow",
  secret: true,
});

/** What the Worker reads from the service account's JSON key file. */
interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  privateKeyId: string | null;
  tokenUri: string | null;
}

const SERVICE_ACCOUNT_RULE = "must be the JSON key file of a Google service account";
export const GSC_SERVICE_ACCOUNT = variable({
  name: "GSC_SERVICE_ACCOUNT",
  presence: "optional",
  schema: z.string().transform((text, ctx): ServiceAccount => {
    const fail = (message: string) => {
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return fail(`${SERVICE_ACCOUNT_RULE} (it is not JSON)`);
    }
    if (typeof json !== "object" || json === null) return fail("must be a JSON object");
    const { client_email: email, private_key: key, private_key_id: keyId, token_uri: tokenUri } = json as Record<string, unknown>;
    if (typeof email !== "string" || !email.includes("@")) return fail('has no "client_email"');
    if (typeof key !== "string" || !key.includes("-----BEGIN PRIVATE KEY-----")) {
      return fail('has no "private_key" in PKCS#8 PEM form ("-----BEGIN PRIVATE KEY-----")');
    }
    return {
      clientEmail: email,
      privateKey: key,
      privateKeyId: typeof keyId === "string" ? keyId : null,
      tokenUri: typeof tokenUri === "string" ? tokenUri : null,
    };
  }),
  default: null,
  unset: "— (Search Console off)",
  rule: SERVICE_ACCOUNT_RULE,
  doc: "enables Search Console submission (the service account's JSON key)",
  secret: true,
});

/** Every declared variable and secret, in the README's order. */
export const VARIABLES: readonly Variable[] = [
  SITES,
  DEFAULT_SECTION,
  SECTION_RULES,
  MAX_URLS_PER_SHARD,
  MAX_BYTES_PER_SHARD,
  INDEX_LINK_FORM,
  LASTMOD_DATE_ONLY,
  DATE_ONLY_SITES,
  URL_SOURCE,
  SITE_DATABASES,
  MANIFEST_STORE,
  BROWSER_VIEW,
  FEED_SIZE,
  FEED_IN_INDEX,
  CACHE_MAX_AGE,
  CACHE_S_MAXAGE,
  CACHE_STALE_WHILE_REVALIDATE,
  EDGE_CACHE_TTL,
  MANIFEST_CACHE_TTL,
  REGEN_MAX_SHARDS,
  REGEN_MAX_ROWS,
  REGEN_SETTLE_SECONDS,
  SNAPSHOT_GRACE_SECONDS,
  ADMIN_MAX_RECORDS,
  ADMIN_MAX_BYTES,
  SYNC_TTL_SECONDS,
  MIRROR_SITEMAPS,
  MIRROR_MAX_RECORDS_PER_RUN,
  MIRROR_MAX_BYTES,
  MIRROR_TIMEOUT_MS,
  MIRROR_MAX_DELETE,
  INDEXNOW_ENDPOINT,
  INDEXNOW_BATCHES_PER_RUN,
  PING_URLS,
  GSC_PROPERTY,
  GSC_TOKEN_URL,
  GSC_API_BASE,
  NOTIFY_TIMEOUT_MS,
  NOTIFY_SETTLE_SECONDS,
  ROBOTS_ORIGIN_URL,
  ROBOTS_ORIGIN_TIMEOUT_MS,
  ROBOTS_MAX_AGE,
  GSC_STATUS_INTERVAL,
  ACCESS_TEAM_DOMAIN,
  ACCESS_AUD,
  ADMIN_TOKEN,
  INDEXNOW_KEY,
  GSC_SERVICE_ACCOUNT,
];
