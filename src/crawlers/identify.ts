/**
 * Which crawler a request claims to be (its User-Agent), and whether that claim is verified: by the
 * client address (`CF-Connecting-IP`, set by Cloudflare) in that crawler's published ranges
 * (ranges.ts), or, for a crawler whose list is not loaded, by Cloudflare's own verified-bot category
 * where it fills it in (`request.cf.verifiedBotCategory`: "Search Engine Crawler" only).
 */

import type { RangeMatcher } from "./ranges.ts";
import type { CrawlerName, Verification } from "./types.ts";

/** The first of `names` (CRAWLER_IP_RANGES, lowercase) whose token the User-Agent holds, in any case; null: none. */
export function claimedCrawler(userAgent: string | null, names: readonly string[]): CrawlerName | null {
  if (!userAgent) return null;
  const ua = userAgent.toLowerCase();
  for (const name of names) if (ua.includes(name)) return name;
  return null;
}

/** What Cloudflare may put in `request.cf` about bots: absent on plans that do not fill it. */
interface BotFields {
  verifiedBotCategory?: unknown;
}

/** The one category of Cloudflare's verified bots that vouches for a search engine's crawler. */
const SEARCH_ENGINE_CATEGORY = "Search Engine Crawler";

/**
 * How a request claiming `crawler` is verified: "ip" when its client address is in that crawler's
 * ranges; else "cloudflare" when Cloudflare flags it as a verified bot of the "Search Engine
 * Crawler" category and `crawler`'s own published list is not loaded (with the list, the address
 * decides: a flag says some search engine's crawler, not which one); else null. An address in
 * another crawler's ranges is never taken for this one (a Bing address saying "Googlebot" is not
 * Googlebot, whatever else says so).
 */
export function verification(request: Request, crawler: CrawlerName, matcher: RangeMatcher | null): Verification {
  const ip = request.headers.get("CF-Connecting-IP");
  if (ip !== null && matcher !== null) {
    if (matcher.has(crawler, ip)) return "ip";
    if (matcher.crawlerOf(ip) !== null) return null;
  }
  if (matcher?.knows(crawler)) return null;
  const cf = request.cf as BotFields | undefined;
  return cf?.verifiedBotCategory === SEARCH_ENGINE_CATEGORY ? "cloudflare" : null;
}
