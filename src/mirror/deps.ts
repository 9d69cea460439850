/** What a mirror pass works with (src/mirror/run.ts), and the budget its invocation shares (src/mirror/budget.ts). */
import type { Config } from "../config.ts";
import type { RecordSync } from "../store/port.ts";
import type { Fetcher } from "./fetch.ts";
import type { MirrorStateStore } from "./store.ts";

export interface MirrorDeps {
  config: Config;
  sync: RecordSync;
  state: MirrorStateStore;
  /** The outbound fetch to the remote (default: the global one). */
  fetch?: Fetcher;
}

/**
 * What an invocation (a cron run, a queue message) may still spend on mirrors; the mirrors it runs
 * share it and take from it as they go.
 */
export interface MirrorBudget {
  /** HTTP requests to mirrored hosts (each redirect hop counts). */
  requests: number;
  /** Records read from remote documents (a resumed document's part already sent costs none). */
  records: number;
  /** Wall time (ms) after which no request is sent: the job step's time budget (src/jobs/budget.ts). */
  until?: number;
  /** What the invocation has used (counted at the bindings): a run stops at its share of the limits. */
  usage?: () => { serviceCalls: number };
}
