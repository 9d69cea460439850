/**
 * `GET /robots.txt` for a configured site: never fewer rules than the origin's own answer. The
 * origin's robots.txt, unchanged, plus one `Sitemap:` line per index URL it does not list yet
 * (docs/notify.md), by what the origin answered (src/http/robots/fetch-origin.ts):
 * - a file (a 2xx that is not an HTML document, whatever its Content-Type): kept byte for byte (its
 *   first 500 KiB cut at a line end when longer), the lines added after it; stored as the last good
 *   copy when it changed (src/http/robots/last-good.ts);
 * - no file (404, 410, an HTML document, ROBOTS_ORIGIN_URL=none): a minimal allow-all file with the lines;
 * - a 5xx or 429: passed on, its status and Retry-After, never cached (src/http/robots/origin-error.ts);
 * - the rules cannot be had by us (another 4xx to our fetch, a timeout, a network error, a redirect
 *   failure) or the fetch looped back into this Worker: the last good copy with the lines and its
 *   age in `X-Robots-Origin-Age`, or 503 with `Retry-After` when there is none. A loop is also
 *   recorded for status (src/http/robots/loop-record.ts), and any other outcome clears that record.
 * Good answers are cached: `Cache-Control: public, max-age=ROBOTS_MAX_AGE` and the data centre's
 * Cache API; "no file" and the last good copy for 60 s at most, so a recovered origin is seen
 * soon; an error never.
 */

import { fillTemplate } from "../../config/notify.ts";
import type { Config } from "../../config.ts";
import { Fingerprint } from "../../core/fingerprint.ts";
import { type CachedSite, cacheKey } from "../../documents/cache-keys.ts";
import { FEED_PATH } from "../../documents/paths.ts";
import type { Fetcher } from "../../notify/http.ts";
import { indexUrls } from "../../notify/index-urls.ts";
import type { RobotsLastGoodStore } from "../../robots/last-good-store.ts";
import type { RobotsLoopStore } from "../../robots/loop-store.ts";
import { type OriginRobots, fetchOriginRobots } from "./fetch-origin.ts";
import { rememberGood } from "./last-good.ts";
import { clearLoop, recordLoop } from "./loop-record.ts";
import { originErrorAnswer } from "./origin-error.ts";
import { ROBOTS_READ_LIMIT, mergeRobots, minimalRobots } from "./text.ts";
import { unavailable } from "./unavailable.ts";

const FALLBACK_MAX_AGE = 60;

export interface RobotsDeps {
  config: Config;
  origin: string;
  fetcher: Fetcher;
  /** Where the last good copy is kept; null: nowhere (the origin's rules out of reach then answer 503). */
  lastGood: RobotsLastGoodStore | null;
  /** Where a loop is recorded for status; null: nowhere. */
  loops: RobotsLoopStore | null;
  /** Whether the record store keeps recent changes, so the Atom feed exists (`store.recent`). */
  hasFeed: boolean;
  waitUntil: (promise: Promise<unknown>) => void;
  /** When the registered site at `origin` was registered; null for a site of SITES (part of the cache key). */
  registeredAt: number | null;
}

/**
 * Cache key: the config that shapes the answer is part of it, so a config change is seen at once;
 * and, as in every cached document's key (src/documents/cache-keys.ts), a registered site's
 * registration, so a later tenant registered at the same origin never reaches the answers cached for
 * an earlier one (they become unreachable, and expire: ROBOTS_MAX_AGE).
 */
function robotsKey(config: Config, site: CachedSite, sitemaps: readonly string[]): Request {
  const version = new Fingerprint().addString(config.notify.robots.originUrl ?? "none");
  for (const s of sitemaps) version.addString(s);
  return new Request(cacheKey(site, "/robots.txt", "robots", version.digest()));
}

/** The data centre's Cache API, when the runtime has one. */
function defaultCache(): Cache | null {
  return typeof caches === "undefined" ? null : ((caches as CacheStorage & { default?: Cache }).default ?? null);
}

/** The sitemaps robots.txt lists: the index, and the Atom feed of recent changes (engines take feeds as sitemaps). */
function sitemapsOf(config: Config, origin: string, hasFeed: boolean): string[] {
  return config.feedSize > 0 && hasFeed ? [...indexUrls(origin), origin + FEED_PATH] : indexUrls(origin);
}

