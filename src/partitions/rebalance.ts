/**
 * Growing a partitioned site: a database appended to its SITE_DATABASES list is filled by a move,
 * one bounded step at a time (the cron calls `rebalanceAll`), resumable from the layout row alone.
 *
 *  1. start: the layout's `target` becomes the configured count, and the old partitions' change
 *     feeds are marked (the catch-up's cursors). From then on a write to a loc whose home will be
 *     a new partition is applied in its old home, which serves it until the flip, and its row is
 *     forwarded to the new home (forward.ts): no write waits for the move. The copy begins at the
 *     next step, after writes that read the old layout have finished.
 *  2. copy: each old partition's rows are walked in key order, a page at a time; live rows whose
 *     new home is a new partition are put there, as stored, where the new home has no row of
 *     their loc (a forwarded write's row is never overwritten). The cursor is saved after every
 *     page, so a killed step resumes where it stopped (a page copied again changes nothing). The
 *     new partitions are not listed in the index yet; the old ones still serve every loc.
 *  3. build: each new partition's manifest is planned from its rows within the step's rows: the
 *     plan so far is kept beside the layout row (`build`, migration 0017) and the cursor walks the
 *     new partitions as it walked the old ones, so a killed step resumes from the last saved
 *     plan. A partition's finished plan is saved as its manifest, under its regeneration lease.
 *     (One walk in one step would read ~11 M rows of a 100 M site going from 8 to 9 databases:
 *     over 1,100 queries.) Rows forwarded after it are rendered by the site pass after the flip.
 *  4. catch-up: once no sync of the site is committing, the old partitions' commit-ordered feeds
 *     are read from their heads at the move's start and what reached an old home only (a commit's
 *     deletions, a write killed between its two databases) goes over, a later commit over an
 *     earlier one (catch-up.ts).
 *  5. flip, in the same step: the old partitions' manifests lose their snapshots and their
 *     validators (so no cache keeps bytes with rows that leave), under their regeneration leases;
 *     then one write of the layout row (`settled` = `target`) is the switch:
 *     from it on, the index lists the new partitions and the old ones leave the moved rows out of
 *     everything they serve (served.ts). Each loc is served by exactly one partition before the
 *     switch and after it. A site pass of every partition then renders snapshots again, and a
 *     minute later the feeds are read on from the flip's cursors for deletions that raced the switch.
 *
 * The job (src/jobs/rebalance.ts) runs the steps on the JOBS queue, then a site pass of every partition.
 *
 * The moved rows stay in the old partition, hidden: shards of an index read before the flip are
 * rendered from them for a day (pinned.ts), then later steps remove them (purge.ts). See
 * docs/capacity.md "Partitions" for what a move costs.
 */

import { Fingerprint } from "../core/fingerprint.ts";
import { type PlanProgress, newPlan, planStep } from "../manifest/build.ts";
import { forgetManifest } from "../manifest/location-cache.ts";
import type { ShardManifest } from "../manifest/manifest.ts";
import type { Lease } from "../regen/store.ts";
import type { Services } from "../services-type.ts";
import { manifestBuildOptions } from "../sitemaps.ts";
import type { CopiedRow } from "../store/port.ts";
import { AFTER_FLIP_MS, catchUp, catchUpFrom } from "./catch-up.ts";
import { copyOf } from "./forward.ts";
import { partitionOf } from "./home.ts";
import { LayoutChangedError, type PartitionLayout, homeOf, movingTo } from "./layout.ts";
import { purgeDue, purgeStep } from "./purge.ts";

/** Rows read per page of the copy: one query of the D1 scan (src/adapters/d1/scan.ts), none read and dropped. */
const PAGE_ROWS = 5_000;
/** Rows read per step at most (the job's invocation): the copy's and the manifest build's together. */
const STEP_ROWS = 50_000;
/**
 * A step takes no new page once its invocation has used this many service calls (of the shared 1,000): a page of
 * the copy or the catch-up costs a few (rows go as JSON, 500 a statement: src/adapters/d1/row-copy.ts).
 */
const INVOCATION_SHARE = 500;
/** The leases the flip takes outlive it by far. */
const FLIP_LEASE_MS = 5 * 60_000;

export interface RebalanceStep {
  origin: string;
  /**
   * settled: nothing to do; started: the move began; copying: copied this step, more to do;
   * building: planned new partitions' manifests this step, more to do; catching-up: read the old
   * partitions' changes since the move's start (catch-up.ts), more to read, before the flip or
   * after it; waiting: a regeneration holds a lease, or a sync is committing: the build's save or
   * the flip waits; flipped: the move is done; caught-up: its last catch-up is done; purging /
   * purged: the rows the last move left behind are being removed / are gone (purge.ts).
   */
  state: "settled" | "started" | "copying" | "building" | "catching-up" | "waiting" | "flipped" | "caught-up" | "purging" | "purged" | "refused";
  settled: number;
  target: number;
  rowsRead: number;
  copied: number;
  /** Rows the purge removed in this step. */
  removed: number;
  /** What a `waiting` step waits for (status shows it as the job's outcome); null otherwise. */
  waitingFor: string | null;
}

