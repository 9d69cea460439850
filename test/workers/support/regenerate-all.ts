/**
 * Every site's regeneration in one call, the way the cron ran it before the jobs engine (one
 * services object per D1 database, and each partition of a partitioned site): for tests that want a
 * database converged without the queue. The Worker itself regenerates through src/jobs/.
 */

import { RegenBusyError } from "../../../src/regen/lease.ts";
import { purgeChanged } from "../../../src/regen/purge.ts";
import { regenerateSite } from "../../../src/regen/regenerate.ts";
import { regenDeps } from "../../../src/regen/scheduled.ts";
import type { RunSummary } from "../../../src/regen/summary.ts";
import type { Services } from "../../../src/services-type.ts";

/**
 * Regenerates every site of `databases` (one services object per D1 database, SITE_DATABASES, each
 * with its own sites, and each partition of a partitioned site); a failing site is logged and the
 * others still run. Never throws.
 */
export async function regenerateAll(databases: readonly Services[], ctx?: unknown, trigger = "cron"): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  // A partitioned site's partitions are units of their own (src/jobs/partitions.ts).
  for (const s of databases.flatMap((d) => d.partitions ?? [d])) {
    const deps = regenDeps(s);
    if (!deps) {
      console.error(
        s.config.regen.enabled
          ? "regeneration skipped: it needs the DB (D1) and SNAPSHOTS (KV) bindings"
          : "regeneration skipped: a regeneration variable is bad (see /sitemap-admin/status)",
      );
      return summaries;
    }
    for (const origin of s.config.sites) {
      try {
        summaries.push(await regenerateSite(deps, origin, { trigger, onPublished: purgeChanged(ctx, origin) }));
      } catch (err) {
        if (err instanceof RegenBusyError) console.log(JSON.stringify({ event: "sitemap.regeneration.skipped", origin, reason: err.message }));
        // Other failures were logged with their summary by regenerateSite; the next run retries.
      }
    }
  }
  return summaries;
}
