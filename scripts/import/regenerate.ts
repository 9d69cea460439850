/**
 * After an import that changed something: POST /sitemap-admin/regenerate, which queues a
 * regeneration of the site the request is sent to (the target's own origin), then waits for it. Other sites' sitemaps follow at their
 * next cron run. A failure here is a warning: the records are stored either way.
 */
import { type AdminClient, type ApiAnswer, ClientError } from "./client.ts";
import type { Progress } from "./progress.ts";

/** Whether the regeneration ran (null: the target's origin changed nothing, so none was asked). */
export async function regenerate(client: AdminClient, url: string, changedOrigins: ReadonlySet<string>, progress: Progress): Promise<boolean | null> {
  const target = new URL(url).origin;
  for (const origin of changedOrigins) {
    if (origin !== target) {
      progress.message(`note: ${origin}'s sitemaps update at the Worker's next cron run (or POST ${origin}/sitemap-admin/regenerate)`);
    }
  }
  if (!changedOrigins.has(target)) return null;
  let answer: ApiAnswer;
  try {
    answer = await client.request("POST", "sitemap-admin/regenerate");
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    progress.message(`warning: regeneration failed (${err.message}); the records are stored, the cron will pick them up`);
    return false;
  }
  if (answer.status === 202) return waitForJob(client, progress);
  if (answer.status === 200) progress.message(`regenerated the sitemaps: ${regenerationLine(answer.json)}`);
  else if (answer.status === 404) progress.message("this Worker has no POST /sitemap-admin/regenerate: its cron will update the sitemaps");
  else progress.message(`warning: POST /sitemap-admin/regenerate answered ${answer.status}; the records are stored, the cron will pick them up`);
  return answer.status === 200;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/**
 * A run's summary (GET /sitemap-admin/status `runs`, src/regen/summary.ts) as one line a person
 * reads: what was rendered, whether it was published, what is left.
 */
function regenerationLine(run: unknown): string {
  if (typeof run !== "object" || run === null) return "done (no run summary)";
  const r = run as Record<string, unknown>;
  const num = (key: string): number => (typeof r[key] === "number" ? (r[key] as number) : 0);
  const parts = [
    `${plural(num("shardsRendered"), "shard")} rendered of ${num("shardsChecked").toLocaleString("en-US")} checked`,
    r["published"] === true
      ? `published ${typeof r["manifestVersion"] === "string" ? r["manifestVersion"].slice(0, 12) : ""}`.trimEnd()
      : "nothing new to publish",
  ];
  if (typeof r["durationMs"] === "number") parts.push(`${(num("durationMs") / 1000).toFixed(1)} s`);
  if (num("pendingShards") > 0 || r["passPending"] === true) parts.push(`${plural(num("pendingShards"), "shard")} left for the next run`);
  const failed = Array.isArray(r["failed"]) ? r["failed"].length : 0;
  if (failed > 0) parts.push(`${plural(failed, "document")} failed (GET /sitemap-admin/status)`);
  return parts.join(", ");
}

/** How long the CLI waits for the queued regeneration (it goes on in the background after that). */
const WAIT_MS = 120_000;

interface StatusAnswer {
  jobs?: { kind: string; state: string; outcome: string | null; dueAt?: string | null }[];
  runs?: unknown[];
}

/** " (due in 42 s)", or "" when the job's due time is unknown or past. */
function dueIn(dueAt: string | null | undefined): string {
  const ms = dueAt ? Date.parse(dueAt) - Date.now() : Number.NaN;
  return Number.isFinite(ms) && ms > 0 ? ` (due in ${Math.ceil(ms / 1000)} s)` : "";
}

/**
 * The Worker queued the regeneration (202, docs/jobs.md): waits until its job (and the
 * continuations it queues) ran, as GET /sitemap-admin/status shows it, so that the sitemaps serve
 * the import when the CLI exits. true when it converged within WAIT_MS.
 */
async function waitForJob(client: AdminClient, progress: Progress): Promise<boolean> {
  const until = Date.now() + WAIT_MS;
  let said = 0;
  while (Date.now() < until) {
    const answer = await client.request("GET", "sitemap-admin/status").catch(() => null);
    const status = (answer?.json ?? null) as StatusAnswer | null;
    const job = status?.jobs?.find((j) => j.kind === "regenerate");
    // Said at once and then every 15 s: a write's regeneration waits REGEN_SETTLE_SECONDS (a minute by default) for more changes.
    if (job?.state === "scheduled" && Date.now() - said >= 15_000) {
      said = Date.now();
      progress.message(
        `waiting for the regeneration${dueIn(job.dueAt)}: the Worker gathers a write's changes for REGEN_SETTLE_SECONDS (60 s by default) before it renders them`,
      );
    }
    // Scheduled or running: still to come (a busy machine shows it running for a while).
    if (job && job.state !== "scheduled" && job.state !== "running") {
      const last = status?.runs?.[0];
      if (job.state === "idle") {
        progress.message(`regenerated the sitemaps: ${regenerationLine(last)}`);
        return true;
      }
      progress.message(`warning: the regeneration job is ${job.state}; the records are stored, the next cron run retries it`);
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  progress.message("the regeneration is queued and still running; the sitemaps follow when it is done");
  return false;
}
