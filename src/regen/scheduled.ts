/** What a regeneration needs from a database's services (src/jobs/regenerate.ts, the admin route). */
import type { Services } from "../services-type.ts";
import type { RegenDeps } from "./deps.ts";

/** The regeneration's dependencies, or null when a binding it needs is missing. */
export function regenDeps(s: Services): RegenDeps | null {
  // A partitioned site regenerates partition by partition (each its own services): never through the site's view.
  if (!s.regen || !s.snapshots || !s.config.regen.enabled || s.partitions !== null) return null;
  return { config: s.config, store: s.store, manifests: s.manifests, snapshots: s.snapshots, state: s.regen };
}
