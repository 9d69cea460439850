/** What the consumer hands each job (src/jobs/consumer.ts), and what a job answers. */
import type { Services } from "../services-type.ts";
import type { Job } from "./messages.ts";
import type { JobScheduler } from "./scheduler.ts";
import type { JobUsage } from "./store.ts";

interface JobContext {
  /** The services of the job's database, on bindings counted by the invocation's meter. */
  services: Services;
  /** The counted env (a job that reads a variable from env: Search Console status). */
  env: Env;
  /** The invocation's context (shared caches are purged through it after a publish). */
  ctx: ExecutionContext;
  /** Where follow-up jobs go: continuations and the next link of the chain. */
  scheduler: JobScheduler;
  /** What the invocation has used so far. */
  usage(): JobUsage;
}

/** Runs one job; its answer is the outcome kept in the jobs' state. Throws to have the queue retry it. */
export type JobHandler = (job: Job, c: JobContext) => Promise<string>;

/** The services with only `origin` among its sites: the per-site run of an entry point that loops over sites. */
export function forOneSite(s: Services, origin: string): Services {
  return { ...s, config: { ...s.config, sites: new Set([origin]) } };
}
