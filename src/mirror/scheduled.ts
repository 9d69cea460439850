/** The cron entry of mirrors: every MIRROR_SITEMAPS URL, within one record budget per run. Never throws. */
import type { Services } from "../services-type.ts";
import { shownUrl } from "./failure.ts";
import { type MirrorOutcome, runMirror } from "./run.ts";
import { newMirrorState } from "./store.ts";

/**
 * The database a mirror writes to: the one serving its URL's origin when that is a configured
 * site, else the default one (SITE_DATABASES). Records for sites of another database are rejected
 * there and counted.
 */
function ownerOf(url: string, databases: readonly Services[]): Services | undefined {
  const origin = new URL(url).origin;
  return databases.find((s) => s.config.sites.has(origin)) ?? databases[0];
}

/** Mirrors every MIRROR_SITEMAPS URL into the database of its site (one services object per D1 database). */
export async function mirrorAll(databases: readonly Services[], now = Date.now()): Promise<Map<string, MirrorOutcome>> {
  const outcomes = new Map<string, MirrorOutcome>();
  const urls = databases[0]?.config.mirror.urls ?? [];
  const budget = { records: databases[0]?.config.mirror.maxRecordsPerRun ?? 0 };
  for (const url of urls) {
    const s = ownerOf(url, databases);
    if (!s?.mirrors) continue; // no D1 binding: nowhere to keep a mirror's state
    try {
      if (s.store.sync === null) {
        const state = (await s.mirrors.load(url)) ?? newMirrorState(url);
        await s.mirrors.save({ ...state, checkedAt: now, error: "mirrors need the D1 record source (URL_SOURCE=d1)", errorAt: now });
        outcomes.set(url, "failed");
        continue;
      }
      const outcome = await runMirror({ config: s.config, sync: s.store.sync, state: s.mirrors }, url, budget, now);
      outcomes.set(url, outcome);
      console.log(JSON.stringify({ event: "sitemap.mirror", url: shownUrl(url), outcome, budgetLeft: budget.records }));
    } catch (err) {
      console.error("mirror failed", shownUrl(url), err instanceof Error ? err.message : err);
      outcomes.set(url, "failed");
    }
  }
  return outcomes;
}
