/** What a regeneration run works with (src/regen/scheduled.ts builds it from the services). */
import type { SitemapDeps } from "../sitemaps.ts";
import type { SnapshotStore } from "../snapshots/store.ts";
import type { RegenStore } from "./store.ts";

export interface RegenDeps extends SitemapDeps {
  snapshots: SnapshotStore;
  state: RegenStore;
}
