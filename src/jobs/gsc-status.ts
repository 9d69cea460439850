/** The Search Console status job: one site's sitemaps.list read, when due (src/gsc/scheduled.ts). */
import { readSearchConsoleStatus } from "../gsc/scheduled.ts";
import { type JobHandler, forOneSite } from "./context.ts";

export const gscStatusJob: JobHandler = async (job, c) => {
  if (!c.services.config.sites.has(job.origin) || c.services.config.notify.searchConsole === null) return "off";
  const reports = await readSearchConsoleStatus([forOneSite(c.services, job.origin)], c.env, { deadline: c.deadline });
  return reports[0]?.result ?? "nothing";
};
