/**
 * The purge of deleted registered sites (src/registry/, docs/jobs.md): one chain per deployment,
 * queued by the registry sweep (and by a site's DELETE) while the registry holds a deleted site.
 * Each step works on the oldest one: once no isolate can still serve it and no job step begun
 * before its deletion can still run (twice `MANIFEST_CACHE_TTL` + a step's lease after the deletion:
 * an idle isolate answers from its list of sites until it is twice the TTL old, src/registry/resolve.ts), it
 * deletes, in bounded statements, its records, then its other rows in every table keyed by its
 * origin, in its database and every other D1 database the deployment binds (src/registry/purge.ts), then its snapshots in KV (those
 * registered for the garbage collection, then its heads, page by page), its robots.txt last good
 * copy and loop mark, its documents in the tiered Workers Cache (by its Cache-Tag, when that cache is
 * on), and last its registry row; then the next deleted site.
 * It stops at its time budget or its share of the invocation's KV operations, and its chain goes
 * on. Every delete is idempotent: a killed step's retry finds less to do.
 */
import { purgeSiteDocuments } from "../regen/purge.ts";
import type { SnapshotStore } from "../snapshots/store.ts";
import { JOB_LEASE_MS } from "./budget.ts";
import type { JobHandler } from "./context.ts";
import { MAX_STEPS } from "./messages.ts";

/** Rows per delete statement at most. */
const PURGE_ROWS_PER_STATEMENT = 5_000;
/** Record delete rounds per step at most (each a statement per database still holding some: 100,000 records a database). */
const RECORD_STATEMENTS_PER_STEP = 20;
/**
 * No further round of record deletes past this many service calls of the invocation's shared 1,000:
 * the state's statements (~25 a database, 250 at 10 bound databases) and the snapshots' share still fit.
 */
const RECORD_SHARE = 300;
/** The step deletes no further snapshot past this many service calls of its invocation's shared 1,000 (a document in parts costs a few more). */
const KV_SHARE = 400;
/** Snapshot keys read per page (registered for the garbage collection, or a site's heads listed). */
const KEYS_PER_PAGE = 100;

/** `after` of a heads listing: the site it belongs to, then the KV cursor. */
const cursorOf = (after: string | undefined, origin: string): string | null => (after?.startsWith(`${origin} `) ? after.slice(origin.length + 1) : null);

