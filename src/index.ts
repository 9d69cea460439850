/** Worker entry: the Hono app for requests, the cron trigger, and the KV writer object. */
import { readSearchConsoleStatus } from "./gsc/scheduled.ts";
import { app } from "./http/app.ts";
import { mirrorAll } from "./mirror/scheduled.ts";
import { notifyAfterRegeneration } from "./notify/notifier.ts";
import { rebalanceAll } from "./partitions/rebalance.ts";
import { regenerateAll } from "./regen/scheduled.ts";
import { databaseServices } from "./services.ts";
import type { Services } from "./services-type.ts";
import { sweepSyncs } from "./sync/sweep.ts";

// Each site's single KV writer (URL_SOURCE=kv), a Durable Object: wrangler.jsonc binds it as KV_WRITERS.
export { KvSiteWriter } from "./adapters/kv/writer-object.ts";

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    // Each job is handed the services it works on: one object per D1 database (SITE_DATABASES), each
    // with its own sites. A bad configuration (ConfigError) is logged once, and then no job runs.
    let databases: Services[];
    try {
      databases = databaseServices(env);
    } catch (err) {
      console.error("scheduled jobs skipped:", err instanceof Error ? err.message : err);
      return;
    }
    // Abandoned syncs expire without deleting anything (docs/sync.md). Never throws.
    await sweepSyncs(databases);
    // Fetch and sync mirrored sitemaps first, so this run publishes what they changed (docs/mirror.md). Never throws.
    await mirrorAll(databases);
    // A database appended to a partitioned site's list is filled one bounded step per run (src/partitions/rebalance.ts). Never throws.
    await rebalanceAll(databases);
    // Pre-render what changed and publish it (docs/regeneration.md). Never throws.
    await regenerateAll(databases, ctx, "cron");
    // After the regeneration: tell search engines what changed (docs/notify.md). Never throws.
    // A partitioned site's partitions each announce their own changes, from their own change feed.
    await notifyAfterRegeneration(databases.flatMap((s) => s.partitions ?? [s]));
    // What Google did with the sitemaps, at most every GSC_STATUS_INTERVAL per site (src/gsc/). Never throws.
    await readSearchConsoleStatus(databases, env);
  },
} satisfies ExportedHandler<Env>;
