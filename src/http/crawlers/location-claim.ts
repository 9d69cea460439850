/**
 * "Has an isolate of this location written this already, this minute?", asked of the Cache API
 * (per Cloudflare location, shared by its isolates): a marker entry cached for a minute under a URL
 * no request can reach. A race between two isolates writes twice, which the log's key absorbs
 * (src/adapters/d1/crawler-log.ts keeps the first row of a minute). The Cache API failing costs a
 * write, never the record.
 */
import type { LocationClaim } from "../../crawlers/recorder.ts";

const MARKER_BASE = "https://crawler-log.edge-sitemaps.invalid/";

export const locationClaim: LocationClaim = async (key) => {
  try {
    const cache = caches.default;
    const url = MARKER_BASE + encodeURIComponent(key);
    if (await cache.match(url)) return false;
    await cache.put(url, new Response("1", { headers: { "Cache-Control": "max-age=60" } }));
  } catch (error) {
    console.error("crawler log: the location's marker could not be read or written", error);
  }
  return true;
};
