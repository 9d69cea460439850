/**
 * `GET /robots.txt` (second zone route, `example.com/robots.txt`): the site's own robots.txt,
 * unchanged, plus one `Sitemap:` line per index URL it does not list yet. No `Host:` line is
 * added. When the origin has none (4xx), fails (5xx, network error, timeout) or answers with an
 * HTML page (a catch-all front end), a minimal valid file with the `Sitemap:` lines is served.
 *
 * Where the original comes from: ROBOTS_ORIGIN_URL (default `{origin}/robots.txt`, the same URL).
 * On a zone route a Worker's subrequest to its own zone goes to the origin server, not back into
 * the Worker; on a Custom Domain or workers.dev there is no origin behind the Worker, so set
 * ROBOTS_ORIGIN_URL to where the file really lives (or "none"). A request carrying our loop
 * header is answered 404, so a fetch that does come back to this Worker (wrangler dev, a
 * misconfigured URL) ends as "no origin file" instead of recursing.
 *
 * Bounded: at most 500 KiB of the origin's file is read (streaming; the rest is never fetched),
 * and redirects are followed by hand, only to the same host and at most MAX_REDIRECTS times. A
 * larger file, a redirect elsewhere or anything else odd gets the minimal file instead.
 *
 * Cached briefly: `Cache-Control: public, max-age=ROBOTS_MAX_AGE` (60 s at most for the fallback,
 * so a failing origin is retried soon) and the per-data-centre Cache API.
 */
import type { Config } from "../config.ts";
import { utf8Length } from "../core/escape.ts";
import { Fingerprint } from "../core/fingerprint.ts";
import { fillTemplate } from "../notify/config.ts";
import type { Fetcher } from "../notify/http.ts";
import { indexUrls } from "../notify/index-urls.ts";
import { FEED_PATH } from "./paths.ts";
import { readCapped } from "./read-capped.ts";

export const ROBOTS_LOOP_HEADER = "X-Edge-Sitemaps-Robots";
/** Crawlers read the first 500 KiB of robots.txt (RFC 9309 §2.5, Google): beyond that, our lines go first. */
const ROBOTS_READ_LIMIT = 500 * 1024;
const FALLBACK_MAX_AGE = 60;
const MAX_REDIRECTS = 5;
const SITEMAP_LINE = /^[ \t]*sitemap[ \t]*:[ \t]*(\S+)/i;

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/**
 * The origin's robots.txt with a `Sitemap:` line added for each URL it does not list yet
 * (comparison after URL normalisation, so `HTTPS://Example.com/sitemap.xml` counts as listed).
 * Everything else is kept byte for byte: line endings, comments, groups, an existing `Host:`.
 */
export function mergeRobots(original: string, sitemaps: readonly string[]): string {
  const listed = original
    .split(/\r\n|\r|\n/)
    .map((line) => SITEMAP_LINE.exec(line)?.[1])
    .filter((v): v is string => v !== undefined);
  const missing = [...new Set(sitemaps)].filter((url) => !listed.some((l) => sameUrl(l, url)));
  if (missing.length === 0) return original;
  const eol = original.includes("\r\n") ? "\r\n" : "\n";
  const block = missing.map((url) => `Sitemap: ${url}${eol}`).join("");
  if (original.trim() === "") return block;
  if (utf8Length(original) + utf8Length(block) > ROBOTS_READ_LIMIT) {
    const bom = original.startsWith("\uFEFF") ? "\uFEFF" : "";
    return `${bom}${block}${eol}${original.slice(bom.length)}`;
  }
  const body = /[\r\n]$/.test(original) ? original : original + eol;
  return `${body}${eol}${block}`;
}

/** A minimal valid robots.txt: everything allowed, and the sitemaps. */
export function minimalRobots(sitemaps: readonly string[]): string {
  return `User-agent: *\nDisallow:\n\n${[...new Set(sitemaps)].map((url) => `Sitemap: ${url}\n`).join("")}`;
}

type Origin = { kind: "file"; body: string } | { kind: "none"; reason: string };

