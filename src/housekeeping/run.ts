/**
 * A housekeeping run's shape (src/housekeeping/housekeeping.ts): the database it works on, its
 * options and report, and its statement and time budget; and the report as the job's outcome.
 */
import type { Services } from "../services-type.ts";

/** Statements kept back for saving where the run stopped (a walk's cursor, the next partition). */
const RESERVE = 2;

/** One database's services (a partition's, for a site over several databases). */
export type Unit = Pick<Services, "config" | "store" | "regen" | "notify" | "housekeeping" | "layouts" | "crawlerLog">;

export interface HousekeepingOptions {
  /** Time of the run (ms). */
  now?: number;
  /** Whether a row of the jobs table is a configured job: its site, or its mirror's URL, is still configured. */
  keepJob: (kind: string, origin: string) => boolean;
  /** Bounds of the run (tests make them small). */
  maxStatements?: number;
  rowsPerStatement?: number;
  /** When the run must stop taking on work (ms, wall clock): the job's time budget. */
  deadline?: number;
}

export interface HousekeepingReport {
  /** Syncs expired, finished (commits their client abandoned) or forgotten. */
  syncs: number;
  /** Rows of what finished syncs saw, forgotten. */
  seenRows: number;
  /** Section moves deleted. */
  moves: number;
  /** Tombstones purged. */
  tombstones: number;
  /** Rows of the jobs table deleted. */
  jobs: number;
  /** Crawler fetches deleted: older than CRAWLER_STALE_DAYS (at least 7) + 1 days. */
  crawlerFetches: number;
  /** Sites whose tombstones wait for a notifier or the regeneration to pass them. */
  held: number;
  /** D1 statements made (at most: a watermark counts as two). */
  statements: number;
  /** The run stopped at its budget with work left: a next run should follow at once. */
  moreLeft: boolean;
}

export class Budget {
  used = 0;
  readonly #max: number;
  readonly #deadline: number;

  constructor(max: number, deadline: number) {
    this.#max = max;
    this.#deadline = deadline;
  }

  /** Whether `n` statements fit, the reserve kept back, and there is time left. */
  has(n: number): boolean {
    return this.used + n + RESERVE <= this.#max && Date.now() < this.#deadline;
  }

  /** Statements that fit, the reserve kept back (none once the time is up). */
  free(): number {
    return Date.now() < this.#deadline ? Math.max(0, this.#max - RESERVE - this.used) : 0;
  }
}

export interface Run {
  now: number;
  rows: number;
  budget: Budget;
  report: HousekeepingReport;
  keepJob: HousekeepingOptions["keepJob"];
}

/** The job's outcome: "swept 2; trimmed tombstones 50000, moves 12, more left". */
export function describeHousekeeping(r: HousekeepingReport): string {
  const trimmed = (
    [
      ["tombstones", r.tombstones],
      ["moves", r.moves],
      ["jobs", r.jobs],
      ["sync rows", r.seenRows],
    ] as const
  ).filter(([, n]) => n > 0);
  let out = `swept ${r.syncs}`;
  if (trimmed.length > 0) out += `; trimmed ${trimmed.map(([what, n]) => `${what} ${n}`).join(", ")}`;
  if (r.held > 0) out += `; tombstones held at ${r.held} site${r.held === 1 ? "" : "s"}`;
  return r.moreLeft ? `${out}, more left` : out;
}
