/** Worker entry: the Hono app for requests, the cron heartbeat, the jobs' queue consumer (its dispatch: src/job-dispatch.ts), and the KV writer object. */
import { app } from "./http/app.ts";
import { JOBS, servicesOfJob } from "./job-dispatch.ts";
import { consumeJobs } from "./jobs/consumer.ts";
import { type RegistryHome, heartbeat } from "./jobs/heartbeat.ts";
import { Meter, metered } from "./jobs/meter.ts";
import { countGlobalCalls, meteredEnv } from "./jobs/metered-env.ts";
import { databaseServices, registeredSites, services, siteRegistry } from "./services.ts";
import type { Services } from "./services-type.ts";

// Each site's single KV writer (URL_SOURCE=kv), a Durable Object: wrangler.jsonc binds it as KV_WRITERS.
export { KvSiteWriter } from "./adapters/kv/writer-object.ts";

// Every invocation runs under Cloudflare's per-invocation limits, counted and enforced at the
// bindings (src/jobs/meter.ts): locally, where nothing else enforces them, as in production.
countGlobalCalls();

export default {
  fetch(request, env, ctx) {
    return metered(new Meter(), () => app.fetch(request, meteredEnv(env), ctx));
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
