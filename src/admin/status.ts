/**
 * GET /sitemap-admin/status: the requesting site's manifest summary, the regeneration's progress
 * and its last runs, as JSON (bearer-protected by src/admin/auth.ts like every admin path).
 */
import type { RouteHandler } from "@hono/zod-openapi";
import { rangesStatus } from "../crawlers/range-status.ts";
import { crawlersStatus } from "../crawlers/status.ts";
import { searchConsoleStatus } from "../gsc/status.ts";
import type { AppEnv } from "../http/app-env.ts";
import { jobsStatus } from "../jobs/status.ts";
import { lastmodTrust } from "../lastmod/trust.ts";
import { listedShards } from "../manifest/manifest.ts";
import { mirrorStatus } from "../mirror/status.ts";
import { notificationStatus } from "../notify/notifier.ts";
import { robotsStatus } from "../robots/status.ts";
import type { Services } from "../services-type.ts";
import { ManifestPendingError } from "../sitemaps.ts";
import { DatabaseListError } from "../store/errors.ts";
import type { ProjectionState } from "../store/port.ts";
import { auditStatus } from "./audit.ts";
import { healthOf } from "./health.ts";
import { jsonResponse } from "./json.ts";
import { partitionsStatus } from "./partitions-status.ts";
import type { getStatus } from "./routes.ts";
import { syncStatus } from "./syncs.ts";

const RUNS_SHOWN = 20;

