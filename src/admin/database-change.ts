/**
 * A registered site's DATABASE change (PATCH /sitemap-admin/sites/{host}, docs/tenants.md "Its
 * database"): records are not moved between databases, so the change is refused while the database
 * it leaves holds what would be stranded or lost there — its records (tombstones and a sync's staged
 * batches included), a sync under way, snapshots its regeneration registered for collection — and
 * otherwise that database's state of the site (manifest, regeneration and notification state,
 * sessions and audit trail, jobs, crawler log, mirrors, finished syncs: every table keyed by its
 * origin) is deleted before the change is written, so nothing of the site is left where it no longer
 * points. What an isolate still serving the old settings writes there afterwards (until its list of
 * sites is read again) is removed with the rest when the site is deleted: the purge walks every
 * database the deployment binds (src/jobs/site-purge.ts).
 */
import type { Stranded } from "../registry/purge.ts";
import type { RegisteredSite } from "../registry/store.ts";
import { databasePurge } from "../services.ts";
import { AdminError } from "./errors.ts";

/** Rows per delete statement. */
const ROWS_PER_STATEMENT = 5_000;
/** Rounds of the state's deletes in one request at most (~27 statements each, within the request's 1,000). */
const ROUNDS = 10;

const WHY: Record<Stranded, string> = {
  records: "the site holds records there: delete them first (a full sync of none), then change it",
  "open-sync": "a sync of the site is under way there: commit or abort it first",
  snapshots: "snapshots of the site are still to be collected there: try again once its regeneration has collected them",
};

/** Clears what the site keeps in the D1 database bound as `from`, or throws the 409 saying why it cannot leave it (yet). */
export async function leaveDatabase(env: Env, site: RegisteredSite, from: string): Promise<void> {
  // A database no longer bound: nothing there can be reached, nor left behind by this change.
  const purge = databasePurge(env, from);
  if (purge === null) return;
  const stranded = await purge.stranded(site.origin);
  if (stranded !== null) {
    throw new AdminError(409, { error: "database_in_use", message: `DATABASE cannot change: ${WHY[stranded]}` });
  }
  for (let round = 0; round < ROUNDS; round++) {
    if (await purge.purgeState(site.origin, ROWS_PER_STATEMENT)) return;
  }
  throw new AdminError(409, {
    error: "database_in_use",
    message: "DATABASE is not changed yet: the site's state in its database is being deleted; send the same change again",
  });
}
