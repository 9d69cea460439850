/**
 * Growing a partitioned site: a database appended to its SITE_DATABASES list is filled by a move,
 * one bounded step at a time (the cron calls `rebalanceAll`), resumable from the layout row alone.
 *
 *  1. start: the layout's `target` becomes the configured count. From then on a write touching a
 *     loc whose home will be a new partition is refused (503, nothing written), so what is copied
 *     stays what the old partition serves. The copy begins at the next step, after writes that
 *     read the old layout have finished.
 *  2. copy: each old partition's rows are walked in key order, a page at a time; live rows whose
 *     new home is a new partition are upserted there. The cursor is saved after every page, so a
 *     killed step resumes where it stopped (upserting a page again changes nothing). The new
 *     partitions are not listed in the index yet; the old ones still serve every loc.
 *  3. build: each new partition's manifest is planned from its rows (which only the copy wrote,
 *     and nothing writes now), within the step's rows: the plan so far is kept beside the layout
 *     row (`build`, migration 0017) and the cursor walks the new partitions as it walked the old
 *     ones, so a killed step resumes from the last saved plan. A partition's finished plan is
 *     saved as its manifest, under its regeneration lease. (One walk in one step would read
 *     ~11 M rows of a 100 M site going from 8 to 9 databases: over 1,100 queries.)
 *  4. flip: the old partitions' manifests lose their snapshots and their validators (so no cache
 *     keeps bytes with rows that leave), under their regeneration leases; then one write of the
 *     layout row (`settled` = `target`) is the switch:
 *     from it on, the index lists the new partitions and the old ones leave the moved rows out of
 *     everything they serve (served.ts). Each loc is served by exactly one partition before the
 *     switch and after it. A site pass of every partition then renders snapshots again.
 *
 * The job (src/jobs/rebalance.ts) runs the steps on the JOBS queue, then a site pass of every partition.
 *
 * The moved rows stay in the old partition, hidden: shards of an index read before the flip are
 * rendered from them for a day (pinned.ts), then later steps remove them (purge.ts). See
 * docs/capacity.md "Partitions" for what a move costs.
 */

import { Fingerprint } from "../core/fingerprint.ts";
import type { ValidRecord } from "../core/validate.ts";
import { type PlanProgress, newPlan, planStep } from "../manifest/build.ts";
import { forgetManifest } from "../manifest/location-cache.ts";
import type { ShardManifest } from "../manifest/manifest.ts";
import type { Lease } from "../regen/store.ts";
import type { Services } from "../services-type.ts";
import { manifestBuildOptions } from "../sitemaps.ts";
import type { ScannedRecord } from "../store/port.ts";
import { partitionOf } from "./home.ts";
import { LayoutChangedError, type PartitionLayout, isMoving } from "./layout.ts";
import { purgeDue, purgeStep } from "./purge.ts";

/** Rows read per page of the copy: one query of the D1 scan (src/adapters/d1/scan.ts), none read and dropped. */
const PAGE_ROWS = 5_000;
/** Records per upsert into the new partition. */
const WRITE_ROWS = 1_000;
/** Rows read per step at most (the job's invocation): the copy's and the manifest build's together. */
const STEP_ROWS = 50_000;
/**
 * A step takes no new page once its invocation has used this many D1 queries (of 1,000): a page of
 * the copy writes up to half its 5,000 rows (a move from one database to two), ~330 statements.
 */
const INVOCATION_SHARE = 500;
/** The leases the flip takes outlive it by far. */
const FLIP_LEASE_MS = 5 * 60_000;

export interface RebalanceStep {
  origin: string;
  /**
   * settled: nothing to do; started: the move began; copying: copied this step, more to do;
   * building: planned new partitions' manifests this step, more to do; waiting: a regeneration
   * holds a lease, the build's save or the flip waits; flipped: the move is done; purging /
   * purged: the rows the last move left behind are being removed / are gone (purge.ts).
   */
  state: "settled" | "started" | "copying" | "building" | "waiting" | "flipped" | "purging" | "purged" | "refused";
  settled: number;
  target: number;
  rowsRead: number;
  copied: number;
  /** Rows the purge removed in this step. */
  removed: number;
}

const recordOf = (origin: string, r: ScannedRecord): ValidRecord => ({
  origin,
  loc: r.loc,
  section: r.section,
  lastmod: r.lastmod ?? null,
  changefreq: r.changefreq ?? null,
  priority: r.priority ?? null,
  ...(r.ext ? { ext: r.ext } : {}),
});

