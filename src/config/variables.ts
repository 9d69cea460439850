/**
 * Every environment variable and secret of the Worker, declared once: name, rule, default and
 * doc line. The typed Config is built from these (src/config/parse.ts), and a test checks the
 * README's configuration tables against them (test/node/config-readme.test.ts). Test-only knobs
 * are not declared here.
 */
import { z } from "zod";
import { DEFAULT_SECTION, MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, SECTION_PATTERN } from "../core/limits.ts";
import { normalizeOrigin } from "../core/url.ts";
import { GSC_API_BASE_DEFAULT, INDEXNOW_ENDPOINT_DEFAULT, INDEXNOW_KEY_PATTERN, ROBOTS_ORIGIN_URL_DEFAULT } from "../notify/config.ts";
import { type Variable, custom, flag, isHttpUrl, isUrlTemplate, listVar, oneOf, wholeNumber } from "./variable.ts";

const YEAR_SECONDS = 31_536_000;
const ORIGIN_SAMPLES = { "{origin}": "https://example.com", "{host}": "example.com" };

/** A list of origins; an entry that is not one is named by its position. */
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

/** An http(s) URL; `rule` is the message when it is not one. */
const httpUrl = (rule: string) => z.string().refine(isHttpUrl, { message: rule });

export const SITES = custom(
  "SITES",
  "required",
  origins('must list http(s) origins like "https://example.com"').refine((set) => set.size > 0, {
    message: 'must list at least one origin, e.g. "https://example.com"',
  }),
  null,
  'must list at least one origin, e.g. "https://example.com"',
  { doc: "origins served, comma or space separated, e.g. `https://example.com, https://shop.example.com`" },
);

export const DEFAULT_SECTION_VAR = custom(
  "DEFAULT_SECTION",
  "default",
  z.string().regex(SECTION_PATTERN),
  DEFAULT_SECTION,
  'must be lowercase letters, digits, "-" or "_" (≤ 64)',
  { doc: "section of records that name none (`[a-z0-9_-]`, ≤ 64)" },
);

export const MAX_URLS_PER_SHARD = wholeNumber("MAX_URLS_PER_SHARD", MAX_URLS_PER_SITEMAP, 1, MAX_URLS_PER_SITEMAP, "URLs per shard");
export const MAX_BYTES_PER_SHARD = wholeNumber(
  "MAX_BYTES_PER_SHARD",
  MAX_SITEMAP_BYTES,
  1024,
  MAX_SITEMAP_BYTES,
  "uncompressed bytes per shard",
);
export const INDEX_LINK_FORM = oneOf("INDEX_LINK_FORM", ["xml", "xml.gz"], "xml", "whether the index links `…-n.xml` or `…-n.xml.gz`");
export const LASTMOD_DATE_ONLY = flag("LASTMOD_DATE_ONLY", false, "emit `<lastmod>` as `YYYY-MM-DD` only, for every site");

export const DATE_ONLY_SITES = custom(
  "DATE_ONLY_SITES",
  "default",
  origins("must list origins that are also in SITES"),
  "",
  "must list origins that are also in SITES",
  { doc: "the same for the listed sites only (engines that reject times)" },
);

export const URL_SOURCE = oneOf("URL_SOURCE", ["d1", "kv"], "d1", "where records are read from: `d1` or `kv` ([docs/kv.md](docs/kv.md))");
export const MANIFEST_STORE = oneOf("MANIFEST_STORE", ["d1", "kv"], "d1", "where manifests live: `d1` or `kv` (a deployment without D1)");
export const BROWSER_VIEW = flag(
  "BROWSER_VIEW",
  true,
  "`<?xml-stylesheet?>` link to `/sitemap.xsl` for people opening a sitemap in a browser",
);
export const FEED_SIZE = wholeNumber("FEED_SIZE", 100, 0, 1_000, "entries of the Atom feed (0 = off)");
export const FEED_IN_INDEX = flag("FEED_IN_INDEX", false, "also list the feed in the index (it is always in robots.txt)");

