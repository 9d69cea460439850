/** Cron regeneration (docs/regeneration.md). */
import { wholeNumber } from "../variable.ts";
import { DAY } from "./units.ts";

export const REGEN_MAX_SHARDS = wholeNumber({
  name: "REGEN_MAX_SHARDS",
  default: 50,
  min: 1,
  max: 10_000,
});
export const REGEN_MAX_ROWS = wholeNumber({
  name: "REGEN_MAX_ROWS",
  default: 2_000_000,
  min: 1,
  max: 1_000_000_000,
});
export const REGEN_SETTLE_SECONDS = wholeNumber({
  name: "REGEN_SETTLE_SECONDS",
  default: 60,
  min: 0,
  max: 3_600,
});
export const SNAPSHOT_GRACE_SECONDS = wholeNumber({
  name: "SNAPSHOT_GRACE_SECONDS",
  default: 3_600,
  min: 0,
  max: 30 * DAY,
});
