/** Worker entry: the Hono app for requests, the cron trigger, and the KV writer object. */
import { readSearchConsoleStatus } from "./gsc/scheduled.ts";
import { app } from "./http/app.ts";
import { mirrorAll } from "./mirror/scheduled.ts";
import { notifyAfterRegeneration } from "./notify/notifier.ts";
import { regenerateAll } from "./regen/scheduled.ts";
import { sweepSyncs } from "./sync/sweep.ts";

// Each site's single KV writer (URL_SOURCE=kv), a Durable Object: wrangler.jsonc binds it as KV_WRITERS.
export { KvSiteWriter } from "./adapters/kv/site-writer.ts";

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    // Abandoned syncs expire without deleting anything (docs/sync.md). Never throws.
    await sweepSyncs(env);
    // Fetch and sync mirrored sitemaps first, so this run publishes what they changed (docs/mirror.md). Never throws.
    await mirrorAll(env);
    // Pre-render what changed and publish it (docs/regeneration.md). Never throws.
    await regenerateAll(env, ctx, "cron");
    // After the regeneration: tell search engines what changed (docs/notify.md). Never throws.
    await notifyAfterRegeneration(env);
    // What Google did with the sitemaps, at most every GSC_STATUS_INTERVAL per site (src/gsc/). Never throws.
    await readSearchConsoleStatus(env);
  },
} satisfies ExportedHandler<Env>;
