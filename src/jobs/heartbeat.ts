/**
 * The cron trigger only schedules: it enqueues every due job and returns (docs/jobs.md). Per
 * mirrored URL a mirror job (which goes on to its site's regeneration); per site without a mirror a
 * regeneration (which goes on to the notification); per site a Search Console status read when
 * configured; per D1 database a sync sweep. It starts their chains in a statement per 24 jobs and
 * sends them in batches of 100, so it fits one invocation up to ~20,000 jobs per database; a job
 * whose chain is live is left to it, one that went to the dead-letter queue is started again.
 */
import { siteOfUrl } from "../mirror/site.ts";
import { regenDeps } from "../regen/scheduled.ts";
import type { Services } from "../services-type.ts";
import type { Job } from "./messages.ts";
import { notifyConfigured } from "./notify.ts";
import { newChain } from "./scheduler.ts";

/** Search Console allows 200 queries a minute per user: status reads are spread, this many a minute. */
const GSC_READS_PER_MINUTE = 100;

/** A job the heartbeat queues, and the database whose `jobs` table keeps it. */
interface Planned {
  job: Job;
  delaySeconds: number;
  database: Services;
}

/** The jobs one heartbeat enqueues, with their delays and databases. */
export function heartbeatJobs(databases: readonly Services[]): Planned[] {
  const out: Planned[] = [];
  const add = (database: Services, kind: Job["kind"], origin: string, delaySeconds = 0, partition?: number): void => {
    out.push({ job: { kind, origin, trigger: "cron", step: 0, ...(partition === undefined ? {} : { partition }) }, delaySeconds, database });
  };
  const sites = new Set(databases.flatMap((s) => [...s.config.sites]));
  const mirrored = new Set<string>();
  for (const url of databases[0]?.config.mirror.urls ?? []) {
    // A mirror writes to the database of its URL's site, else the first (as src/index.ts resolves it).
    const owner = databases.find((s) => s.config.sites.has(new URL(url).origin)) ?? databases[0]!;
    add(owner, "mirror", url);
    const site = siteOfUrl(url, sites);
    if (site !== null) mirrored.add(site);
  }
  let gscReads = 0;
  for (const s of databases) {
    const first = s.config.sites.values().next().value;
    if (first !== undefined && s.store.sync !== null) add(s, "sync-sweep", first);
    // A site over several databases regenerates and notifies partition by partition, each claimed in its own database.
    const units = s.partitions ?? [s];
    const regenerates = units.every((u) => regenDeps(u) !== null);
    for (const origin of s.config.sites) {
      const each = (kind: Job["kind"]) => {
        for (const [p, u] of units.entries()) add(u, kind, origin, 0, s.partitions ? p : undefined);
      };
      // A mirrored site's regeneration follows its mirror (src/jobs/mirror.ts); the notification follows the regeneration.
      if (regenerates && !mirrored.has(origin)) each("regenerate");
      else if (!regenerates && notifyConfigured(s.config)) each("notify");
      // A database appended to its list is filled by a move (src/jobs/rebalance.ts); settled, the job only reads the layout.
      if (s.partitions && s.layouts) add(s, "rebalance", origin);
      if (s.config.notify.searchConsole !== null && s.gsc !== null) add(s, "gsc-status", origin, Math.floor(gscReads++ / GSC_READS_PER_MINUTE) * 60);
    }
  }
  return out;
}

/**
 * Enqueues the heartbeat's jobs, each started as a chain in its database's `jobs` table first (a
 * few statements per database, ~1 query per 24 jobs) so that status shows it pending. A job whose
 * chain is live (running, retrying, or a write's message due in a few seconds) is left to it: the
 * heartbeat never starts a second chain. The number sent; 0 when there is no JOBS queue.
 */
export async function heartbeat(databases: readonly Services[], now = Date.now()): Promise<number> {
  const scheduler = databases.find((s) => s.jobs !== null)?.jobs;
  if (!scheduler) {
    console.error("scheduled jobs not queued: they need the JOBS queue and the DB (D1) bindings (wrangler.jsonc)");
    return 0;
  }
  const planned = heartbeatJobs(databases).map((p) => ({ ...p, job: { ...p.job, chain: newChain() } }));
  const send: { job: Job; delaySeconds: number }[] = [];
  // Every database that keeps jobs: a partitioned site's partitions start theirs in their own.
  for (const s of new Set(planned.map((p) => p.database))) {
    const mine = planned.filter((p) => p.database === s);
    if (mine.length === 0 || !s.jobs) continue;
    const started = await s.jobs.state.requestMany(
      mine.map(({ job, delaySeconds }) => ({ kind: job.kind, origin: job.origin, dueAt: now + delaySeconds * 1000, chain: job.chain! })),
      now,
    );
    send.push(...mine.filter(({ job }) => started.has(`${job.kind} ${job.origin}`)));
  }
  await scheduler.sendAll(send);
  console.log(JSON.stringify({ event: "sitemap.jobs.scheduled", planned: planned.length, sent: send.length }));
  return send.length;
}
