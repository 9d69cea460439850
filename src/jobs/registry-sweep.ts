/**
 * The registry sweep: the heartbeat's fan-out over registered sites (src/registry/, docs/jobs.md).
 * The heartbeat queues one (one chain per deployment: a heartbeat crossing a sweep leaves it to the
 * live chain); each step reads pages of live registered sites in origin order and schedules, for
 * each, what the heartbeat schedules for a configured site (`heartbeatJobs` on the site's own
 * services: its mirrors or its regeneration, its notification, its Search Console read), starting
 * their chains with a statement per 24 jobs per database and sending them in batches of at most 100
 * messages and 256 KB, a page's sites in chunks of at most JOBS_PER_CHUNK jobs (a site's settings may
 * list ~1,000 mirror URLs: a page's whole could be 200,000 jobs). It checks its budget after each
 * chunk: it stops after `SITES_PER_STEP` sites, its share of the invocation's service calls or its
 * time budget, and its chain goes on after the last origin it scheduled. Each chunk's sites also have their section
 * moves and tombstones no reader needs trimmed (`trimRegistered`, as the sync sweep does for the
 * configured sites), in at most TRIM_STATEMENTS statements. The first step also queues the purge of
 * deleted sites (src/jobs/site-purge.ts) when there are any, and a sync sweep (src/jobs/sync-sweep.ts:
 * expired syncs, the crawler log's trimming, stale job rows) for every D1 database the deployment
 * binds, so that a database holding only registered sites, or only what sites left there, is housekept too.
 *
 * Measured (test/workers/registry-sweep.test.ts): a page of 200 sites costs about 20 D1 queries and
 * 2–4 queue sends, so 10,000 sites take 10 steps of ~100 queries each; 200 sites of 100 mirror URLs
 * each (20,000 jobs) take several steps inside the limits (test/workers/break51-sweep-batch-bytes.test.ts).
 */
import { plural } from "../core/plural.ts";
import { trimRegistered } from "../housekeeping/housekeeping.ts";
import { DATABASE_SETTING } from "../registry/settings.ts";
import type { Services } from "../services-type.ts";
import type { JobHandler, RegisteredSites } from "./context.ts";
import { type Planned, heartbeatJobs, startPlanned } from "./heartbeat.ts";
import { MAX_STEPS, REGISTRY_TARGET, mirrorTarget } from "./messages.ts";

/** Sites per registry read. */
const PAGE = 200;
/** Sites one step schedules at most (the rest: the chain's next step). */
const SITES_PER_STEP = 1_000;
/** The step takes on no further page past this many service calls of its invocation's shared 1,000 (a page costs ~20). */
const QUERY_SHARE = 600;
/**
 * Jobs started and sent between two checks of the step's budget: 100 statements (24 jobs each) and
 * at least 24 sends (more for long mirror URLs: 256 KB a batch), far inside what is left above QUERY_SHARE.
 */
const JOBS_PER_CHUNK = 2_400;
/** Statements a page's trimming takes at most (src/housekeeping/housekeeping.ts trimRegistered)… */
const TRIM_STATEMENTS = 150;
/** …and never past this many service calls of the invocation's shared 1,000. */
const TRIM_CEILING = 850;

