/**
 * The jobs of a site over several databases (src/partitions/): its regeneration and notification run
 * per partition, each a job of its own carrying its partition, with its own chain in that
 * partition's database; a request for the site's regeneration (a write, the admin, a mirror, a move)
 * becomes one request per partition. Its other jobs (mirror, Search Console status, sync sweep,
 * rebalance) are the site's, in its first database.
 */
import type { Job, JobKind } from "./messages.ts";
import { JobScheduler } from "./scheduler.ts";

/** What each partition runs on its own. */
const PER_PARTITION: ReadonlySet<JobKind> = new Set(["regenerate", "notify"]);

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
}
