/** The cron entry of the regeneration: every configured site, one after the other. */
import type { Services } from "../services-type.ts";
import type { RegenDeps } from "./deps.ts";
import { RegenBusyError } from "./lease.ts";
import { purgeChanged } from "./purge.ts";
import { regenerateSite } from "./regenerate.ts";
import type { RunSummary } from "./summary.ts";

/** The regeneration's dependencies, or null when a binding it needs is missing. */
export function regenDeps(s: Services): RegenDeps | null {
  // A partitioned site regenerates partition by partition (each its own services): never through the site's view.
  if (!s.regen || !s.snapshots || !s.config.regen.enabled || s.partitions !== null) return null;
  return { config: s.config, store: s.store, manifests: s.manifests, snapshots: s.snapshots, state: s.regen };
}

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
