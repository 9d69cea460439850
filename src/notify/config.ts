/**
 * Configuration of search-engine notification and robots.txt, parsed with the rest of the config
 * (src/config.ts calls parseNotifyConfig), so a bad value fails at startup with a ConfigError that
 * names the variable. Secrets: INDEXNOW_KEY, GSC_SERVICE_ACCOUNT. See docs/notify.md.
 */
import { ConfigError, listVar } from "../config.ts";

/** IndexNow key format (IndexNow protocol): 8–128 of a-z, A-Z, 0-9 and "-". */
export const INDEXNOW_KEY_PATTERN = /^[a-zA-Z0-9-]{8,128}$/;
export const INDEXNOW_ENDPOINT_DEFAULT = "https://api.indexnow.org/indexnow";
export const GSC_TOKEN_URL_DEFAULT = "https://oauth2.googleapis.com/token";
export const GSC_API_BASE_DEFAULT = "https://www.googleapis.com";
export const GSC_SCOPE = "https://www.googleapis.com/auth/webmasters";
/** Where robots.txt is fetched from by default: the same URL (a route's subrequest reaches the origin). */
export const ROBOTS_ORIGIN_URL_DEFAULT = "{origin}/robots.txt";

export interface IndexNowConfig {
  key: string;
  endpoint: string;
  /** Most POSTs (of ≤ 10,000 URLs) per site and cron run; the rest waits for the next run. */
  batchesPerRun: number;
}

export interface SearchConsoleConfig {
  clientEmail: string;
  /** PKCS#8 PEM of the service account's RSA key. */
  privateKey: string;
  privateKeyId: string | null;
  tokenUrl: string;
  apiBase: string;
  /** Search Console property of a site: template with {origin} and {host}, e.g. "sc-domain:example.com". */
  property: string;
}

export interface RobotsConfig {
  /** Where the site's own robots.txt is fetched from (template with {origin}, {host}); null = none. */
  originUrl: string | null;
  timeoutMs: number;
  /** Cache lifetime (s) of the merged robots.txt. */
  maxAge: number;
}

export interface NotifyConfig {
  /** null: IndexNow off (no INDEXNOW_KEY). */
  indexNow: IndexNowConfig | null;
  /** Ping URL templates, each with a {sitemap} placeholder. Empty by default. */
  pingUrls: readonly string[];
  /** null: Search Console off (no GSC_SERVICE_ACCOUNT). */
  searchConsole: SearchConsoleConfig | null;
  /** Timeout of each outbound notification request (ms). */
  timeoutMs: number;
  /** Changes younger than this (ms) wait for the next run: a write stamped just before a slower one commits late. */
  settleMs: number;
  robots: RobotsConfig;
}

type RawEnv = Record<string, unknown>;

function text(env: RawEnv, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new ConfigError(name, `must be a string, got ${typeof value}`);
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function integer(env: RawEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}

function httpUrl(name: string, raw: string, what = "an http(s) URL"): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be ${what}, got "${raw}"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new ConfigError(name, `must be ${what}, got "${raw}"`);
  return raw;
}

/** A template becomes a URL once its placeholders are filled: check it with sample values. */
function urlTemplate(name: string, raw: string, placeholders: Record<string, string>, what: string): string {
  let sample = raw;
  for (const [p, v] of Object.entries(placeholders)) sample = sample.replaceAll(p, v);
  httpUrl(name, sample, what);
  return raw;
}

export function fillTemplate(template: string, origin: string): string {
  return template.replaceAll("{origin}", origin).replaceAll("{host}", new URL(origin).host);
}

interface ServiceAccountJson {
  client_email?: unknown;
  private_key?: unknown;
  private_key_id?: unknown;
  token_uri?: unknown;
}

