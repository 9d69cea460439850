/**
 * Writes publish themselves: an acknowledged write (admin ingest and delete, a sync's batch or
 * commit) asks for a regeneration of each site it touched after REGEN_SETTLE_SECONDS, debounced
 * (src/jobs/scheduler.ts: a burst of writes sends one message). Mirrors publish through their
 * chain (src/jobs/mirror.ts). A failed request leaves the write standing: the cron heartbeat
 * publishes it.
 */
import type { Services } from "../services-type.ts";

export async function publishWrites(s: Services, origins: Iterable<string>): Promise<void> {
  if (!s.jobs || !s.config.regen.enabled) return;
  for (const origin of new Set(origins)) {
    if (!s.config.sites.has(origin)) continue;
    try {
      await s.jobs.request("regenerate", origin, s.config.regen.settleSeconds, "write");
    } catch (err) {
      console.error(`regeneration after a write to ${origin} not queued (the next cron run publishes it):`, err instanceof Error ? err.message : err);
    }
  }
}
