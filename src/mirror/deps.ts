/** What a mirror pass works with (src/mirror/run.ts), and the record budget its cron run shares. */
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

/** Records a cron run may still read, shared by every mirror of the run. */
export interface MirrorBudget {
  records: number;
}
