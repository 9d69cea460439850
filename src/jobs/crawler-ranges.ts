/**
 * The crawlers' published IP ranges job, one per deployment (src/jobs/heartbeat.ts), queued at every
 * heartbeat: it fetches only the lists that are missing or were checked a day ago or more
 * (src/crawlers/refresh.ts), so the first heartbeat fills them and they are renewed daily. A list
 * that fails keeps its previous prefixes and the job still succeeds; a KV failure throws (retried).
 */
import { describeRefresh, refreshCrawlerRanges } from "../crawlers/refresh.ts";
import type { JobHandler } from "./context.ts";

export const crawlerRangesJob: JobHandler = async (_job, c) => {
  const store = c.services.crawlerRanges;
  const ranges = c.services.config.crawlers.ranges;
  if (store === null || ranges.length === 0) return "off";
  return describeRefresh(await refreshCrawlerRanges(store, ranges));
};
