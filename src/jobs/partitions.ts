/**
 * The jobs of a site over several databases (src/partitions/): its regeneration and notification run
 * per partition, each a job of its own carrying its partition, with its own chain in that
 * partition's database; a request for the site's regeneration (a write, the admin, a mirror, a move)
 * becomes one request per partition. Its other jobs (mirror, Search Console status, sync sweep,
 * rebalance) are the site's, in its first database.
 *
 * Partition 0's database is the site's first, so its regeneration and notification share their
 * `jobs` row with the site-level job of the same kind: a message sent before the site was
 * partitioned (a write's regeneration queued as a database was appended) holds that row's chain.
 * Whatever that chain sends next — a requested rerun, a continuation — is partition 0's job, never
 * the site-level one again (which would fan out, note partition 0 on its own row and rerun itself
 * forever).
 */

import type { Job, JobKind } from "./messages.ts";
import { JobScheduler } from "./scheduler.ts";
import type { Holder } from "./store.ts";

/** What each partition runs on its own. */
const PER_PARTITION: ReadonlySet<JobKind> = new Set(["regenerate", "notify"]);

/** A site-level job of a kind each partition runs on its own (a message from before the site was partitioned). */
export const siteLevelOfPartitioned = (job: Job): boolean => PER_PARTITION.has(job.kind) && job.partition === undefined;

/** The job the shared row's chain runs next: partition 0's. */
const asRowJob = (job: Job): Job => (siteLevelOfPartitioned(job) ? { ...job, partition: 0 } : job);

export class PartitionedJobs extends JobScheduler {
  readonly #parts: readonly JobScheduler[];

  /** `home`: the site's first database's scheduler; `parts`: each partition's, stamping its partition. */
  constructor(home: JobScheduler, parts: readonly JobScheduler[]) {
    super(home.state, {
      send: (body, options) => home.send(body, options?.delaySeconds),
      sendBatch: (messages) => home.sendAll([...messages].map((m) => ({ job: m.body, delaySeconds: m.delaySeconds ?? 0 }))),
    });
    this.#parts = parts;
  }

  override async request(kind: JobKind, origin: string, delaySeconds: number, trigger: string, extra: Pick<Job, "full"> = {}): Promise<boolean> {
    if (!PER_PARTITION.has(kind)) return super.request(kind, origin, delaySeconds, trigger, extra);
    const sent = await Promise.all(this.#parts.map((p) => p.request(kind, origin, delaySeconds, trigger, extra)));
    return sent.some(Boolean);
  }

  override rerun(job: Job, delaySeconds: number, back: number): Promise<void> {
    return super.rerun(asRowJob(job), delaySeconds, back);
  }

  override continueChain(
    job: Job,
    holder: Holder,
    step: number,
    delaySeconds: number,
    trigger: string,
    extra: Pick<Job, "full" | "after"> = {},
  ): Promise<boolean> {
    return super.continueChain(asRowJob(job), holder, step, delaySeconds, trigger, extra);
  }
}
