/** The health list's items about the crawlers' published IP ranges (src/admin/health.ts; docs/crawlers.md). */
import type { CrawlersStatus } from "../crawlers/types.ts";
import type { HealthItem } from "./health-item.ts";

/** The health items of the crawlers' published lists: refused prefixes, failed refreshes. `when` formats a time as the list does. */
export function rangeErrors(crawlers: CrawlersStatus, when: (iso: string | null) => string): HealthItem[] {
  return crawlers.ranges.flatMap((r): HealthItem[] => [...refusedPrefixes(r), ...rangeError(r, when)]);
}

/** A list holding implausibly wide prefixes (0.0.0.0/0 …): refused, and said, since the list's source is suspect. */
function refusedPrefixes(r: CrawlersStatus["ranges"][number]): HealthItem[] {
  if (r.refused.length === 0) return [];
  return [
    {
      level: "amber",
      topic: "ranges",
      message: `The IP ranges of ${r.name} hold implausibly wide prefixes (${r.refused.join(", ")}): refused, they verify nothing.`,
      action: `Check the list at ${r.url} (CRAWLER_IP_RANGES): a crawler's range is never shorter than /8 (IPv4) or /32 (IPv6).`,
      document: r.url,
    },
  ];
}

function rangeError(r: CrawlersStatus["ranges"][number], when: (iso: string | null) => string): HealthItem[] {
  return r.error === null
    ? []
    : [
        {
          // Without any prefix, no request of this crawler can be verified.
          level: r.prefixes === 0 ? "red" : "amber",
          topic: "ranges",
          message:
            r.prefixes === 0
              ? `The IP ranges of ${r.name} could not be fetched (${r.error}): none of its requests can be verified.`
              : `The IP ranges of ${r.name} could not be refreshed (${r.error}); those fetched ${when(r.fetchedAt)} stay in use.`,
          action: `Check the URL given for ${r.name} in CRAWLER_IP_RANGES (${r.url}); the daily refresh tries again. Until it works, a ${r.name} address added since counts as unverified.`,
          document: r.url,
        },
      ];
}
