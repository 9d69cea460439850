/** HTTP caching (docs/caching.md). */
import { wholeNumber } from "../variable.ts";
import { DAY, YEAR } from "./units.ts";

export const CACHE_MAX_AGE = wholeNumber({ name: "CACHE_MAX_AGE", default: 300, min: 0, max: YEAR });
export const CACHE_S_MAXAGE = wholeNumber({ name: "CACHE_S_MAXAGE", default: 3_600, min: 0, max: YEAR });
export const CACHE_STALE_WHILE_REVALIDATE = wholeNumber({
  name: "CACHE_STALE_WHILE_REVALIDATE",
  default: 600,
  min: 0,
  max: YEAR,
});
export const EDGE_CACHE_TTL = wholeNumber({
  name: "EDGE_CACHE_TTL",
  default: DAY,
  min: 0,
  max: YEAR,
});
export const MANIFEST_CACHE_TTL = wholeNumber({
  name: "MANIFEST_CACHE_TTL",
  default: 60,
  min: 0,
  max: DAY,
});
/**
 * Key rows a request may walk to build a site's missing manifest (a small site's first request):
 * 10,000 a D1 query, so at most ~100 queries at the cap, far below an invocation's 1,000.
 */
export const MANIFEST_REQUEST_ROWS = wholeNumber({
  name: "MANIFEST_REQUEST_ROWS",
  default: 100_000,
  min: 0,
  max: 500_000,
});
