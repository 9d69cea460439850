/**
 * The cron trigger only schedules: it enqueues every due job and returns (docs/jobs.md). Per
 * mirrored URL a mirror job (which goes on to its site's regeneration); per site without a mirror a
 * regeneration (which goes on to the notification); per site a Search Console status read when
 * configured; per D1 database a sync sweep; per deployment the refresh of the crawlers' IP ranges
 * (which fetches daily), and, when sites are registered (src/registry/), one registry sweep that
 * schedules them page by page in invocations of its own (src/jobs/registry-sweep.ts). It starts their chains in a statement per 24 jobs and sends them in
 * batches of at most 100 messages and 256 KB (`sendBatches`), so it fits one invocation up to ~20,000 jobs per database; a job whose chain is
 * live is left to it, one that went to the dead-letter queue is started again.
 */
import { siteOfUrl } from "../mirror/site.ts";
import { regenDeps } from "../regen/scheduled.ts";
import type { SiteRegistry } from "../registry/store.ts";
import type { Services } from "../services-type.ts";
import { type Job, REGISTRY_TARGET } from "./messages.ts";
import { notifyConfigured } from "./notify.ts";
import { newChain, sendBatches } from "./scheduler.ts";

/** Search Console allows 200 queries a minute per user: status reads are spread, this many a minute. */
const GSC_READS_PER_MINUTE = 100;

/** A job the heartbeat queues, and the database whose `jobs` table keeps it. */
export interface Planned {
  job: Job;
  delaySeconds: number;
  database: Services;
}

interface PlanOptions {
  /** Plan the deployment's jobs too (a sync sweep per database, the crawlers' ranges); false: the sites' only (src/jobs/registry-sweep.ts). */
  deployment?: boolean;
  /** Search Console reads planned before these (their spread goes on from there). */
  gscReadsBefore?: number;
}

/** The jobs one heartbeat enqueues, with their delays and databases. */
export function heartbeatJobs(databases: readonly Services[], { deployment = true, gscReadsBefore = 0 }: PlanOptions = {}): Planned[] {
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
  let gscReads = gscReadsBefore;
  for (const s of databases) {
    const first = s.config.sites.values().next().value;
    if (deployment && first !== undefined && s.store.sync !== null) add(s, "sync-sweep", first);
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
  // The crawlers' published IP ranges: one job per deployment, kept in the first database with jobs,
  // named by its first site; it fetches only the lists a day old or missing (src/jobs/crawler-ranges.ts).
  const home = databases.find((s) => s.jobs !== null && s.crawlerRanges !== null);
  const homeSite = home?.config.sites.values().next().value;
  if (deployment && home && homeSite !== undefined && home.config.crawlers.ranges.length > 0) add(home, "crawler-ranges", homeSite);
  return out;
}

/**
 * Starts the planned jobs' chains, one `requestMany` (a statement per 24 jobs) per `jobs` table —
 * `tableOf` names it; by default each services object's own — and sends those started, in batches
 * Queues takes (`sendBatches`: 100 messages, 256 KB). A job whose chain is live is left to it. The number sent.
 */
export async function startPlanned(planned: readonly Planned[], now: number, tableOf: (p: Planned) => unknown = (p) => p.database): Promise<number> {
  const scheduler = planned.find((p) => p.database.jobs !== null)?.database.jobs;
  if (!scheduler) return 0;
  const chained = planned.map((p) => ({ ...p, job: { ...p.job, chain: newChain() } }));
  const send: Planned[] = [];
  const tables = new Map<unknown, Planned[]>();
  for (const p of chained) {
    const key = tableOf(p);
    const list = tables.get(key);
    if (list) list.push(p);
    else tables.set(key, [p]);
  }
  // Every database that keeps jobs: a partitioned site's partitions start theirs in their own.
  for (const mine of tables.values()) {
    const state = mine[0]!.database.jobs?.state;
    if (!state) continue;
    const started = await state.requestMany(
      mine.map(({ job, delaySeconds }) => ({ kind: job.kind, origin: job.origin, dueAt: now + delaySeconds * 1000, chain: job.chain! })),
      now,
    );
    // A job planned twice started with the first's chain (requestMany): only that one's message is sent.
    const sent = new Set<string>();
    for (const p of mine) {
      const key = `${p.job.kind} ${p.job.origin}`;
      if (started.has(key) && !sent.has(key)) send.push(p);
      sent.add(key);
    }
  }
  // A batch whose send fails gives its chains (and every later batch's) back, so the next request
  // starts them at once instead of finding a live chain with no message and waiting CHAIN_LOST_MS.
  let sent = 0;
  for (const batch of sendBatches(send, (p) => p.job)) {
    try {
      await scheduler.sendAll(batch.map(({ job, delaySeconds }) => ({ job, delaySeconds })));
    } catch (err) {
      await Promise.all(
        send.slice(sent).map(({ job, database }) => database.jobs?.state.unclaim(job.kind, job.origin, job.chain!).catch(() => undefined)),
      );
      throw err;
    }
    sent += batch.length;
  }
  return send.length;
}

/** The site registry, and the services whose `jobs` table keeps its sweep and purge (its database's, `DB`). */
export interface RegistryHome {
  registry: SiteRegistry;
  home: Services;
}

/**
 * The registry's own jobs: one `registry-sweep` (src/jobs/registry-sweep.ts: it schedules every
 * registered site, page by page, and queues the purge of deleted ones) when there is a site to
 * schedule or to purge. Two queries; a registry that cannot be read (a migration missing) plans none.
 */
async function registryJobs(registry: RegistryHome | null): Promise<Planned[]> {
  if (registry === null || registry.home.jobs === null) return [];
  try {
    const any = (await registry.registry.page(null, 1, null)).length > 0 || (await registry.registry.deleting(1)).length > 0;
    if (!any) return [];
  } catch (err) {
    console.error("registered sites not scheduled: the site registry could not be read:", err instanceof Error ? err.message : err);
    return [];
  }
  return [{ job: { kind: "registry-sweep", origin: REGISTRY_TARGET, trigger: "cron", step: 0 }, delaySeconds: 0, database: registry.home }];
}

/**
 * Enqueues the heartbeat's jobs, each started as a chain in its database's `jobs` table first (a
 * few statements per database, ~1 query per 24 jobs) so that status shows it pending. A job whose
 * chain is live (running, retrying, or a write's message due in a few seconds) is left to it: the
 * heartbeat never starts a second chain. The number sent; 0 when there is no JOBS queue.
 */
export async function heartbeat(databases: readonly Services[], now = Date.now(), registry: RegistryHome | null = null): Promise<number> {
  if (!databases.some((s) => s.jobs !== null)) {
    console.error("scheduled jobs not queued: they need the JOBS queue and the DB (D1) bindings (wrangler.jsonc)");
    return 0;
  }
  // Registered sites (src/registry/) are scheduled by the registry sweep's chain, page by page, in invocations of their own.
  const planned = [...heartbeatJobs(databases), ...(await registryJobs(registry))];
  const sent = await startPlanned(planned, now);
  console.log(JSON.stringify({ event: "sitemap.jobs.scheduled", planned: planned.length, sent }));
  return sent;
}
