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
