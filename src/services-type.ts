/**
 * What the wiring (src/services.ts) hands out: the ports of one D1 database's sites. Its own module,
 * free of adapters, so that the services that receive it (the cron jobs) never import the wiring.
 */
import type { AdminStateStore } from "./admin-state/store.ts";
import type { Config } from "./config.ts";
import type { CrawlerLogStore } from "./crawlers/log-store.ts";
import type { CrawlerRangeStore } from "./crawlers/range-store.ts";
import type { AnalyticsSink } from "./crawlers/types.ts";
import type { GscStatusStore } from "./gsc/store.ts";
import type { HousekeepingStore } from "./housekeeping/store.ts";
import type { JobScheduler } from "./jobs/scheduler.ts";
import type { ManifestStore } from "./manifest/manifest.ts";
import type { MirrorStateStore } from "./mirror/store.ts";
import type { NotifyStateStore } from "./notify/store.ts";
import type { DatabaseList } from "./partitions/database-list.ts";
import type { SiteLayout } from "./partitions/layout.ts";
import type { RegenStore } from "./regen/store.ts";
import type { RobotsLastGoodStore } from "./robots/last-good-store.ts";
import type { RobotsLoopStore } from "./robots/loop-store.ts";
import type { SnapshotStore } from "./snapshots/store.ts";
import type { RecordStore } from "./store/port.ts";

export interface Services {
  config: Config;
  /**
   * When the site these services are a registered site's was registered (its createdAt): part of every
   * cache key and ETag of its documents (src/documents/cache-keys.ts); null for services of SITES' sites.
   */
  registeredAt: number | null;
  /** The URL records (URL_SOURCE: D1 or KV). */
  store: RecordStore;
  manifests: ManifestStore;
  /** Pre-rendered documents (KV namespace SNAPSHOTS); null without that binding (always live). */
  snapshots: SnapshotStore | null;
  /** Regeneration state, lease and run log (D1); null without a DB binding (no regeneration). */
  regen: RegenStore | null;
  /** Notification state (D1); null without a DB binding (nothing is sent). */
  notify: NotifyStateStore | null;
  /** Mirror state (D1); null without a DB binding (no mirrors run). */
  mirrors: MirrorStateStore | null;
  /** What Search Console reported per sitemap (D1); null without a DB binding (not read). */
  gsc: GscStatusStore | null;
  /** The last good copy of each site's robots.txt (KV namespace SNAPSHOTS); null without it (an unreachable origin answers 503). */
  robotsLastGood: RobotsLastGoodStore | null;
  /** When each site's robots.txt fetch last looped back into the Worker (KV namespace SNAPSHOTS); null without it (not recorded). */
  robotsLoop: RobotsLoopStore | null;
  /** The crawlers' published IP ranges as last refreshed (KV namespace SNAPSHOTS, src/crawlers/); null without it (only Cloudflare's verified-bot flag verifies). */
  crawlerRanges: CrawlerRangeStore | null;
  /** The admin's browser sessions and audit trail (D1, or a KV site's writer object); null without either (no browser sign-in, no audit). */
  admin: AdminStateStore | null;
  /**
   * A site spread over several databases (SITE_DATABASES "origin=DB_1,DB_2,…"): its partitions'
   * services, each a complete store of its share, in partition order; null for any other. These
   * services then read and write across them; regeneration and notification run per partition.
   */
  partitions: Services[] | null;
  /** A partitioned site's layout (how many partitions hold records, a move under way), in its first database; null for any other site. */
  layouts: SiteLayout | null;
  /**
   * A partitioned site as it was served with that many partitions (its first ones, each loc in its
   * home under that count): shard links pinned to the layout before a move's flip
   * (src/partitions/pinned.ts). null for any other site.
   */
  servedAs: ((partitions: number) => Services) | null;
  /**
   * A partitioned site's SITE_DATABASES list, checked against the databases recorded for its
   * partitions (src/partitions/database-list.ts): status shows it. null for any other site.
   */
  databaseList: DatabaseList | null;
  /** What verified crawlers fetched, and requests claiming a crawler counted (D1, src/crawlers/); null without a DB binding (nothing recorded). */
  crawlerLog: CrawlerLogStore | null;
  /** Workers Analytics Engine, when bound as CRAWLER_ANALYTICS: one data point per request claiming a crawler (docs/crawlers.md); null otherwise. */
  crawlerAnalytics: AnalyticsSink | null;
  /** What the housekeeping reads and trims in the database (src/housekeeping/, D1); null without a DB binding. */
  housekeeping: HousekeepingStore | null;
  /** Background jobs on the JOBS queue, their debounce and state in D1 (src/jobs/); null without both bindings. */
  jobs: JobScheduler | null;
}