/** One page of an old partition after the cursor: copies its moving rows; false when the partition is done. */
async function copyPage(parts: readonly Services[], origin: string, layout: PartitionLayout, now: number): Promise<{ read: number; copied: number }> {
  const cursor = layout.cursor!;
  const scan = parts[cursor.partition]!.store.scan;
  if (!scan) throw new Error("a partitioned site's store must scan its rows (D1)");
  const page: ScannedRecord[] = [];
  for await (const row of scan.scan(origin, { section: cursor.section, key: cursor.key + 1 }, null)) {
    page.push(row);
    if (page.length >= PAGE_ROWS) break;
  }
  if (page.length === 0) {
    layout.cursor = { partition: cursor.partition + 1, section: "", key: -1 };
    return { read: 0, copied: 0 };
  }
  const groups = new Map<number, ValidRecord[]>();
  for (const row of page) {
    if (row.deleted || !isMoving(row.loc, layout)) continue;
    const to = partitionOf(row.loc, layout.target);
    let group = groups.get(to);
    if (!group) groups.set(to, (group = []));
    group.push(recordOf(origin, row));
  }
  for (const [to, records] of groups) {
    const copy = parts[to]!.store.copy;
    if (!copy) throw new Error("a partitioned site's store must take a move's copy (D1)");
    for (let i = 0; i < records.length; i += WRITE_ROWS) await copy.insertMissing(records.slice(i, i + WRITE_ROWS), now);
  }
  const last = page[page.length - 1]!;
  layout.cursor = { partition: cursor.partition, section: last.section, key: last.key };
  return { read: page.length, copied: [...groups.values()].reduce((n, g) => n + g.length, 0) };
}

/** A manifest whose shards render live and uncached until the partition's next run: their rows are about to change what they serve. */
function withoutSnapshots(manifest: ShardManifest, now: number): ShardManifest {
  return {
    ...manifest,
    // Checked before a live render (src/http/sitemap-documents.ts): every range counts as changed, so nothing is cached.
    builtAt: 0,
    snapshot: null,
    shards: manifest.shards.map(({ pageStarts: _, ...s }) => ({
      ...s,
      snapshot: null,
      version: new Fingerprint().addString(s.version).addString("moved").addNumber(now).digest(),
    })),
  };
}

/**
 * Saves a new partition's planned manifest, under its regeneration lease (false: a run holds it;
 * the next step tries again). A manifest a run of its own published meanwhile (the heartbeat
 * regenerates every partition, a new one too) is replaced: its snapshots are collected later.
 */
async function publishBuilt(part: Services, origin: string, manifest: ShardManifest, now: number): Promise<boolean> {
  const lease = part.regen ? await part.regen.acquire(origin, now, FLIP_LEASE_MS) : null;
  if (part.regen && !lease) return false;
  try {
    const replaced = await part.manifests.load(origin);
    await part.manifests.save(manifest);
    const orphans = replaced ? [replaced.snapshot, ...replaced.shards.map((s) => s.snapshot)].filter((k): k is string => !!k) : [];
    if (part.regen && orphans.length > 0) await part.regen.supersede(origin, [...new Set(orphans)], now);
  } finally {
    if (lease) await part.regen!.release(origin, lease);
  }
  return true;
}

/**
 * One step of the new partitions' manifest build, on the partition the cursor is on, within
 * `maxRows` rows: plans from where the last step stopped (the plan kept beside the layout), saves
 * the plan, or, once the partition's rows have run out, its manifest, then moves the cursor on.
 */
async function buildStep(
  site: Services,
  parts: readonly Services[],
  origin: string,
  layout: PartitionLayout,
  maxRows: number,
  now: number,
  deadline: number | undefined,
): Promise<{ read: number; waiting: boolean }> {
  const q = layout.cursor!.partition;
  const part = parts[q]!;
  const scan = part.store.scan;
  if (!scan) throw new Error("a partitioned site's store must scan its rows (D1)");
  const saved = await site.layouts!.loadBuild();
  const plan: PlanProgress = saved?.partition === q ? saved.plan : newPlan(now);
  const { manifest, rows } = await planStep(scan, origin, plan, manifestBuildOptions(part.config, origin), maxRows, deadline);
  const at = plan.after ? { partition: q, section: plan.after.section, key: plan.after.key } : layout.cursor!;
  if (!manifest || !(await publishBuilt(part, origin, manifest, now))) {
    layout.cursor = at;
    await site.layouts!.saveBuild(layout, { partition: q, plan }, now);
    return { read: rows, waiting: manifest !== null };
  }
  layout.cursor = { partition: q + 1, section: "", key: -1 };
  await site.layouts!.saveBuild(layout, null, now);
  return { read: rows, waiting: false };
}

