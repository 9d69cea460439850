/**
 * Configuration types of search-engine notification and robots.txt (`config.notify`), and their
 * constants. They live with the configuration, which imports only the core; the services that
 * notify (src/notify/, src/gsc/) and serve robots.txt (src/http/robots/) read them from here. The
 * variables are declared in src/config/variables/notify.ts and robots.ts; see docs/notify.md.
 */

/** IndexNow key format (IndexNow protocol): 8–128 of a-z, A-Z, 0-9 and "-". */
export const INDEXNOW_KEY_PATTERN = /^[a-zA-Z0-9-]{8,128}$/;
export const INDEXNOW_ENDPOINT_DEFAULT = "https://api.indexnow.org/indexnow";
export const GSC_TOKEN_URL_DEFAULT = "https://oauth2.googleapis.com/token";
export const GSC_API_BASE_DEFAULT = "https://www.googleapis.com";
/** Submitting a sitemap (sitemaps.submit) needs the read-write scope. */
export const GSC_SUBMIT_SCOPE = "https://www.googleapis.com/auth/webmasters";
/** Reading what Google did with them (sitemaps.list) needs no more than read-only. */
export const GSC_READ_SCOPE = "https://www.googleapis.com/auth/webmasters.readonly";
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

interface RobotsConfig {
  /** Where the site's own robots.txt is fetched from (template with {origin}, {host}); null = none. */
  originUrl: string | null;
  timeoutMs: number;
  /** Cache lifetime (s) of the merged robots.txt. */
  maxAge: number;
}

export interface NotifyConfig {
  /** null: IndexNow off (no INDEXNOW_KEY). */
  indexNow: IndexNowConfig | null;
  /** Ping URL templates, each with a {sitemap} placeholder (and maybe {origin}, {host}): see `pingUrl`. Empty by default. */
  pingUrls: readonly string[];
  /** null: Search Console off (no GSC_SERVICE_ACCOUNT). */
  searchConsole: SearchConsoleConfig | null;
  /** Timeout of each outbound notification request (ms). */
  timeoutMs: number;
  /** Changes younger than this (ms) wait for the next run: a write stamped just before a slower one commits late. */
  settleMs: number;
  robots: RobotsConfig;
}

/** A template's `{origin}` and `{host}` placeholders filled in for one site. */
export function fillTemplate(template: string, origin: string): string {
  return template.replaceAll("{origin}", origin).replaceAll("{host}", new URL(origin).host);
}

/**
 * The URL a ping GETs for the site at `origin` and its index `indexUrl`: the template's `{sitemap}`
 * replaced by the URL-encoded index URL, then its `{origin}` and `{host}` filled. The one builder of
 * it: the pings (src/notify/ping.ts) and the check of a registered site's hosts (src/registry/hosts.ts).
 */
export function pingUrl(template: string, origin: string, indexUrl: string): string {
  return fillTemplate(template.replaceAll("{sitemap}", encodeURIComponent(indexUrl)), origin);
}