function serviceAccount(env: RawEnv): SearchConsoleConfig | null {
  const raw = text(env, "GSC_SERVICE_ACCOUNT");
  if (raw === undefined) return null;
  let json: ServiceAccountJson;
  try {
    json = JSON.parse(raw) as ServiceAccountJson;
  } catch {
    throw new ConfigError("GSC_SERVICE_ACCOUNT", "must be the JSON key file of a Google service account (it is not JSON)");
  }
  if (typeof json !== "object" || json === null) throw new ConfigError("GSC_SERVICE_ACCOUNT", "must be a JSON object");
  if (typeof json.client_email !== "string" || !json.client_email.includes("@")) {
    throw new ConfigError("GSC_SERVICE_ACCOUNT", 'has no "client_email"');
  }
  if (typeof json.private_key !== "string" || !json.private_key.includes("-----BEGIN PRIVATE KEY-----")) {
    throw new ConfigError("GSC_SERVICE_ACCOUNT", 'has no "private_key" in PKCS#8 PEM form ("-----BEGIN PRIVATE KEY-----")');
  }
  const tokenUrl = text(env, "GSC_TOKEN_URL") ?? (typeof json.token_uri === "string" ? json.token_uri : GSC_TOKEN_URL_DEFAULT);
  return {
    clientEmail: json.client_email,
    privateKey: json.private_key,
    privateKeyId: typeof json.private_key_id === "string" ? json.private_key_id : null,
    tokenUrl: httpUrl("GSC_TOKEN_URL", tokenUrl),
    apiBase: httpUrl("GSC_API_BASE", (text(env, "GSC_API_BASE") ?? GSC_API_BASE_DEFAULT).replace(/\/+$/, "")),
    property: property(env),
  };
}

function property(env: RawEnv): string {
  const raw = text(env, "GSC_PROPERTY") ?? "{origin}/";
  if (raw.startsWith("sc-domain:")) {
    if (!/^sc-domain:[a-z0-9.{}-]+$/i.test(raw)) throw new ConfigError("GSC_PROPERTY", `must be "sc-domain:<domain>" or a URL prefix, got "${raw}"`);
    return raw;
  }
  return urlTemplate("GSC_PROPERTY", raw, { "{origin}": "https://example.com", "{host}": "example.com" }, 'a URL-prefix property (e.g. "{origin}/") or "sc-domain:<domain>"');
}

function robots(env: RawEnv): RobotsConfig {
  const raw = text(env, "ROBOTS_ORIGIN_URL") ?? ROBOTS_ORIGIN_URL_DEFAULT;
  const originUrl =
    raw === "none"
      ? null
      : urlTemplate("ROBOTS_ORIGIN_URL", raw, { "{origin}": "https://example.com", "{host}": "example.com" }, 'an http(s) URL (may use {origin} or {host}) or "none"');
  return {
    originUrl,
    timeoutMs: integer(env, "ROBOTS_ORIGIN_TIMEOUT_MS", 3000, 100, 30_000),
    maxAge: integer(env, "ROBOTS_MAX_AGE", 300, 0, 86_400),
  };
}

export function parseNotifyConfig(env: RawEnv): NotifyConfig {
  const key = text(env, "INDEXNOW_KEY");
  if (key !== undefined && !INDEXNOW_KEY_PATTERN.test(key)) {
    // The key is public (it is served as a file), but a near-miss is more useful than its length.
    throw new ConfigError("INDEXNOW_KEY", `must be 8 to 128 characters of a-z, A-Z, 0-9 and "-", got ${key.length} characters`);
  }
  const pingUrls = listVar(text(env, "PING_URLS")).map((t) => {
    if (!t.includes("{sitemap}")) throw new ConfigError("PING_URLS", `has "${t}" without the {sitemap} placeholder`);
    return urlTemplate("PING_URLS", t, { "{sitemap}": "x" }, 'a list of http(s) URL templates with {sitemap}, e.g. "https://engine.example/ping?sitemap={sitemap}"');
  });
  return {
    indexNow:
      key === undefined
        ? null
        : {
            key,
            endpoint: httpUrl("INDEXNOW_ENDPOINT", text(env, "INDEXNOW_ENDPOINT") ?? INDEXNOW_ENDPOINT_DEFAULT),
            batchesPerRun: integer(env, "INDEXNOW_BATCHES_PER_RUN", 5, 1, 100),
          },
    pingUrls: [...new Set(pingUrls)],
    searchConsole: serviceAccount(env),
    timeoutMs: integer(env, "NOTIFY_TIMEOUT_MS", 10_000, 100, 60_000),
    settleMs: integer(env, "NOTIFY_SETTLE_SECONDS", 60, 0, 3600) * 1000,
    robots: robots(env),
  };
}