/** The status of one site: what GET /status answers and what the dashboard draws (src/admin/dashboard/). */
export async function siteStatus(s: Services, origin: string) {
  // A partitioned site whose partition has no manifest yet and is too large to walk here, or whose
  // database list does not match its partitions (shown under `partitions.databases`): none to show.
  const manifest = await s.manifests.load(origin).catch((err: unknown) => {
    if (err instanceof ManifestPendingError || err instanceof DatabaseListError) return null;
    throw err;
  });
  const progress = s.regen ? await s.regen.peek(origin) : null;
  const runs = s.regen ? await s.regen.runs(origin, RUNS_SHOWN) : [];
  const listed = manifest ? listedShards(manifest) : [];
  const sections: Record<string, { shards: number; urls: number }> = {};
  for (const shard of listed) {
    const section = (sections[shard.section] ??= { shards: 0, urls: 0 });
    section.shards++;
    section.urls += shard.urlCount;
  }
  const now = Date.now();
  // Stored gzip bytes per listed document (null: no snapshot, served live).
  const heads = [...listed.flatMap((shard) => (shard.snapshot ? [shard.snapshot] : [])), ...(manifest?.snapshot ? [manifest.snapshot] : [])];
  const sizes = s.snapshots && heads.length > 0 ? await s.snapshots.storedBytes(origin, heads) : new Map<string, number>();
  const storedBytes = (key: string | null | undefined): number | null => (key ? (sizes.get(key) ?? null) : null);
  const status = {
    site: origin,
    // Features a bad variable turned off: the variable and its rule, never the value (src/config/features.ts).
    configuration: { ok: s.config.disabled.length === 0, disabled: s.config.disabled },
    manifest: manifest && {
      version: manifest.version,
      builtAt: new Date(manifest.builtAt).toISOString(),
      // A first regeneration pass under way: what it planned so far, not served until the pass ends.
      partial: manifest.partial === true,
      shards: listed.length,
      emptyShards: manifest.shards.length - listed.length,
      urls: listed.reduce((sum, shard) => sum + shard.urlCount, 0),
      bytes: listed.reduce((sum, shard) => sum + shard.byteCount, 0),
      newestChange: listed.length > 0 ? new Date(Math.max(...listed.map((shard) => shard.lastChange))).toISOString() : null,
      snapshots: listed.filter((shard) => shard.snapshot).length,
      // Each listed shard's fill (the dashboard's bars): URLs and bytes of the uncompressed document.
      shardFill: listed.map((shard) => ({
        document: `${shard.section}-${shard.n}`,
        section: shard.section,
        urls: shard.urlCount,
        bytes: shard.byteCount,
      })),
      withoutSnapshot: listed.filter((shard) => !shard.snapshot).map((shard) => `${shard.section}-${shard.n}`),
      indexSnapshot: manifest.snapshot ?? null,
      snapshotBytes: {
        index: storedBytes(manifest.snapshot),
        ...Object.fromEntries(listed.map((shard) => [`${shard.section}-${shard.n}`, storedBytes(shard.snapshot)])),
      },
      sections,
    },
    regeneration: {
      enabled: s.regen !== null && s.snapshots !== null && s.config.regen.enabled,
      running: progress !== null && progress.leaseUntil > now,
      stateSavedAt: progress && progress.updatedAt > 0 ? new Date(progress.updatedAt).toISOString() : null,
      cursor: progress?.state.cursor ?? null,
      pendingShards: progress?.state.pending.length ?? 0,
      passPending: progress?.state.pass ?? null,
      // Documents published without a snapshot (served live) because storing it failed.
      failed: (progress?.state.failed ?? []).map((f) => ({
        document: f.document,
        error: f.error,
        attempts: f.attempts,
        failedAt: new Date(f.failedAt).toISOString(),
        retryAt: new Date(f.retryAt).toISOString(),
      })),
      limits: s.config.regen,
    },
    runs: runs.map((run) => ({ id: run.id, ok: run.ok, ...(run.summary as object) })),
    // Search-engine notification per target: last attempt / success, HTTP status, pending (docs/notify.md).
    notifications: await notificationStatus(s, origin),
    // The record store, and how far its request-path copy trails committed writes (KV: blocks still to project, docs/kv.md).
    records: { store: s.store.kind, projection: s.store.projection ? projectionStatus(await s.store.projection.status(origin)) : null },
    // Syncs under way for this site (docs/sync.md).
    syncs: await syncStatus(s.store.sync, origin),
    // Per section, over the newest changes: lastmods within a minute of their write, or in the future (src/lastmod/trust.ts).
    lastmod: await lastmodTrust(s.store, origin, now),
    // Mirrored sitemaps (docs/mirror.md): where each pass is, when it last worked, why it fails.
    mirrors: await mirrorStatus(s.mirrors, s.config.mirror.urls),
    // What Google did with each sitemap (Search Console sitemaps.list, read by the cron; src/gsc/).
    searchConsole: await searchConsoleStatus(s.gsc, s.config.notify.searchConsole !== null, origin, manifest),
    // Where robots.txt is fetched from, and a fetch that loops back into this Worker (docs/notify.md).
    robots: await robotsStatus(s.robotsLoop, s.config, origin),
    // The last 100 admin writes: who, when, what, the outcome (src/admin/audit.ts).
    audit: await auditStatus(s, origin),
    // A site over several databases: its layout and each partition's regeneration (src/partitions/); null otherwise.
    partitions: await partitionsStatus(s, origin),
    // Background jobs on the JOBS queue (docs/jobs.md): last run, usage, last error, dead-lettered.
    jobs: await jobsStatus(s, origin),
    // What verified crawlers fetched, per crawler and document, and requests that only claimed a crawler (docs/crawlers.md).
    crawlers: await crawlersStatus({
      log: s.crawlerLog,
      origin,
      names: s.config.crawlers.ranges.map((r) => r.name),
      ranges: await rangesStatus(s.crawlerRanges, s.config),
      staleDays: s.config.crawlers.staleDays,
      listed: listed.map((shard) => ({ section: shard.section, document: `${shard.section}-${shard.n}` })),
      now,
    }),
  };
  // The problems of all the above, red first, each with what to do (src/admin/health.ts; the dashboard opens with it).
  return { ...status, health: healthOf(status, now) };
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function projectionStatus(p: ProjectionState) {
  return { ...p, oldestSince: iso(p.oldestSince), nextRetryAt: iso(p.nextRetryAt) };
}

export const status: RouteHandler<typeof getStatus, AppEnv> = async (c) => jsonResponse(await siteStatus(c.var.services, c.var.origin), 200, true);
