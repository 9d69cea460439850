/** The cron's sync housekeeping: abandoned syncs expire (nothing deleted), finished ones are forgotten. */
import type { RecordSync } from "../store/port.ts";

/** Finished syncs stay visible (GET /sitemap-admin/syncs/{id}) this long. */
const KEEP_FINISHED_MS = 7 * 24 * 3600_000;

/** Sweeps the syncs of every D1 database (one services object each). Never throws. */
export async function sweepSyncs(databases: readonly { store: { readonly sync: RecordSync | null } }[], now = Date.now()): Promise<number> {
  let swept = 0;
  try {
    for (const s of databases) {
      if (s.store.sync === null) continue;
      swept += await s.store.sync.sweep(now, KEEP_FINISHED_MS);
    }
    if (swept > 0) console.log(JSON.stringify({ event: "sitemap.sync.swept", syncs: swept }));
  } catch (err) {
    console.error("sync sweep failed:", err instanceof Error ? err.message : err);
  }
  return swept;
}
