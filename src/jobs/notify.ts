/**
 * The notification job: after the site's regeneration converged, tell search engines what changed
 * (src/notify/notifier.ts, its own cursors and lease: a duplicate sends nothing twice).
 */
import { anythingConfigured, notifyAfterRegeneration } from "../notify/notifier.ts";
import { type JobHandler, forOneSite } from "./context.ts";
import { MAX_STEPS } from "./messages.ts";

/** Whether any notification target is configured (else the chain ends at the regeneration). */
export const notifyConfigured = anythingConfigured;

export const notifyJob: JobHandler = async (job, c) => {
  if (!c.services.config.sites.has(job.origin) || !notifyConfigured(c.services.config)) return "off";
  // A site over several databases: each partition announces its own changes (src/jobs/partitions.ts).
  if (c.services.partitions) {
    await c.scheduler.request("notify", job.origin, 0, job.trigger);
    return "per-partition";
  }
  const report = await notifyAfterRegeneration([forOneSite(c.services, job.origin)], { leaseId: c.chain, deadline: c.deadline });
  // Stopped at the step's time budget with changes pending: the next step sends on.
  if (report.targets.some((t) => t.more) && job.step < MAX_STEPS) c.continueWith({ delaySeconds: 0 });
  return report.targets.map((t) => `${t.target}:${t.result}${t.more ? "+more" : ""}`).join(" ") || "nothing";
};
