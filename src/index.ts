/** Worker entry: the Hono app for requests, the cron heartbeat, the jobs' queue consumer, and the KV writer object. */
import { loadConfig } from "./config.ts";
import { app } from "./http/app.ts";
import { type JobHandlers, consumeJobs } from "./jobs/consumer.ts";
import { crawlerRangesJob } from "./jobs/crawler-ranges.ts";
import { gscStatusJob } from "./jobs/gsc-status.ts";
import { type RegistryHome, heartbeat } from "./jobs/heartbeat.ts";
import type { Job } from "./jobs/messages.ts";
import { Meter, countFetches, metered, meteredEnv } from "./jobs/meter.ts";
import { mirrorJob } from "./jobs/mirror.ts";
import { notifyJob } from "./jobs/notify.ts";
import { rebalanceJob } from "./jobs/rebalance.ts";
import { regenerateJob } from "./jobs/regenerate.ts";
import { registrySweepJob } from "./jobs/registry-sweep.ts";
import { sitePurgeJob } from "./jobs/site-purge.ts";
import { syncSweepJob } from "./jobs/sync-sweep.ts";
import { databaseServices, registeredSites, services, servicesFor, siteRegistry, siteServices } from "./services.ts";
import type { Services } from "./services-type.ts";

// Each site's single KV writer (URL_SOURCE=kv), a Durable Object: wrangler.jsonc binds it as KV_WRITERS.
export { KvSiteWriter } from "./adapters/kv/writer-object.ts";

/** The consumer's dispatch: one handler per job kind, a file each in src/jobs/ (docs/jobs.md). */
const JOBS: JobHandlers = {
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
 * for the registry's jobs. null for a site neither configured nor registered (deleted since).
 */
async function servicesOfJob(env: Env, job: Job): Promise<Services | null> {
  if (job.kind === "registry-sweep" || job.kind === "site-purge") return services(env);
  let site: Services | null;
  if (job.kind === "mirror") {
    // A mirror job is named by its URL: a configured mirror writes to the database of the URL's site (SITE_DATABASES);
    // a registered site's carries the site.
    const url = job.origin;
    site =
      job.site !== undefined
        ? await siteServices(env, job.site)
        : loadConfig(env).mirror.urls.includes(url)
          ? servicesFor(env, new URL(url).origin)
          : await siteServices(env, new URL(url).origin);
  } else {
    site = await siteServices(env, job.origin);
  }
  if (site === null) return null;
  return (job.partition !== undefined && site.partitions?.[job.partition]) || site;
}

// Every invocation runs under Cloudflare's per-invocation limits, counted and enforced at the
// bindings (src/jobs/meter.ts): locally, where nothing else enforces them, as in production.
countFetches();

export default {
  fetch(request, env, ctx) {
    return metered(new Meter(), () => app.fetch(request, meteredEnv(env), ctx), { streams: true });
  },
  scheduled(_controller, env, _ctx) {
    return metered(new Meter(), async () => {
      // The heartbeat only schedules: every due job goes on the JOBS queue, each runs in its own
      // invocation. A bad configuration (ConfigError) is logged once, and then no job is queued.
      let databases: Services[];
      try {
        databases = databaseServices(meteredEnv(env));
      } catch (err) {
        console.error("scheduled jobs skipped:", err instanceof Error ? err.message : err);
        return;
      }
      const registry = siteRegistry(meteredEnv(env));
      const home: RegistryHome | null = registry && { registry, home: services(meteredEnv(env)) };
      await heartbeat(databases, Date.now(), home);
    });
  },
  queue(batch, env, ctx) {
    const meter = new Meter();
    return metered(meter, () => consumeJobs(batch, meteredEnv(env), ctx, { handlers: JOBS, servicesOf: servicesOfJob, sites: registeredSites, meter }));
  },
} satisfies ExportedHandler<Env>;