async function flip(site: Services, parts: readonly Services[], origin: string, layout: PartitionLayout, now: number): Promise<boolean> {
  const leases: [Services, Lease][] = [];
  try {
    for (const part of parts.slice(0, layout.settled)) {
      const lease = part.regen ? await part.regen.acquire(origin, now, FLIP_LEASE_MS) : null;
      if (part.regen && !lease) return false;
      if (lease) leases.push([part, lease]);
    }
    for (const part of parts.slice(0, layout.settled)) {
      const manifest = await part.manifests.load(origin);
      if (manifest) await part.manifests.save(withoutSnapshots(manifest, now));
    }
    // What the old partitions gave away is removed once no crawl can need it (purge.ts), from the start.
    await site.layouts!.save({ ...layout, settled: layout.target, flippedAt: now, flippedFrom: layout.settled, cursor: null, purgeCursor: null }, now);
    await forgetManifest(origin).catch(() => {});
  } finally {
    for (const [part, lease] of leases) await part.regen!.release(origin, lease);
  }
  return true;
}

/**
 * One step of the site's move, if any: at most `maxRows` rows read (STEP_ROWS), and no new page
 * begun after `deadline` (ms, wall clock: the job's time budget). Throws what its stores throw;
 * the next step resumes.
 */
export async function rebalanceStep(
  site: Services,
  origin: string,
  options: { maxRows?: number; now?: number; deadline?: number; usage?: () => { d1Queries: number; kvOperations: number } } = {},
): Promise<RebalanceStep> {
  const parts = site.partitions!;
  const now = options.now ?? Date.now();
  const maxRows = options.maxRows ?? STEP_ROWS;
  const inTime = (): boolean => {
    if (options.deadline !== undefined && Date.now() >= options.deadline) return false;
    const used = options.usage?.();
    return used === undefined || (used.d1Queries < INVOCATION_SHARE && used.kvOperations < INVOCATION_SHARE);
  };
  const layout = await site.layouts!.read();
  const result = (state: RebalanceStep["state"], rowsRead = 0, copied = 0, removed = 0): RebalanceStep => ({
    origin,
    state,
    settled: layout.settled,
    target: layout.target,
    rowsRead,
    copied,
    removed,
  });
  if (parts.length < layout.target) {
    console.error(
      JSON.stringify({
        event: "sitemap.partitions.refused",
        origin,
        reason: "a database of the site was removed from SITE_DATABASES: its records would be lost",
        layout,
      }),
    );
    return result("refused");
  }
  if (layout.settled === layout.target) {
    if (parts.length === layout.settled) {
      if (!purgeDue(layout, now)) return result("settled");
      const purged = await purgeStep(parts, origin, layout, now, maxRows, () => site.layouts!.save(layout, now), options.deadline);
      return result(purged.done ? "purged" : "purging", purged.read, 0, purged.removed);
    }
    layout.target = parts.length;
    layout.cursor = { partition: 0, section: "", key: -1 };
    await site.layouts!.save(layout, now);
    return result("started");
  }
  let rowsRead = 0;
  let copied = 0;
  while (layout.cursor!.partition < layout.settled && rowsRead < maxRows && inTime()) {
    // Before every page, the layout this step holds must still be the saved one (one small read): a
    // step overtaken by another stops here rather than copy a page the other already passed.
    if ((await site.layouts!.read()).version !== layout.version) {
      throw new LayoutChangedError(`the layout of ${origin} was saved by another step since this one read it: this step stops`);
    }
    const page = await copyPage(parts, origin, layout, now);
    await site.layouts!.save(layout, now);
    rowsRead += page.read;
    copied += page.copied;
  }
  if (layout.cursor!.partition < layout.settled) return result("copying", rowsRead, copied);
  // The copy is done and nothing else writes to the new partitions: their manifests are planned now, step by step.
  while (layout.cursor!.partition < layout.target && rowsRead < maxRows && inTime()) {
    const built = await buildStep(site, parts, origin, layout, maxRows - rowsRead, now, options.deadline);
    rowsRead += built.read;
    if (built.waiting) return result("waiting", rowsRead, copied);
  }
  if (layout.cursor!.partition < layout.target) return result("building", rowsRead, copied);
  if (!(await flip(site, parts, origin, layout, now))) return result("waiting", rowsRead, copied);
  // The caller runs a site pass of every partition next (src/jobs/rebalance.ts): snapshots again.
  return { ...result("flipped", rowsRead, copied), settled: layout.target };
}