export const CACHE_MAX_AGE = wholeNumber("CACHE_MAX_AGE", 300, 0, YEAR_SECONDS, "`Cache-Control: max-age` of sitemap documents, seconds");
export const CACHE_S_MAXAGE = wholeNumber(
  "CACHE_S_MAXAGE",
  3_600,
  0,
  YEAR_SECONDS,
  "`s-maxage` for shared caches (the tiered Workers Cache)",
);
export const CACHE_STALE_WHILE_REVALIDATE = wholeNumber(
  "CACHE_STALE_WHILE_REVALIDATE",
  600,
  0,
  YEAR_SECONDS,
  "`stale-while-revalidate` (0 = left out)",
);
export const EDGE_CACHE_TTL = wholeNumber(
  "EDGE_CACHE_TTL",
  86_400,
  0,
  YEAR_SECONDS,
  "lifetime of a versioned copy in the Cache API (0 = layer off)",
);
export const MANIFEST_CACHE_TTL = wholeNumber(
  "MANIFEST_CACHE_TTL",
  60,
  0,
  86_400,
  "how long a location trusts its cached manifest (0 = read D1 each time)",
);

export const REGEN_MAX_SHARDS = wholeNumber(
  "REGEN_MAX_SHARDS",
  50,
  1,
  10_000,
  "shards rendered per cron run and site; the rest continues next run",
);
export const REGEN_MAX_ROWS = wholeNumber("REGEN_MAX_ROWS", 2_000_000, 1, 1_000_000_000, "record rows read per cron run and site");
export const REGEN_SETTLE_SECONDS = wholeNumber(
  "REGEN_SETTLE_SECONDS",
  60,
  0,
  3_600,
  "the change cursor stays this far behind the newest change (late-committing writes)",
);
export const SNAPSHOT_GRACE_SECONDS = wholeNumber(
  "SNAPSHOT_GRACE_SECONDS",
  3_600,
  0,
  30 * 86_400,
  "superseded snapshots are kept this long before deletion",
);

export const ADMIN_MAX_RECORDS = wholeNumber("ADMIN_MAX_RECORDS", 10_000, 1, 50_000, "records per admin request; 413 beyond");
export const ADMIN_MAX_BYTES = wholeNumber(
  "ADMIN_MAX_BYTES",
  10 * 1024 * 1024,
  1024,
  32 * 1024 * 1024,
  "body bytes per admin request; 413 beyond",
);

export const INDEXNOW_ENDPOINT = custom(
  "INDEXNOW_ENDPOINT",
  "default",
  httpUrl("must be an http(s) URL"),
  INDEXNOW_ENDPOINT_DEFAULT,
  "must be an http(s) URL",
  {
    doc: "IndexNow endpoint",
  },
);
export const INDEXNOW_BATCHES_PER_RUN = wholeNumber("INDEXNOW_BATCHES_PER_RUN", 5, 1, 100, "POSTs of ≤ 10,000 URLs per site and run");

