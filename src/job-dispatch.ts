/**
 * The Worker entry's job dispatch (src/index.ts runs its queue consumer with it): one handler per
 * job kind, and the services each job runs on. Its own module so that the benches run a job exactly
 * as the entry does (bench/worker/tenant-routes.ts).
 */
import { loadConfig } from "./config.ts";
import type { JobHandlers } from "./jobs/consumer.ts";
import { crawlerRangesJob } from "./jobs/crawler-ranges.ts";
import { gscStatusJob } from "./jobs/gsc-status.ts";
import { type Job, mirrorUrlOf } from "./jobs/messages.ts";
import { mirrorJob } from "./jobs/mirror.ts";
import { notifyJob } from "./jobs/notify.ts";
import { rebalanceJob } from "./jobs/rebalance.ts";
import { regenerateJob } from "./jobs/regenerate.ts";
import { registrySweepJob } from "./jobs/registry-sweep.ts";
import { sitePurgeJob } from "./jobs/site-purge.ts";
import { syncSweepJob } from "./jobs/sync-sweep.ts";
import { databaseSweepServices, services, servicesFor, siteServices } from "./services.ts";
import type { Services } from "./services-type.ts";

/** The consumer's dispatch: one handler per job kind, a file each in src/jobs/ (docs/jobs.md). */
export const JOBS: JobHandlers = {
  // One bounded step of a mirror's pass, then its site's regeneration (docs/mirror.md).
  mirror: mirrorJob,
  // One bounded run (docs/regeneration.md); continues until converged, then the notification.
  regenerate: regenerateJob,
  // Tell search engines what changed (docs/notify.md).
  notify: notifyJob,
  // What Google did with the sitemaps, at most every GSC_STATUS_INTERVAL per site (src/gsc/).
  "gsc-status": gscStatusJob,
  // Abandoned syncs expire without deleting anything (docs/sync.md), once per database.
  "sync-sweep": syncSweepJob,
  // A database appended to a partitioned site's list: one bounded step of its move (docs/capacity.md "Partitions").
  rebalance: rebalanceJob,
  // The crawlers' published IP ranges (CRAWLER_IP_RANGES), refreshed daily, once per deployment (docs/crawlers.md).
  "crawler-ranges": crawlerRangesJob,
  // Registered sites (src/registry/): the heartbeat's fan-out over them, page by page (docs/jobs.md).
  "registry-sweep": registrySweepJob,
  // A deleted registered site's records, state and snapshots removed in bounded steps, then its registry row.
  "site-purge": sitePurgeJob,
};

/**
 * The services a job runs on: its site's database, or, for a partitioned site's regeneration or
 * notification, its partition's; a registered site's own (src/registry/); the registry's database
 * for the registry's jobs; the database a sweep names. null for a site neither configured nor registered (deleted since).
 */
export async function servicesOfJob(env: Env, job: Job): Promise<Services | null> {
  if (job.kind === "registry-sweep" || job.kind === "site-purge") return services(env);
  // A bound database's own sweep (src/jobs/registry-sweep.ts): null once that binding is gone.
  if (job.kind === "sync-sweep" && job.database !== undefined) return databaseSweepServices(env, job.database);
  let site: Services | null;
  if (job.kind === "mirror") {
    // A mirror job is named by its URL: a configured mirror writes to the database of the URL's site (SITE_DATABASES);
    // a registered site's carries the site.
    const url = mirrorUrlOf(job.origin);
    site =
      job.site !== undefined
        ? await siteServices(env, job.site, undefined, true)
        : loadConfig(env).mirror.urls.includes(url)
          ? servicesFor(env, new URL(url).origin)
          : await siteServices(env, new URL(url).origin, undefined, true);
  } else {
    // A job never runs on a stale list of registered sites: a site deleted since runs none.
    site = await siteServices(env, job.origin, undefined, true);
  }
  if (site === null) return null;
  return (job.partition !== undefined && site.partitions?.[job.partition]) || site;
}
