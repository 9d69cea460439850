/**
 * What travels on the JOBS queue: one message per job and site. Small (≤ 200 bytes of JSON), so
 * the 128 KB message cap is never near; the work itself is found from the site's state in D1.
 */

/** Every kind of job; a file of src/jobs/ each. */
export const JOB_KINDS = [
  "mirror",
  "regenerate",
  "notify",
  "gsc-status",
  "sync-sweep",
  "rebalance",
  "crawler-ranges",
  "registry-sweep",
  "site-purge",
] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export interface Job {
  kind: JobKind;
  /**
   * The site (sync-sweep: any site of the database swept, or `REGISTRY_TARGET` with `database`; crawler-ranges: a site of the database that
   * keeps its job; registry-sweep and site-purge: `REGISTRY_TARGET`, one chain each per deployment).
   */
  origin: string;
  /** What asked for it (logged, kept in the regeneration's run summary): cron, write, continue, admin, busy, chain. */
  trigger: string;
  /** Continuations since the trigger: a runaway chain stops at MAX_STEPS and waits for the heartbeat. */
  step: number;
  /** regenerate only: a site pass (POST /sitemap-admin/regenerate?full=1). */
  full?: boolean;
  /** regenerate and notify of a site over several databases: the partition it runs (src/partitions/). */
  partition?: number;
  /** mirror of a registered site (src/registry/): the site whose MIRROR_SITEMAPS lists the URL, so its services run it. */
  site?: string;
  /** sync-sweep of a bound D1 database on its own (src/jobs/registry-sweep.ts): its binding's name. */
  database?: string;
  /** registry-sweep: the last origin its chain's previous steps scheduled (the registry's keyset position). */
  after?: string;
  /**
   * The chain the message belongs to (src/jobs/store.ts): a delivery runs only while it is the job's
   * live chain and the message carries its current step; any other is a no-op.
   */
  chain?: string;
}

/** The `origin` of the jobs that work on the site registry as a whole (registry-sweep, site-purge). */
export const REGISTRY_TARGET = "registry";

/**
 * A mirror job's target (its `origin`, the key of its `jobs` row): the URL for the deployment's
 * MIRROR_SITEMAPS, `<site> <url>` for a registered site's (its mirror state's owner), so two sites
 * naming one URL keep a chain each and never stop each other's (no URL holds a space).
 */
export const mirrorTarget = (owner: string, url: string): string => (owner === "" ? url : `${owner} ${url}`);
/** The mirrored URL of a mirror job's target. */
export const mirrorUrlOf = (target: string): string => target.slice(target.indexOf(" ") + 1);

/** A chain of continuations longer than this stops (a 10M-URL site at 50 shards a step needs 4). */
export const MAX_STEPS = 500;

const isKind = (value: unknown): value is JobKind => typeof value === "string" && (JOB_KINDS as readonly string[]).includes(value);

/** The job a message carries, or null for a body that is not one (acknowledged and logged, never retried). */
export function parseJob(body: unknown): Job | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as Record<string, unknown>;
  if (!isKind(b["kind"]) || typeof b["origin"] !== "string" || b["origin"].length > 2048) return null;
  const step = typeof b["step"] === "number" && Number.isInteger(b["step"]) && b["step"] >= 0 ? b["step"] : 0;
  const trigger = typeof b["trigger"] === "string" ? b["trigger"].slice(0, 40) : "unknown";
  const chain = typeof b["chain"] === "string" && /^[\w-]{1,64}$/.test(b["chain"]) ? b["chain"] : null;
  const partition =
    typeof b["partition"] === "number" && Number.isInteger(b["partition"]) && b["partition"] >= 0 && b["partition"] < 64 ? b["partition"] : null;
  const text = (key: string): string | null => {
    const value = b[key];
    return typeof value === "string" && value.length <= 2048 ? value : null;
  };
  const site = text("site");
  const after = text("after");
  const database = text("database");
  return {
    kind: b["kind"],
    origin: b["origin"],
    trigger,
    step,
    ...(b["full"] === true ? { full: true } : {}),
    ...(partition === null ? {} : { partition }),
    ...(site === null ? {} : { site }),
    ...(after === null ? {} : { after }),
    ...(database === null ? {} : { database }),
    ...(chain === null ? {} : { chain }),
  };
}
