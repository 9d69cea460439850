/**
 * The mirror job, one per MIRROR_SITEMAPS URL and site (the message's `origin`: `mirrorTarget`): one
 * bounded step of the mirror's pass (src/mirror/scheduled.ts). A pass not yet committed continues
 * at once; a finished one (synced, unchanged or failed) goes on to the regeneration of the site
 * the mirror writes, so mirror → regenerate → notify keep their order.
 */

import { mirrorAll } from "../mirror/scheduled.ts";
import { siteOfUrl } from "../mirror/site.ts";
import type { Services } from "../services-type.ts";
import type { JobHandler } from "./context.ts";
import { MAX_STEPS, mirrorUrlOf } from "./messages.ts";

/** The services with `url` as their only mirror. */
function forOneMirror(s: Services, url: string): Services {
  return { ...s, config: { ...s.config, mirror: { ...s.config.mirror, urls: [url] } } };
}

/** The site a mirror writes: its URL's, else the one it remembered from its first records (docs/mirror.md). */
async function mirrorSite(s: Services, url: string): Promise<string | null> {
  const site = siteOfUrl(url, s.config.sites);
  if (site !== null) return site;
  const remembered = s.mirrors ? ((await s.mirrors.load(url))?.site ?? null) : null;
  return remembered !== null && s.config.sites.has(remembered) ? remembered : null;
}

export const mirrorJob: JobHandler = async (job, c) => {
  const url = mirrorUrlOf(job.origin);
  if (!c.services.config.mirror.urls.includes(url)) return "not-a-mirror";
  const outcome = (await mirrorAll([forOneMirror(c.services, url)], { deadline: c.deadline, usage: c.usage })).get(url) ?? "skipped";
  if (outcome === "in-progress") {
    if (job.step >= MAX_STEPS) return "stopped";
    c.continueWith({ delaySeconds: 0 });
    return outcome;
  }
  const site = await mirrorSite(c.services, url);
  if (site !== null) await c.scheduler.request("regenerate", site, 0, "chain");
  return outcome;
};
