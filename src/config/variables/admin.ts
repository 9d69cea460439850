/**
 * Admin ingest (docs/ingest.md). A request's cost in workerd grows with its body: a valid batch is
 * parsed, validated and written in one D1 transaction, all in memory at once, so ADMIN_MAX_BYTES
 * stays well under an isolate's 128 MB (figures in docs/ingest.md#limits). The import CLI sends
 * batches that fit.
 */
import { wholeNumber } from "../variable.ts";
import { DAY } from "./units.ts";

export const ADMIN_MAX_RECORDS = wholeNumber({
  name: "ADMIN_MAX_RECORDS",
  default: 5_000,
  min: 1,
  max: 10_000,
});
export const ADMIN_MAX_BYTES = wholeNumber({
  name: "ADMIN_MAX_BYTES",
  default: 1024 * 1024,
  min: 1024,
  max: 2 * 1024 * 1024,
});
export const SYNC_TTL_SECONDS = wholeNumber({
  name: "SYNC_TTL_SECONDS",
  default: DAY,
  min: 60,
  max: 30 * DAY,
});
