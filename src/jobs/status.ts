/**
 * The jobs of a site for GET /sitemap-admin/status and the dashboard: each job's last run, its
 * outcome and what it used, and — until a run of it succeeds — its last error, with `deadAt` once
 * the queue gave up on it (the dead-letter queue; the next heartbeat schedules it again).
 */
import { shownUrl } from "../mirror/failure.ts";
import { siteOfUrl } from "../mirror/site.ts";
import type { Services } from "../services-type.ts";
import { mirrorTarget, mirrorUrlOf } from "./messages.ts";
import type { JobRecord, JobUsage } from "./store.ts";

export interface JobStatus {
  kind: string;
  /** The site, or a mirror's URL without its query. */
  target: string;
  /** A site over several databases: the partition whose job this is (its regeneration and notification run per partition). */
  partition?: number;
  /**
   * scheduled: its chain's next message is on its way; running: a delivery holds the step's lease;
   * failing: the queue retries it (a step that threw, or was killed: `killed`); dead: in the
   * dead-letter queue (the next heartbeat starts it again).
   */
  state: "idle" | "scheduled" | "running" | "failing" | "dead";
  dueAt: string | null;
  lastRun: string | null;
  outcome: string | null;
  usage: JobUsage | null;
  error: string | null;
  attempts: number;
  /** Deliveries that died mid-step (CPU or memory limit, a restart) since the last success: each counts as a failed attempt. */
  killed: number;
  deadAt: string | null;
}

const iso = (ms: number | null): string | null => (ms === null || ms === 0 ? null : new Date(ms).toISOString());

function stateOf(r: JobRecord, now: number): JobStatus["state"] {
  if (r.deadAt !== null) return "dead";
  if (r.error !== null) return "failing";
  if (r.chain !== null && r.leaseUntil > now) return "running";
  return r.chain !== null ? "scheduled" : "idle";
}

/** The jobs each partition of a site over several databases runs in its own database (src/jobs/partitions.ts). */
const PER_PARTITION = new Set(["regenerate", "notify"]);

export async function jobsStatus(s: Services, origin: string, now = Date.now()): Promise<JobStatus[]> {
  if (!s.jobs) return [];
  // A registered site's mirrors are all its own (their state and jobs are kept under it); the deployment's, by their URL's site.
  const owner = s.mirrors?.owner ?? "";
  const mirrors = s.config.mirror.urls.filter((url) => owner === origin || siteOfUrl(url, s.config.sites) === origin);
  // The site's jobs and its mirrors' in one read, however many mirrors it has: the site's first, then each mirror's in its order.
  const targets = [origin, ...mirrors.map((url) => mirrorTarget(owner, url))];
  const rank = new Map(targets.map((t, i) => [t, i]));
  const listed = (await s.jobs.state.list(targets)).sort((a, b) => rank.get(a.origin)! - rank.get(b.origin)!);
  const records: { r: JobRecord; partition?: number }[] = listed.map((r) =>
    r.origin === origin ? { r, ...(s.partitions && PER_PARTITION.has(r.kind) ? { partition: 0 } : {}) } : { r },
  );
  // A site over several databases: each further partition's own jobs, from its own database.
  for (const [p, part] of (s.partitions ?? []).entries()) {
    if (p === 0 || !part.jobs) continue;
    for (const r of await part.jobs.state.list([origin])) if (PER_PARTITION.has(r.kind)) records.push({ r, partition: p });
  }
  return records.map(({ r, partition }) => ({
    kind: r.kind,
    target: r.kind === "mirror" ? shownUrl(mirrorUrlOf(r.origin)) : r.origin,
    ...(partition === undefined ? {} : { partition }),
    state: stateOf(r, now),
    dueAt: r.chain !== null ? iso(r.dueAt) : null,
    lastRun: iso(r.ranAt),
    outcome: r.outcome,
    usage: r.usage,
    error: r.error,
    attempts: r.attempts,
    killed: r.killed,
    deadAt: iso(r.deadAt),
  }));
}