/** A 200 answer, before its common headers. */
interface Answer {
  body: Uint8Array | string;
  maxAge: number;
  headers: Record<string, string>;
}

/** Runs a store write after the answer, logging (never throwing) its failure. */
function later(deps: RobotsDeps, what: string, work: Promise<unknown>): void {
  deps.waitUntil(work.catch((error: unknown) => console.warn(`robots.txt: ${what} of ${deps.origin} failed: ${String(error)}`)));
}

/** The last good copy with the lines, or null when there is none (or it cannot be read). */
async function lastGoodAnswer(deps: RobotsDeps, reason: string, sitemaps: string[], now: number): Promise<Answer | null> {
  const { lastGood, origin } = deps;
  const copy =
    lastGood === null
      ? null
      : await lastGood.get(origin).catch((error: unknown) => {
          console.warn(`robots.txt: reading the last good copy of ${origin} failed: ${String(error)}`);
          return null;
        });
  if (copy === null) return null;
  const age = Math.max(0, Math.floor((now - copy.fetchedAt) / 1000));
  return {
    body: mergeRobots(copy.body, sitemaps),
    maxAge: Math.min(deps.config.notify.robots.maxAge, FALLBACK_MAX_AGE),
    headers: { "X-Robots-Origin": `${reason}; serving the last good copy`, "X-Robots-Origin-Age": String(age) },
  };
}

/** The answer to what the origin said: a 200 to build, or a finished non-200 response. */
async function answerFor(deps: RobotsDeps, fetched: OriginRobots, sitemaps: string[], now: number): Promise<Answer | Response> {
  const { origin, lastGood, loops } = deps;
  const maxAge = deps.config.notify.robots.maxAge;
  if (loops !== null) {
    if (fetched.kind === "loop") later(deps, "recording the robots.txt loop", recordLoop(loops, origin, now));
    else later(deps, "clearing the robots.txt loop record", clearLoop(loops, origin));
  }
  switch (fetched.kind) {
    case "file": {
      if (lastGood !== null) later(deps, "storing the last good copy", rememberGood(lastGood, origin, fetched.body, now));
      const headers: Record<string, string> = fetched.truncated
        ? { "X-Robots-Origin": `origin file cut at its last line end within ${ROBOTS_READ_LIMIT} bytes` }
        : {};
      return { body: mergeRobots(fetched.body, sitemaps), maxAge, headers };
    }
    case "absent":
      return { body: minimalRobots(sitemaps), maxAge: Math.min(maxAge, FALLBACK_MAX_AGE), headers: { "X-Robots-Origin": fetched.reason } };
    case "error":
      return originErrorAnswer(fetched.status, fetched.retryAfter, fetched.reason);
    case "unreachable":
    case "loop":
      return (await lastGoodAnswer(deps, fetched.reason, sitemaps, now)) ?? unavailable(fetched.reason);
  }
}

export async function robotsResponse(deps: RobotsDeps): Promise<Response> {
  const { config, origin } = deps;
  const sitemaps = sitemapsOf(config, origin, deps.hasFeed);
  const cache = defaultCache();
  const key = robotsKey(config, { origin, registeredAt: deps.registeredAt }, sitemaps);
  if (cache) {
    const hit = await cache.match(key);
    if (hit) return hit;
  }
  const { originUrl, timeoutMs } = config.notify.robots;
  const fetched: OriginRobots =
    originUrl === null
      ? { kind: "absent", reason: "ROBOTS_ORIGIN_URL=none" }
      : await fetchOriginRobots(fillTemplate(originUrl, origin), timeoutMs, deps.fetcher);
  const answer = await answerFor(deps, fetched, sitemaps, Date.now());
  if (answer instanceof Response) return answer;
  const headers = new Headers({
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": answer.maxAge > 0 ? `public, max-age=${answer.maxAge}` : "no-store",
    ...answer.headers,
  });
  const response = new Response(answer.body, { status: 200, headers });
  if (cache && answer.maxAge > 0) deps.waitUntil(cache.put(key, response.clone()).catch(() => undefined));
  return response;
}
