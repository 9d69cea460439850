/**
 * The cron trigger only schedules: it enqueues every due job and returns (docs/jobs.md). Per
 * mirrored URL a mirror job (which goes on to its site's regeneration); per site without a mirror a
 * regeneration (which goes on to the notification); per site a Search Console status read when
 * configured; per D1 database a sync sweep. It costs no D1 query, so it fits one invocation for any
 * number of sites; a job that went to the dead-letter queue is simply scheduled again.
 */
import { siteOfUrl } from "../mirror/site.ts";
import { regenDeps } from "../regen/scheduled.ts";
import type { Services } from "../services-type.ts";
import type { Job } from "./messages.ts";
import { notifyConfigured } from "./notify.ts";

/** Search Console allows 200 queries a minute per user: status reads are spread, this many a minute. */
const GSC_READS_PER_MINUTE = 100;

/** The jobs one heartbeat enqueues, with their delays. */
export function heartbeatJobs(databases: readonly Services[]): { job: Job; delaySeconds: number }[] {
  const out: { job: Job; delaySeconds: number }[] = [];
  const add = (kind: Job["kind"], origin: string, delaySeconds = 0): void => {
    out.push({ job: { kind, origin, trigger: "cron", step: 0 }, delaySeconds });
  };
  const sites = new Set(databases.flatMap((s) => [...s.config.sites]));
  const mirrored = new Set<string>();
  for (const url of databases[0]?.config.mirror.urls ?? []) {
    add("mirror", url);
    const site = siteOfUrl(url, sites);
    if (site !== null) mirrored.add(site);
  }
  let gscReads = 0;
  for (const s of databases) {
    const first = s.config.sites.values().next().value;
    if (first !== undefined && s.store.sync !== null) add("sync-sweep", first);
    const regenerates = regenDeps(s) !== null;
    for (const origin of s.config.sites) {
      // A mirrored site's regeneration follows its mirror (src/jobs/mirror.ts); the notification follows the regeneration.
      if (regenerates && !mirrored.has(origin)) add("regenerate", origin);
      else if (!regenerates && notifyConfigured(s.config)) add("notify", origin);
      if (s.config.notify.searchConsole !== null && s.gsc !== null) add("gsc-status", origin, Math.floor(gscReads++ / GSC_READS_PER_MINUTE) * 60);
    }
  }
  return out;
}

/** Enqueues the heartbeat's jobs; false when there is no JOBS queue to put them on. */
export async function heartbeat(databases: readonly Services[]): Promise<number> {
  const scheduler = databases.find((s) => s.jobs !== null)?.jobs;
  if (!scheduler) {
    console.error("scheduled jobs not queued: they need the JOBS queue and the DB (D1) bindings (wrangler.jsonc)");
    return 0;
  }
  const jobs = heartbeatJobs(databases);
  await scheduler.sendAll(jobs);
  console.log(JSON.stringify({ event: "sitemap.jobs.scheduled", jobs: jobs.length }));
  return jobs.length;
}
