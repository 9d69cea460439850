/**
 * The sync sweep job, once per D1 database (named by one of its sites; a site over several databases:
 * each of its partitions; or, from the registry sweep, by its binding: every bound database): the database's housekeeping (src/housekeeping/) — abandoned syncs expire,
 * finished ones are forgotten, section moves and tombstones no reader needs any more are deleted, and
 * rows of jobs whose site or mirror is no longer configured. One bounded run; when its budget ran
 * out with work left (`moreLeft`), its chain goes on at once.
 */
import { loadConfig } from "../config.ts";
import { housekeep } from "../housekeeping/housekeeping.ts";
import { describeHousekeeping } from "../housekeeping/run.ts";
import type { JobHandler } from "./context.ts";
import { MAX_STEPS, REGISTRY_TARGET } from "./messages.ts";

export const syncSweepJob: JobHandler = async (job, c) => {
  // Every configured site and mirror (the services' own config holds only this database's sites).
  const config = loadConfig(c.env);
  const mirrors = new Set(config.mirror.urls);
  // Registered sites (src/registry/) keep theirs too, and the registry's own jobs; a registered site's mirror jobs
  // are trimmed when idle (the registry sweep starts them again).
  const registered = new Set(c.sites ? (await c.sites.registry.live()).map((s) => s.origin) : []);
  // The registry's chains: its sweep and purge, and each bound database's own sweep (this one among them).
  const keepJob = (kind: string, origin: string): boolean =>
    kind === "mirror" ? mirrors.has(origin) : origin === REGISTRY_TARGET || config.sites.has(origin) || registered.has(origin);
  const report = await housekeep(c.services.partitions ?? [c.services], { keepJob, deadline: c.deadline });
  if (report.moreLeft && job.step < MAX_STEPS) c.continueWith({ delaySeconds: 0 });
  return describeHousekeeping(report);
};