/** One page of an old partition after the cursor: copies its moving live rows where their new home has none. */
async function copyPage(parts: readonly Services[], origin: string, layout: PartitionLayout): Promise<{ read: number; copied: number }> {
  const cursor = layout.cursor!;
  const page = await copyOf(parts[cursor.partition]!.store).page(origin, { section: cursor.section, key: cursor.key }, PAGE_ROWS);
  if (page.length === 0) {
    layout.cursor = { partition: cursor.partition + 1, section: "", key: -1 };
    return { read: 0, copied: 0 };
  }
  // A tombstone is not copied: a loc the new home lacks is not served from it. Nor is a row an
  // earlier move left behind here (hidden until purged, maybe stale): only the one its home serves.
  const from = cursor.partition;
  const byTarget = new Map<number, CopiedRow[]>();
  // Every row of the page this partition gives away, tombstones too: marked here after the copy, hidden from the flip on (migration 0025).
  const leaving: number[] = [];
  for (const row of page) {
    const to = homeOf(row.loc, layout) !== from ? null : movingTo(row.loc, layout);
    if (to === null) continue;
    leaving.push(row.key);
    if (row.deleted) continue;
    const group = byTarget.get(to);
    if (group) group.push(row);
    else byTarget.set(to, [row]);
  }
  for (const [to, rows] of byTarget) await copyOf(parts[to]!.store).put(rows, "missing");
  await copyOf(parts[from]!.store).markMoved(leaving, layout.target);
  const last = page[page.length - 1]!;
  layout.cursor = { partition: cursor.partition, section: last.section, key: last.key };
  return { read: page.length, copied: [...byTarget.values()].reduce((n, g) => n + g.length, 0) };
}

/**
 * A manifest whose shards render live and uncached until the partition's next run: their rows are
 * about to change what they serve. `moved`: per shard, the live rows the move took away, no longer
 * counted here (status counts served URLs only: the new home's manifest counts them now).
 */
