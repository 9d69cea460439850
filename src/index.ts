/** Worker entry: the Hono app for requests, the cron heartbeat, the jobs' queue consumer (its dispatch: src/job-dispatch.ts), and the KV writer object. */
import { KvSiteWriter as SiteWriter } from "./adapters/kv/writer-object.ts";
import { readVariable } from "./config/variable.ts";
import { INVOCATION_LIMITS } from "./config/variables/index.ts";
import { app } from "./http/app.ts";
import { JOBS, servicesOfJob } from "./job-dispatch.ts";
import { consumeJobs } from "./jobs/consumer.ts";
import { type RegistryHome, heartbeat } from "./jobs/heartbeat.ts";
import { Meter, PAID_LIMITS, metered } from "./jobs/meter.ts";
import { countGlobalCalls, meteredEnv } from "./jobs/metered-env.ts";
import { meteredObject } from "./jobs/metered-object.ts";
import { databaseServices, registeredSites, services, siteRegistry } from "./services.ts";
import type { Services } from "./services-type.ts";

// Every invocation runs under Cloudflare's per-invocation limits, counted at the bindings
// (src/jobs/meter.ts) and enforced where INVOCATION_LIMITS=enforce (the tests: nothing else enforces them locally).
countGlobalCalls();

/** A meter for one invocation: refusing past a limit only where INVOCATION_LIMITS says so (the tests); a deployment counts. */
function meterOf(env: Env): Meter {
  let enforce = enforcing.get(env);
  if (enforce === undefined) {
    try {
      enforce = readVariable(env, INVOCATION_LIMITS) === "enforce";
    } catch {
      enforce = false; // a bad value is reported by the configuration's check; meanwhile the meter only counts
    }
    enforcing.set(env, enforce);
  }
  return new Meter(PAID_LIMITS, Date.now(), enforce);
}
const enforcing = new WeakMap<object, boolean>();

// Each site's single KV writer (URL_SOURCE=kv), a Durable Object: wrangler.jsonc binds it as KV_WRITERS.
// Each of its calls and alarms is an invocation of its own, metered as the Worker's are.
export const KvSiteWriter = meteredObject(SiteWriter, meterOf);

export default {
  fetch(request, env, ctx) {
    return metered(meterOf(env), () => app.fetch(request, meteredEnv(env), ctx));
  },
  scheduled(_controller, env, _ctx) {
    return metered(meterOf(env), async () => {
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
    const meter = meterOf(env);
    return metered(meter, () => consumeJobs(batch, meteredEnv(env), ctx, { handlers: JOBS, servicesOf: servicesOfJob, sites: registeredSites, meter }));
  },
} satisfies ExportedHandler<Env>;
