/**
 * The syncs' share of the housekeeping (src/housekeeping/): abandoned open syncs expire (nothing
 * deleted), abandoned commits are finished (their guard passed), what finished ones saw is
 * forgotten at once, and finished syncs themselves after a week.
 */
import type { RecordSync, SyncSweep } from "../store/port.ts";

/** Finished syncs stay visible (GET /sitemap-admin/syncs/{id}) this long. */
const KEEP_FINISHED_MS = 7 * 24 * 3600_000;

/** Sweeps one store's syncs in at most `maxStatements` statements. */
export async function sweepSyncs(sync: RecordSync, now: number, maxStatements: number): Promise<SyncSweep> {
  const swept = await sync.sweep(now, KEEP_FINISHED_MS, maxStatements);
  if (swept.expired + swept.finished + swept.forgotten + swept.seenRows > 0) console.log(JSON.stringify({ event: "sitemap.sync.swept", ...swept }));
  return swept;
}
