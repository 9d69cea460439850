/**
 * Admin ingest (docs/ingest.md). A request's cost in workerd grows with its body: a valid batch is
 * parsed, validated and written in one D1 transaction, all in memory at once, so ADMIN_MAX_BYTES
 * stays well under an isolate's 128 MB (figures in docs/ingest.md#limits). The import CLI sends
 * batches that fit.
 */
import { wholeNumber } from "../variable.ts";
import { DAY } from "./units.ts";

/**
 * At most 5,000: a batch is ~0.13 D1 statements a record (10 records per upsert statement, the
 * section-move notes beside them) plus each database's own rounding on a site over several, so
 * 5,000 records are ~655 of the invocation's 1,000 queries on one database (7,000 was 991–993 there
 * and 1,006–1,010 over four databases, moving every record to another section: past the limit;
 * 10,000 stopped at 1,305). test/workers/admin-urls.test.ts and break51b-admin-extremes.test.ts
 * write batches of the maximum through the enforcing entry.
 */
export const ADMIN_MAX_RECORDS = wholeNumber({
  name: "ADMIN_MAX_RECORDS",
  default: 5_000,
  min: 1,
  max: 5_000,
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