export const sitePurgeJob: JobHandler = async (job, c) => {
  const sites = c.sites;
  if (sites === null) return "no registry";
  const origin = (await sites.registry.deleting(1))[0];
  if (origin === undefined) return "nothing to purge";
  const site = await sites.registry.get(origin);
  if (site === null || site.deletedAt === null) return "nothing to purge";
  const more = (what: string, after?: string): string => {
    if (job.step >= MAX_STEPS) return `${what}; stopped at ${MAX_STEPS} steps`;
    c.continueWith({ delaySeconds: 0, ...(after === undefined ? {} : { after }) });
    return `${what}, more left`;
  };

  // An isolate serves a deleted site from its list of sites until that list is twice MANIFEST_CACHE_TTL old, and a job
  // step begun before the deletion runs out its lease. The origin cannot be registered again before its row is gone
  // (here, last), so a new tenant there is never served the old tenant's record by any isolate.
  const settled = site.deletedAt + 2 * c.services.config.cache.manifestTtl * 1000 + JOB_LEASE_MS;
  const now = Date.now();
  if (now < settled) {
    c.continueWith({ delaySeconds: Math.ceil((settled - now) / 1000) });
    return `waiting for ${origin} to settle`;
  }

  // An origin SITES serves now (registered, deleted, then named by SITES): its records and snapshots are SITES' site's,
  // so only its registry row goes. The platform API refuses to delete such a site (src/admin/sites.ts); this holds for one deleted before.
  if (c.services.config.sites.has(origin)) {
    await sites.registry.remove(origin);
    if ((await sites.registry.deleting(1)).length > 0) return more(`${origin} is served by SITES: only its registry row removed`);
    return `${origin} is served by SITES: only its registry row removed`;
  }

  // Every database the deployment binds, not only the one its settings name now: it may have left rows in any.
  const purge = sites.purgeOf(site);
  let records = 0;
  if (purge !== null) {
    for (let i = 0; ; i++) {
      const spent = i >= RECORD_STATEMENTS_PER_STEP || c.usage().serviceCalls >= RECORD_SHARE || Date.now() >= c.deadline;
      if (spent) return more(`${origin}: ${records} records deleted`);
      const n = await purge.purgeRecords(origin, PURGE_ROWS_PER_STATEMENT);
      records += n;
      if (n < PURGE_ROWS_PER_STATEMENT) break;
    }
    if (!(await purge.purgeState(origin, PURGE_ROWS_PER_STATEMENT))) return more(`${origin}: ${records} records, state deleted`);
  }

  // The snapshots, in the deployment's SNAPSHOTS namespace: first what the regeneration registered for its garbage
  // collection (parts no head took among them), then every head of the site (with its parts).
  const snapshots = c.services.snapshots;
  let deleted = 0;
  if (snapshots !== null) {
    const spent = (): boolean => c.usage().serviceCalls >= KV_SHARE || Date.now() >= c.deadline;
    for (;;) {
      const keys = purge === null ? [] : await purge.collectableKeys(origin, KEYS_PER_PAGE);
      const done: string[] = [];
      for (const key of keys) {
        if (spent()) break;
        await snapshots.delete(key);
        done.push(key);
      }
      await purge?.dropKeys(origin, done);
      deleted += done.length;
      if (done.length < keys.length) return more(`${origin}: ${records} records, ${deleted} snapshots deleted`);
      if (keys.length < KEYS_PER_PAGE) break;
    }
    const heads = await deleteHeads(snapshots, origin, cursorOf(job.after, origin), spent);
    deleted += heads.deleted;
    if (heads.resume !== undefined) return more(`${origin}: ${records} records, ${deleted} snapshots deleted`, `${origin} ${heads.resume}`);
  }

  // Its robots.txt state in KV: a new tenant at the same origin must not be served the old one's rules, nor its loop.
  await c.services.robotsLastGood?.remove(origin);
  await c.services.robotsLoop?.clear(origin);
  // Its documents in the tiered Workers Cache, when on: no isolate serves the site any more, so none fills it again.
  await purgeSiteDocuments(c.ctx, origin);
  await sites.registry.remove(origin);
  const outcome = `${origin} purged: ${records} records, ${deleted} snapshots deleted${purge === null ? " (its database is not bound: its rows stay)" : ""}`;
  console.log(JSON.stringify({ event: "sitemap.registry.purged", site: origin, records, snapshots: deleted }));
  // The next deleted site, if any, in the chain's next step.
  if ((await sites.registry.deleting(1)).length > 0) return more(outcome);
  return outcome;
};

/**
 * Deletes the site's heads page by page from `cursor`, until `spent`. `resume`: the cursor to list
 * again from ("" for the first page), or undefined when every page was done.
 */
async function deleteHeads(
  snapshots: SnapshotStore,
  origin: string,
  cursor: string | null,
  spent: () => boolean,
): Promise<{ deleted: number; resume?: string }> {
  let deleted = 0;
  let at = cursor;
  for (;;) {
    if (spent()) return { deleted, resume: at ?? "" };
    const page = await snapshots.siteHandles(origin, KEYS_PER_PAGE, at);
    for (const handle of page.handles) {
      // The page is listed again from its own cursor: what this step deleted of it is deleted again, harmlessly.
      if (spent()) return { deleted, resume: at ?? "" };
      await snapshots.delete(handle);
      deleted++;
    }
    if (page.next === null) return { deleted };
    at = page.next;
  }
}
