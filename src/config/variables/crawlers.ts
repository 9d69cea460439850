/** Crawler verification and the crawler log (docs/crawlers.md). */
import { z } from "zod";
import { isSecureUrl, variable, wholeNumber } from "../variable.ts";

/** Google's and Bing's own published lists of their crawlers' addresses. */
const CRAWLER_IP_RANGES_DEFAULT =
  "googlebot=https://developers.google.com/static/search/apis/ipranges/googlebot.json bingbot=https://www.bing.com/toolbox/bingbot.json";

/** More would make the daily refresh more than a handful of subrequests. */
const MAX_CRAWLERS = 10;

const RANGES_RULE =
  `must be space-separated "name=URL" pairs (name: a lowercase letter, then up to 31 of a-z, 0-9, "-", each name once; ` +
  `URL: https, or http to a loopback host; at most ${MAX_CRAWLERS}), or "none"`;

/**
 * Each crawler verified by its published IP ranges: its name (also the token looked for, case
 * insensitively, in a request's User-Agent) and the URL of its list in the engines' format
 * (src/crawlers/ranges.ts). "none": no lists, only Cloudflare's verified-bot flag verifies (an empty
 * value is unset, as for every variable, so it cannot say "none").
 */
export const CRAWLER_IP_RANGES = variable({
  name: "CRAWLER_IP_RANGES",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    if (text === "none") return [] as { name: string; url: string }[];
    const entries = text.split(/\s+/).filter(Boolean);
    const out: { name: string; url: string }[] = [];
    const problem = (message: string) => {
      ctx.addIssue({ code: "custom", message: `${RANGES_RULE} (${message})` });
      return z.NEVER;
    };
    if (entries.length > MAX_CRAWLERS) return problem(`${entries.length} entries`);
    for (const [i, entry] of entries.entries()) {
      const eq = entry.indexOf("=");
      const name = entry.slice(0, eq);
      const url = entry.slice(eq + 1);
      if (eq < 0 || !/^[a-z][a-z0-9-]{0,31}$/.test(name) || !isSecureUrl(url)) return problem(`entry ${i + 1} is not one`);
      if (out.some((o) => o.name === name)) return problem(`entry ${i + 1} repeats a name`);
      out.push({ name, url: new URL(url).href });
    }
    return out;
  }),
  default: CRAWLER_IP_RANGES_DEFAULT,
  rule: RANGES_RULE,
});

/** A listed document no verified crawler fetched in this many days is stale (status, the dashboard). */
export const CRAWLER_STALE_DAYS = wholeNumber({
  name: "CRAWLER_STALE_DAYS",
  default: 14,
  min: 1,
  max: 365,
});

/**
 * Counts of requests claiming a crawler wait in an isolate at most this many seconds before a timer
 * writes them (src/crawlers/recorder.ts), held by the request that counted first: Cloudflare keeps a
 * request's `waitUntil` 30 s after its response, hence at most 25. 0: no timer; counts go with the
 * next request a minute on.
 */
export const CRAWLER_COUNT_FLUSH_SECONDS = wholeNumber({
  name: "CRAWLER_COUNT_FLUSH_SECONDS",
  default: 20,
  min: 0,
  max: 25,
});
