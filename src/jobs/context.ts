/** What the consumer hands each job (src/jobs/consumer.ts), and what a job answers. */
import type { SitePurgeStore } from "../registry/purge.ts";
import type { RegisteredSite, SiteRegistry } from "../registry/store.ts";
import type { Services } from "../services-type.ts";
import type { Job } from "./messages.ts";
import type { JobScheduler } from "./scheduler.ts";
import type { JobUsage } from "./store.ts";

/** A step asks for its chain's next message: after this many seconds, with these extras. */
export interface Continuation {
  delaySeconds: number;
  full?: boolean;
  /** The position the next step goes on from (registry-sweep: the last origin scheduled). */
  after?: string;
}

/** The site registry and the wiring of its sites (src/services.ts), handed to the jobs that walk it. */
export interface RegisteredSites {
  registry: SiteRegistry;
  /** A registered site's services (its database, its settings over the deployment's variables). Throws ConfigError. */
  servicesOf(site: RegisteredSite): Services;
  /**
   * Reads this isolate's list of registered sites again when it is stale, so that `servicesOf` checks the settings
   * naming hosts against every registered site's host (src/registry/settings.ts), not only SITES'.
   */
  listHosts(): Promise<void>;
  /**
   * What removes the site's rows from its database and every other D1 database the deployment binds
   * (where it may have been before a DATABASE change, whether or not a live site uses it now); null when none is bound.
   */
  purgeOf(site: RegisteredSite): SitePurgeStore | null;
  /** Every D1 database the deployment binds (its binding's name), with services for its housekeeping alone (src/jobs/sync-sweep.ts). */
  databases(): { binding: string; services: Services }[];
}

interface JobContext {
  /** The services of the job's database, on bindings counted by the invocation's meter. */
  services: Services;
  /** The site registry (sites as data, src/registry/) on the counted env; null without one (no DB binding). */
  sites: RegisteredSites | null;
  /** The counted env (a job that reads a variable from env: Search Console status). */
  env: Env;
  /** The invocation's context (shared caches are purged through it after a publish). */
  ctx: ExecutionContext;
  /** Where requests for other jobs go (the next link of a chain: mirror → regenerate → notify). */
  scheduler: JobScheduler;
  /** What the invocation has used so far. */
  usage(): JobUsage;
  /**
   * When the step must stop taking on work (ms, wall clock): its share of `limits.cpu_ms`
   * (src/jobs/budget.ts). What is left goes on in the chain's next step.
   */
  deadline: number;
  /** The chain's token: the lease a job takes for its target (regeneration, notification) is named by it, so a retry of a killed step takes its own lease back. */
  chain: string;
  /** The attempt before this one was killed mid-step (its leases are this chain's to take back). */
  tookOver: boolean;
  /** Asks for the chain's next step (the consumer sends it once this step ended well). */
  continueWith(next: Continuation): void;
}

/** Runs one job; its answer is the outcome kept in the jobs' state. Throws to have the queue retry it. */
export type JobHandler = (job: Job, c: JobContext) => Promise<string>;

/** The services with only `origin` among its sites: the per-site run of an entry point that loops over sites. */
export function forOneSite(s: Services, origin: string): Services {
  return { ...s, config: { ...s.config, sites: new Set([origin]) } };
}