function withoutSnapshots(manifest: ShardManifest, moved: readonly number[], now: number): ShardManifest {
  return {
    ...manifest,
    // Checked before a live render (src/http/sitemap-documents.ts): every range counts as changed, so nothing is cached.
    builtAt: 0,
    snapshot: null,
    shards: manifest.shards.map(({ pageStarts: _, ...s }, i) => ({
      ...s,
      urlCount: Math.max(0, s.urlCount - (moved[i] ?? 0)),
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

/**
 * Whether a sync of the site is deleting what its input lacked (its commit under way), in any
 * partition, asked of each part: a part moves on only once the site's guard passed, and the
 * commit's next call moves the rest on (src/partitions/sync.ts), so a part committing is a
 * commit under way whatever its siblings say.
 */
async function syncCommitting(parts: readonly Services[], origin: string): Promise<string | null> {
  const syncs = await Promise.all(parts.map((part) => part.store.sync?.active(origin) ?? []));
  const committing = syncs.flat().find((sync) => sync.state === "committing");
  return committing ? `a sync's commit (part ${committing.id}, started ${new Date(committing.startedAt).toISOString()}) to end` : null;
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
      if (!manifest) continue;
      const moved = await copyOf(part.store).movedCounts(origin, manifest.shards, layout.target);
      await part.manifests.save(withoutSnapshots(manifest, moved, now));
    }
    // What the old partitions gave away is removed once no crawl can need it (purge.ts), from the start.
    const partitionedAt = layout.settled === 1 ? now : layout.partitionedAt;
    await site.layouts!.save(
      { ...layout, settled: layout.target, flippedAt: now, flippedFrom: layout.settled, partitionedAt, cursor: null, purgeCursor: null },
      now,
    );
    await forgetManifest({ origin, registeredAt: site.registeredAt }).catch(() => {});
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
  options: { maxRows?: number; now?: number; deadline?: number; usage?: () => { serviceCalls: number } } = {},
): Promise<RebalanceStep> {
  const parts = site.partitions!;
  const now = options.now ?? Date.now();
  const maxRows = options.maxRows ?? STEP_ROWS;
  const inTime = (): boolean => {
    if (options.deadline !== undefined && Date.now() >= options.deadline) return false;
    const used = options.usage?.();
    return used === undefined || used.serviceCalls < INVOCATION_SHARE;
  };
  const layout = await site.layouts!.read();
  const result = (state: RebalanceStep["state"], rowsRead = 0, copied = 0, removed = 0, waitingFor: string | null = null): RebalanceStep => ({
    origin,
    state,
    settled: layout.settled,
    target: layout.target,
    rowsRead,
    copied,
    removed,
    waitingFor,
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
  const stores = parts.map((p) => p.store);
  if (layout.settled === layout.target) {
    // A minute after a flip, what writes that read the layout before it left in old partitions goes over (deletions).
    if (layout.catchUp !== null && layout.flippedAt !== null && layout.flippedFrom !== null) {
      // Not yet: the rebalance chain's next step comes when it is due, or the next heartbeat's (a
      // database appended meanwhile waits for it: the next move's catch-up reads other feeds).
      if (now - layout.flippedAt < AFTER_FLIP_MS) {
        return parts.length > layout.settled ? result("waiting", 0, 0, 0, "the last move's catch-up, a minute after its flip") : result("settled");
      }
      const from = layout.flippedFrom;
      const caught = await catchUp(stores, origin, layout.catchUp, {
        goesTo: (loc, p) => {
          const home = partitionOf(loc, layout.settled);
          return home >= from && home !== p ? home : null;
        },
        deletionsOnly: true,
        target: layout.settled,
        maxRows,
        inTime,
        save: () => site.layouts!.save(layout, now),
        now,
      });
      if (!caught.done) return result("catching-up", caught.read);
      // A sync whose commit began before the flip may still be deleting in old partitions (sync.ts lets it finish): read on until it ends.
      const commit = await syncCommitting(parts.slice(0, from), origin);
      if (commit) return result("waiting", caught.read, caught.written, 0, commit);
      layout.catchUp = null;
      await site.layouts!.save(layout, now);
      return result("caught-up", caught.read, caught.written);
    }
    if (parts.length === layout.settled) {
      if (!purgeDue(layout, now)) return result("settled");
      const purged = await purgeStep(parts, origin, layout, now, maxRows, () => site.layouts!.save(layout, now), options.deadline);
      return result(purged.done ? "purged" : "purging", purged.read, 0, purged.removed);
    }
    layout.target = parts.length;
    layout.cursor = { partition: 0, section: "", key: -1 };
    layout.catchUp = await catchUpFrom(stores.slice(0, layout.settled));
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
    const page = await copyPage(parts, origin, layout);
    await site.layouts!.save(layout, now);
    rowsRead += page.read;
    copied += page.copied;
  }
  if (layout.cursor!.partition < layout.settled) return result("copying", rowsRead, copied);
  // The copy is done and nothing else writes to the new partitions: their manifests are planned now, step by step.
  while (layout.cursor!.partition < layout.target && rowsRead < maxRows && inTime()) {
    const built = await buildStep(site, parts, origin, layout, maxRows - rowsRead, now, options.deadline);
    rowsRead += built.read;
    if (built.waiting) return result("waiting", rowsRead, copied, 0, "a new partition's regeneration lease (its manifest is saved under it)");
  }
  if (layout.cursor!.partition < layout.target) return result("building", rowsRead, copied);
  // A sync's commit deletes in old partitions only: the flip waits for it to end, so the catch-up sees all it deleted.
  const commit = await syncCommitting(parts.slice(0, layout.settled), origin);
  if (commit) return result("waiting", rowsRead, copied, 0, commit);
  // Layouts whose move began before the catch-up existed read every numbered change of the old partitions.
  layout.catchUp ??= Array.from({ length: layout.settled }, () => 0);
  const caught = await catchUp(stores, origin, layout.catchUp, {
    goesTo: (loc: string, p: number) => (homeOf(loc, layout) === p ? movingTo(loc, layout) : null),
    deletionsOnly: false,
    target: layout.target,
    inTime,
    now,
    maxRows: Math.max(0, maxRows - rowsRead),
    save: () => site.layouts!.save(layout, now),
  });
  rowsRead += caught.read;
  if (!caught.done) return result("catching-up", rowsRead, copied);
  // Once more, right before the switch: a commit that began during the catch-up (it checked the
  // layout before this step did) waits for the next step; one that begins after it is read by the
  // catch-up after the flip, which reads on from the cursors saved here while any commit is under way.
  const lastCommit = await syncCommitting(parts.slice(0, layout.settled), origin);
  if (lastCommit) return result("waiting", rowsRead, copied, 0, lastCommit);
  if (!(await flip(site, parts, origin, layout, now)))
    return result("waiting", rowsRead, copied, 0, "an old partition's regeneration lease (the flip takes them all)");
  // The caller runs a site pass of every partition next (src/jobs/rebalance.ts): snapshots again.
  return { ...result("flipped", rowsRead, copied), settled: layout.target };
}
