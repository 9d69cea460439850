/**
 * The regeneration job: one bounded run of a site (src/regen/regenerate.ts). Work left (pending
 * shards, a site pass under way) continues the chain at once, so one trigger takes the site all
 * the way to converged; once nothing is left, the chain goes on to the notification job.
 *
 * At-least-once: a duplicate delivery is a no-op before it runs (the consumer's chain check); a
 * write that lands while the chain runs makes it run once more. The site's lease is named by the
 * chain, so the retry of a step killed mid-run takes it back at once; a lease held by something
 * else (a move's flip) makes the chain look again after BUSY_RETRY_SECONDS.
 */
import { RegenBusyError } from "../regen/lease.ts";
import { purgeChanged } from "../regen/purge.ts";
import { regenerateSite } from "../regen/regenerate.ts";
import { regenDeps } from "../regen/scheduled.ts";
import type { RunSummary } from "../regen/summary.ts";
import type { JobHandler } from "./context.ts";
import { MAX_STEPS } from "./messages.ts";
import { notifyConfigured } from "./notify.ts";

/** A job that finds the site's lease held by another holder looks again this much later. */
const BUSY_RETRY_SECONDS = 15;

/** Whether the run left work a next run can do now (failed documents wait for their retry time). */
function workLeft(summary: RunSummary): boolean {
  return summary.pendingShards > 0 || summary.passPending || (summary.mode === "walk" && !summary.converged && summary.failed.length === 0);
}

export const regenerateJob: JobHandler = async (job, c) => {
  const s = c.services;
  // A site over several databases: one chain per partition (src/jobs/partitions.ts), each with its own lease and feed.
  if (s.partitions) {
    await c.scheduler.request("regenerate", job.origin, 0, job.trigger, job.full ? { full: true } : {});
    return "per-partition";
  }
  const deps = regenDeps(s);
  if (!deps) return "off";
  if (!s.config.sites.has(job.origin)) return "not-a-site";
  let summary: RunSummary;
  try {
    summary = await regenerateSite(deps, job.origin, {
      trigger: job.trigger,
      ...(job.full ? { full: true } : {}),
      onPublished: purgeChanged(c.ctx, job.origin),
      usage: c.usage,
      leaseId: c.chain,
      deadline: c.deadline,
    });
  } catch (err) {
    if (!(err instanceof RegenBusyError)) throw err;
    c.continueWith({ delaySeconds: BUSY_RETRY_SECONDS, ...(job.full ? { full: true } : {}) });
    return "busy";
  }
  if (workLeft(summary)) {
    if (job.step >= MAX_STEPS) {
      console.error(JSON.stringify({ event: "sitemap.job.stopped", kind: "regenerate", origin: job.origin, steps: job.step }));
      return "stopped";
    }
    c.continueWith({ delaySeconds: 0 });
    return "continued";
  }
  if (notifyConfigured(s.config)) await c.scheduler.request("notify", job.origin, 0, "chain");
  return summary.converged ? "converged" : "waiting";
};