export const registrySweepJob: JobHandler = async (job, c) => {
  const sites = c.sites;
  if (sites === null) return "no registry";
  let purge = "";
  if (job.after === undefined && (await sites.registry.deleting(1)).length > 0) {
    const started = await c.scheduler.request("site-purge", REGISTRY_TARGET, 0, "sweep");
    purge = started ? ", purge queued" : ", purge running";
  }
  // Every D1 database the deployment binds is housekept by a sync sweep of its own (docs/jobs.md "Housekeeping").
  const swept = job.after === undefined ? await planSweeps(sites) : 0;
  let after = job.after ?? null;
  let seen = 0;
  let sent = swept;
  let broken = 0;
  let tombstones = 0;
  let moves = 0;
  // Search Console reads are spread at 100 a minute across the chain (each step's sites after the previous steps').
  let gscReads = job.step * SITES_PER_STEP;
  // Each site's mirrors, pings and Search Console property are planned as its own jobs will check them: against every site's host.
  await sites.listHosts();
  for (;;) {
    const page = await sites.registry.page(after, PAGE, null);
    const groups: SiteJobs[] = [];
    for (const site of page) {
      let services: Services;
      try {
        services = sites.servicesOf(site);
      } catch (err) {
        // A setting that no longer reads (a variable's rule tightened, a database unbound): the site answers 503; the others go on.
        broken++;
        console.error(
          JSON.stringify({
            event: "sitemap.registry.sweep",
            site: site.origin,
            outcome: "config",
            error: err instanceof Error ? err.message : String(err),
          }),
        );
        groups.push({ origin: site.origin, services: null, table: "", planned: [] });
        continue;
      }
      const planned: Planned[] = [];
      for (const p of heartbeatJobs([services], { deployment: false, gscReadsBefore: gscReads })) {
        if (p.job.kind === "gsc-status") gscReads++;
        // A mirror job names the site and its URL (its own chain, apart from any other site's naming the URL); the site travels
        // with it too (src/job-dispatch.ts resolves the services by it).
        planned.push(p.job.kind === "mirror" ? { ...p, job: { ...p.job, origin: mirrorTarget(site.origin, p.job.origin), site: site.origin } } : p);
      }
      // Sites on one database (setting DATABASE, default DB) share its `jobs` table: their chains start in one statement per 24.
      groups.push({ origin: site.origin, services, table: site.settings[DATABASE_SETTING] ?? "DB", planned });
    }
    // The page's sites go in chunks of at most JOBS_PER_CHUNK jobs (a site's whole), the step's budget checked after each.
    const chunks = chunked(groups);
    for (const [index, chunk] of chunks.entries()) {
      const tableOf = new Map<Services, string>();
      for (const g of chunk) if (g.services !== null) tableOf.set(g.services, g.table);
      sent += await startPlanned(
        chunk.flatMap((g) => g.planned),
        Date.now(),
        (p) => tableOf.get(p.database) ?? p.database,
      );
      // Their moves and tombstones no reader needs, as the sync sweep trims those of the configured sites.
      const byDatabase = new Map<string, Services[]>();
      for (const [services, table] of tableOf) byDatabase.set(table, [...(byDatabase.get(table) ?? []), services]);
      const trimmed = await trimRegistered(byDatabase.values(), {
        maxStatements: Math.min(TRIM_STATEMENTS, TRIM_CEILING - c.usage().serviceCalls),
        deadline: c.deadline,
      });
      tombstones += trimmed.tombstones;
      moves += trimmed.moves;
      seen += chunk.length;
      after = chunk.at(-1)!.origin;
      const more = index < chunks.length - 1 || page.length === PAGE;
      if (!more) break;
      if (seen >= SITES_PER_STEP || c.usage().serviceCalls >= QUERY_SHARE || Date.now() >= c.deadline) {
        if (job.step >= MAX_STEPS) return `scheduled ${plural(seen, "site")} (${plural(sent, "job")} sent), stopped at ${MAX_STEPS} steps`;
        c.continueWith({ delaySeconds: 0, after });
        return `scheduled ${plural(seen, "site")} (${plural(sent, "job")} sent${broken ? `, ${broken} with broken settings` : ""}${purge}; trimmed ${plural(tombstones, "tombstone")}, ${plural(moves, "move")}), more left`;
      }
    }
    if (page.length < PAGE) break;
  }
  return `scheduled ${plural(seen, "site")} (${plural(sent, "job")} sent${broken ? `, ${broken} with broken settings` : ""}${purge}; trimmed ${plural(tombstones, "tombstone")}, ${plural(moves, "move")})`;
};

/** One registered site's planned jobs (none when its settings no longer read: `services` null). */
interface SiteJobs {
  origin: string;
  services: Services | null;
  /** Its database's binding: the jobs table its chains start in. */
  table: string;
  planned: Planned[];
}

/**
 * Sites in order, in chunks of at most JOBS_PER_CHUNK planned jobs, a site never split (one site's
 * is at most ~1,000: a 16,384-character MIRROR_SITEMAPS of the shortest URLs), so a chunk costs at
 * most ~130 service calls and a step checks its budget often enough to stay inside its share.
 */
function chunked(groups: readonly SiteJobs[]): SiteJobs[][] {
  const chunks: SiteJobs[][] = [];
  let chunk: SiteJobs[] = [];
  let jobs = 0;
  for (const g of groups) {
    if (chunk.length > 0 && jobs + g.planned.length > JOBS_PER_CHUNK) {
      chunks.push(chunk);
      chunk = [];
      jobs = 0;
    }
    chunk.push(g);
    jobs += g.planned.length;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * A sync sweep for every D1 database the deployment binds (src/jobs/sync-sweep.ts), each on services
 * of that database alone, its chain in that database's jobs table under `REGISTRY_TARGET`: a database
 * no live site uses any more (a DATABASE changed, its sites deleted) still has its syncs expired and
 * its crawler log and jobs table trimmed. A database the heartbeat also sweeps for its SITES sites is
 * swept twice a heartbeat at most: housekeeping is idempotent. One statement and one send per
 * database (at 10 bound databases, 20 of the invocation's calls). The jobs sent.
 */
async function planSweeps(sites: RegisteredSites): Promise<number> {
  const planned: Planned[] = sites
    .databases()
    .filter(({ services }) => services.jobs !== null)
    .map(({ binding, services }) => ({
      job: { kind: "sync-sweep", origin: REGISTRY_TARGET, database: binding, trigger: "cron", step: 0 },
      delaySeconds: 0,
      database: services,
    }));
  return startPlanned(planned, Date.now());
}
