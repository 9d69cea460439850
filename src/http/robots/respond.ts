/**
 * `GET /robots.txt` for a configured site: the origin's robots.txt, unchanged, plus one `Sitemap:`
 * line per index URL it does not list yet (docs/notify.md), by what the origin answered
 * (src/http/robots/fetch-origin.ts):
 * - a file: kept byte for byte (its first 500 KiB cut at a line end when longer), the lines added
 *   after it; stored as the last good copy when it changed (src/http/robots/last-good.ts);
 * - no file (4xx, an HTML page, ROBOTS_ORIGIN_URL=none): a minimal allow-all file with the lines;
 * - unreachable (5xx, timeout, network error, redirect loop or a sixth redirect): the last good
 *   copy with the lines and its age in `X-Robots-Origin-Age`, or 503 with `Retry-After` when
 *   there is none: never a 200 that drops the origin's rules.
 * Good answers are cached: `Cache-Control: public, max-age=ROBOTS_MAX_AGE` and the data centre's
 * Cache API; "no file" and the last good copy for 60 s at most, so a recovered origin is seen
 * soon; a 503 never.
 */

import { fillTemplate } from "../../config/notify.ts";
import type { Config } from "../../config.ts";
import { Fingerprint } from "../../core/fingerprint.ts";
import { FEED_PATH } from "../../documents/paths.ts";
import type { Fetcher } from "../../notify/http.ts";
import { indexUrls } from "../../notify/index-urls.ts";
import type { RobotsLastGoodStore } from "../../robots/last-good-store.ts";
import { type OriginRobots, fetchOriginRobots } from "./fetch-origin.ts";
import { rememberGood } from "./last-good.ts";
import { ROBOTS_READ_LIMIT, mergeRobots, minimalRobots } from "./text.ts";
import { unavailable } from "./unavailable.ts";

const FALLBACK_MAX_AGE = 60;

export interface RobotsDeps {
  config: Config;
  origin: string;
  fetcher: Fetcher;
  /** Where the last good copy is kept; null: nowhere (an unreachable origin then answers 503). */
  lastGood: RobotsLastGoodStore | null;
  /** Whether the record store keeps recent changes, so the Atom feed exists (`store.recent`). */
  hasFeed: boolean;
  waitUntil: (promise: Promise<unknown>) => void;
}

/** Cache key: the config that shapes the answer is part of it, so a config change is seen at once. */
function cacheKey(config: Config, origin: string, sitemaps: readonly string[]): Request {
  const version = new Fingerprint().addString(config.notify.robots.originUrl ?? "none");
  for (const s of sitemaps) version.addString(s);
  return new Request(`${origin}/robots.txt?edge-sitemaps=${version.digest()}`);
}

/** The data centre's Cache API, when the runtime has one. */
function defaultCache(): Cache | null {
  return typeof caches === "undefined" ? null : ((caches as CacheStorage & { default?: Cache }).default ?? null);
}

/** The sitemaps robots.txt lists: the index, and the Atom feed of recent changes (engines take feeds as sitemaps). */
function sitemapsOf(config: Config, origin: string, hasFeed: boolean): string[] {
  return config.feedSize > 0 && hasFeed ? [...indexUrls(origin), origin + FEED_PATH] : indexUrls(origin);
}

interface Answer {
  body: Uint8Array | string;
  maxAge: number;
  headers: Record<string, string>;
}

/** The 200 answer, or null when the origin's rules cannot be had. */
async function answerFor(deps: RobotsDeps, fetched: OriginRobots, sitemaps: string[], now: number): Promise<Answer | null> {
  const { config, origin, lastGood } = deps;
  const maxAge = config.notify.robots.maxAge;
  switch (fetched.kind) {
    case "file": {
      if (lastGood !== null) {
        const remembered = rememberGood(lastGood, origin, fetched.body, now).catch((error: unknown) => {
          console.warn(`robots.txt: storing the last good copy of ${origin} failed: ${String(error)}`);
        });
        deps.waitUntil(remembered);
      }
      const headers: Record<string, string> = fetched.truncated
        ? { "X-Robots-Origin": `origin file cut at its last line end within ${ROBOTS_READ_LIMIT} bytes` }
        : {};
      return { body: mergeRobots(fetched.body, sitemaps), maxAge, headers };
    }
    case "absent":
      return { body: minimalRobots(sitemaps), maxAge: Math.min(maxAge, FALLBACK_MAX_AGE), headers: { "X-Robots-Origin": fetched.reason } };
    case "unreachable": {
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
        maxAge: Math.min(maxAge, FALLBACK_MAX_AGE),
        headers: { "X-Robots-Origin": `${fetched.reason}; serving the last good copy`, "X-Robots-Origin-Age": String(age) },
      };
    }
  }
}

export async function robotsResponse(deps: RobotsDeps): Promise<Response> {
  const { config, origin } = deps;
  const sitemaps = sitemapsOf(config, origin, deps.hasFeed);
  const cache = defaultCache();
  const key = cacheKey(config, origin, sitemaps);
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
  if (answer === null) return unavailable(fetched.kind === "unreachable" ? fetched.reason : "no answer");
  const headers = new Headers({
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": answer.maxAge > 0 ? `public, max-age=${answer.maxAge}` : "no-store",
    ...answer.headers,
  });
  const response = new Response(answer.body, { status: 200, headers });
  if (cache && answer.maxAge > 0) deps.waitUntil(cache.put(key, response.clone()).catch(() => undefined));
  return response;
}
