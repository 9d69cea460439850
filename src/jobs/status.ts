/**
 * The jobs of a site for GET /sitemap-admin/status and the dashboard: each job's last run, its
 * outcome and what it used, and — until a run of it succeeds — its last error, with `deadAt` once
 * the queue gave up on it (the dead-letter queue; the next heartbeat schedules it again).
 */
import { shownUrl } from "../mirror/failure.ts";
import { siteOfUrl } from "../mirror/site.ts";
import type { Services } from "../services-type.ts";
import type { JobUsage } from "./store.ts";

export interface JobStatus {
  kind: string;
  /** The site, or a mirror's URL without its query. */
  target: string;
  /** scheduled: a message is on its way (claimed after the last run started); failing: the queue retries it; dead: in the dead-letter queue. */
  state: "idle" | "scheduled" | "failing" | "dead";
  dueAt: string | null;
  lastRun: string | null;
  outcome: string | null;
  usage: JobUsage | null;
  error: string | null;
  attempts: number;
  deadAt: string | null;
}

const iso = (ms: number | null): string | null => (ms === null || ms === 0 ? null : new Date(ms).toISOString());

export async function jobsStatus(s: Services, origin: string): Promise<JobStatus[]> {
  if (!s.jobs) return [];
  const mirrors = s.config.mirror.urls.filter((url) => siteOfUrl(url, s.config.sites) === origin);
  const records = [...(await s.jobs.state.list(origin)), ...(await Promise.all(mirrors.map((url) => s.jobs!.state.list(url)))).flat()];
  return records.map((r) => ({
    kind: r.kind,
    target: r.kind === "mirror" ? shownUrl(r.origin) : r.origin,
    state: r.deadAt !== null ? "dead" : r.error !== null ? "failing" : r.dueAt > (r.ranAt ?? 0) ? "scheduled" : "idle",
    dueAt: r.dueAt > (r.ranAt ?? 0) ? iso(r.dueAt) : null,
    lastRun: iso(r.ranAt),
    outcome: r.outcome,
    usage: r.usage,
    error: r.error,
    attempts: r.attempts,
    deadAt: iso(r.deadAt),
  }));
}