const PING_RULE = 'must list http(s) URL templates with {sitemap}, e.g. "https://engine.example/ping?sitemap={sitemap}"';
export const PING_URLS = custom(
  "PING_URLS",
  "default",
  z.string().transform((text, ctx) => {
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
  "",
  PING_RULE,
  { doc: "ping URL templates with `{sitemap}`; none by default (see below)" },
);

export const GSC_PROPERTY = custom(
  "GSC_PROPERTY",
  "default",
  z
    .string()
    .refine((text) => (text.startsWith("sc-domain:") ? /^sc-domain:[a-z0-9.{}-]+$/i.test(text) : isUrlTemplate(text, ORIGIN_SAMPLES)), {
      message: 'must be a URL-prefix property (e.g. "{origin}/") or "sc-domain:<domain>"',
    }),
  "{origin}/",
  'must be a URL-prefix property (e.g. "{origin}/") or "sc-domain:<domain>"',
  { doc: "Search Console property of a site (`{origin}`, `{host}` filled in)" },
);
export const GSC_TOKEN_URL = custom("GSC_TOKEN_URL", "optional", httpUrl("must be an http(s) URL"), null, "must be an http(s) URL", {
  doc: "OAuth token endpoint of Search Console",
  unset: "the key file's `token_uri`, else Google's",
});
export const GSC_API_BASE = custom(
  "GSC_API_BASE",
  "default",
  httpUrl("must be an http(s) URL").transform((text) => text.replace(/\/+$/, "")),
  GSC_API_BASE_DEFAULT,
  "must be an http(s) URL",
  { doc: "Search Console API base" },
);
export const NOTIFY_TIMEOUT_MS = wholeNumber(
  "NOTIFY_TIMEOUT_MS",
  10_000,
  100,
  60_000,
  "timeout of each outbound notification request (ms)",
);
export const NOTIFY_SETTLE_SECONDS = wholeNumber("NOTIFY_SETTLE_SECONDS", 60, 0, 3_600, "changes younger than this wait for the next run");

const ROBOTS_RULE = 'must be an http(s) URL (may use {origin} or {host}) or "none"';
export const ROBOTS_ORIGIN_URL = custom(
  "ROBOTS_ORIGIN_URL",
  "default",
  z
    .string()
    .refine((text) => text === "none" || isUrlTemplate(text, ORIGIN_SAMPLES), { message: ROBOTS_RULE })
    .transform((text) => (text === "none" ? null : text)),
  ROBOTS_ORIGIN_URL_DEFAULT,
  ROBOTS_RULE,
  { doc: "where `/robots.txt` fetches the site's own file (`none` = no file)" },
);
export const ROBOTS_ORIGIN_TIMEOUT_MS = wholeNumber("ROBOTS_ORIGIN_TIMEOUT_MS", 3_000, 100, 30_000, "timeout of that fetch (ms)");
export const ROBOTS_MAX_AGE = wholeNumber("ROBOTS_MAX_AGE", 300, 0, 86_400, "cache lifetime of the merged robots.txt (s)");

/** RFC 6750's token syntax, which hono/bearer-auth accepts in the Authorization header. */
const ADMIN_TOKEN_RULE = "must be a bearer token: letters, digits and - . _ ~ + / (optionally ending in =)";
export const ADMIN_TOKEN = custom("ADMIN_TOKEN", "optional", z.string().regex(/^[A-Za-z0-9._~+/-]+=*$/), null, ADMIN_TOKEN_RULE, {
  doc: "enables the admin API under `/sitemap-admin/` (404 without it)",
  secret: true,
  unset: "— (admin API off)",
});

export const INDEXNOW_KEY = custom(
  "INDEXNOW_KEY",
  "optional",
  z.string().regex(INDEXNOW_KEY_PATTERN),
  null,
  'must be 8 to 128 characters of a-z, A-Z, 0-9 and "-"',
  {
    doc: "enables IndexNow (8–128 of `a-z A-Z 0-9 -`, checked at startup)",
    secret: true,
    unset: "— (IndexNow off)",
  },
);

/** What the Worker reads from the service account's JSON key file. */
interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  privateKeyId: string | null;
  tokenUri: string | null;
}

const SERVICE_ACCOUNT_RULE = "must be the JSON key file of a Google service account";
export const GSC_SERVICE_ACCOUNT = custom(
  "GSC_SERVICE_ACCOUNT",
  "optional",
  z.string().transform((text, ctx): ServiceAccount => {
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
  null,
  SERVICE_ACCOUNT_RULE,
  { doc: "enables Search Console submission (the service account's JSON key)", secret: true, unset: "— (Search Console off)" },
);

/** Every declared variable and secret, in the README's order. */
export const VARIABLES: readonly Variable[] = [
  SITES,
  DEFAULT_SECTION_VAR,
  MAX_URLS_PER_SHARD,
  MAX_BYTES_PER_SHARD,
  INDEX_LINK_FORM,
  LASTMOD_DATE_ONLY,
  DATE_ONLY_SITES,
  URL_SOURCE,
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
  ADMIN_TOKEN,
  INDEXNOW_KEY,
  GSC_SERVICE_ACCOUNT,
];