async function fetchOriginRobots(config: Config, origin: string, fetcher: Fetcher): Promise<Origin> {
  const template = config.notify.robots.originUrl;
  if (template === null) return { kind: "none", reason: "ROBOTS_ORIGIN_URL=none" };
  let url = fillTemplate(template, origin);
  const host = new URL(url).host;
  // One deadline for the whole chain of redirects.
  const signal = AbortSignal.timeout(config.notify.robots.timeoutMs);
  try {
    let response = await fetcher(url, { headers: { [ROBOTS_LOOP_HEADER]: "1", Accept: "text/plain" }, redirect: "manual", signal });
    for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
      await response.body?.cancel();
      const location = response.headers.get("Location");
      const next = location === null ? null : URL.parse(location, url);
      if (next === null || hops === MAX_REDIRECTS) return { kind: "none", reason: `origin answered ${response.status}` };
      if (next.host !== host || !/^https?:$/.test(next.protocol)) return { kind: "none", reason: "origin redirected to another host" };
      url = next.href;
      response = await fetcher(url, { headers: { [ROBOTS_LOOP_HEADER]: "1", Accept: "text/plain" }, redirect: "manual", signal });
    }
    if (!response.ok) {
      await response.body?.cancel();
      return { kind: "none", reason: `origin answered ${response.status}` };
    }
    if (/^text\/html\b/i.test(response.headers.get("Content-Type") ?? "")) {
      await response.body?.cancel();
      return { kind: "none", reason: "origin answered an HTML page" };
    }
    const { text, overCap } = await readCapped(response.body, ROBOTS_READ_LIMIT);
    if (overCap) return { kind: "none", reason: `origin file is larger than ${ROBOTS_READ_LIMIT} bytes` };
    return { kind: "file", body: text };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    console.warn(`robots.txt: fetching ${url} ${timedOut ? "timed out" : `failed: ${String(error)}`}`);
    return { kind: "none", reason: timedOut ? "origin timed out" : "origin fetch failed" };
  }
}

interface RobotsDeps {
  config: Config;
  origin: string;
  fetcher?: Fetcher;
  waitUntil?: (promise: Promise<unknown>) => void;
  /** Cache API store; default caches.default. null: no Cache API. */
  cache?: Cache | null;
}

/** Cache key: the config that shapes the answer is part of it, so a config change is seen at once. */
function cacheKey(config: Config, origin: string, sitemaps: readonly string[]): Request {
  const version = new Fingerprint().addString(config.notify.robots.originUrl ?? "none");
  for (const s of sitemaps) version.addString(s);
  return new Request(`${origin}/robots.txt?edge-sitemaps=${version.digest()}`);
}

function defaultCache(): Cache | null {
  return typeof caches === "undefined" ? null : ((caches as CacheStorage & { default?: Cache }).default ?? null);
}

export async function robotsResponse(request: Request, deps: RobotsDeps): Promise<Response> {
  if (request.headers.has(ROBOTS_LOOP_HEADER)) {
    return new Response("404 Not Found: robots.txt loop\n", {
      status: 404,
      headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
    });
  }
  const { config, origin } = deps;
  // The Atom feed of recent changes is a sitemap too (engines take RSS/Atom as sitemaps), and
  // robots.txt is where crawlers look; the D1 source is the one that can list recent changes.
  const sitemaps = config.feedSize > 0 && config.urlSource === "d1" ? [...indexUrls(origin), origin + FEED_PATH] : indexUrls(origin);
  const cache = deps.cache === undefined ? defaultCache() : deps.cache;
  const key = cacheKey(config, origin, sitemaps);
  if (cache) {
    const hit = await cache.match(key);
    if (hit) return hit;
  }
  const original = await fetchOriginRobots(config, origin, deps.fetcher ?? ((input, init) => fetch(input, init)));
  const body = original.kind === "file" ? mergeRobots(original.body, sitemaps) : minimalRobots(sitemaps);
  const maxAge = original.kind === "file" ? config.notify.robots.maxAge : Math.min(config.notify.robots.maxAge, FALLBACK_MAX_AGE);
  const headers = new Headers({
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": maxAge > 0 ? `public, max-age=${maxAge}` : "no-store",
  });
  if (original.kind === "none") headers.set("X-Robots-Origin", original.reason);
  const response = new Response(body, { status: 200, headers });
  if (cache && maxAge > 0) {
    const put = cache.put(key, response.clone()).catch(() => undefined);
    if (deps.waitUntil) deps.waitUntil(put);
    else await put;
  }
  return response;
}
