/**
 * A status document as `siteStatus` answers it (src/admin/status.ts), built in memory for the
 * dashboard's layout tests: a site of many shards, a full trail of runs, audit rows, Search Console
 * reports per shard, crawlers with a 404 given to Googlebot. Its `health` is computed by the real
 * rules (src/admin/health.ts). Used by test/workers/dashboard-health.test.ts and, in Chromium, by
 * test/node/dashboard-health.test.ts.
 */

import type { DashboardStatus } from "../../../src/admin/dashboard/status-type.ts";
import { type HealthInput, healthOf } from "../../../src/admin/health.ts";
import type { CrawlersStatus } from "../../../src/crawlers/types.ts";

export interface SyntheticOptions {
  site?: string;
  /** Shards per section, in order. */
  sections?: Record<string, number>;
  urlsPerShard?: number;
  now?: number;
  /** The crawler log; null: none (no DB). */
  crawlers?: CrawlersStatus | null;
  /** Search Console reports one row per listed shard (the worst case for its table). */
  gscPerShard?: boolean;
  audit?: number;
  runs?: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** Googlebot, verified, fetched the index and two shards of the first section, and one shard past its end: 404. */
function crawlersWith404(sections: Record<string, number>, now: number): CrawlersStatus {
  const [first, shards] = Object.entries(sections)[0] ?? ["pages", 1];
  const fetch = (document: string, path: string, ago: number, status: number) => ({
    document,
    path,
    at: iso(now - ago),
    status,
    bytes: status === 200 ? 9_000 : 0,
    source: status === 200 ? "snapshot" : null,
  });
  const gone = fetch(`${first}-${shards + 1}`, `/sitemap-${first}-${shards + 1}.xml`, 60_000, 404);
  const listed = Object.entries(sections);
  return {
    enabled: true,
    staleDays: 14,
    since: new Date(Date.now() - 30 * 86400_000).toISOString(),
    ranges: [
      {
        name: "googlebot",
        url: "https://developers.google.com/static/search/apis/ipranges/googlebot.json",
        prefixes: 312,
        refused: [],
        fetchedAt: iso(now - 3_600_000),
        checkedAt: iso(now - 3_600_000),
        error: null,
      },
      {
        name: "bingbot",
        url: "https://www.bing.com/toolbox/bingbot.json",
        prefixes: 28,
        refused: [],
        fetchedAt: iso(now - 3_600_000),
        checkedAt: iso(now - 3_600_000),
        error: null,
      },
    ],
    crawlers: [
      {
        name: "googlebot",
        requests: { verified24h: 4, verified7d: 4, unverified24h: 2_000, unverified7d: 2_000 },
        index: fetch("index", "/sitemap.xml", 240_000, 200),
        robots: fetch("robots.txt", "/robots.txt", 300_000, 200),
        sections: listed.map(([section, n], i) => ({
          section,
          shards: n,
          fetched: i === 0 ? 2 : 0,
          last: i === 0 ? fetch(`${section}-2`, `/sitemap-${section}-2.xml.gz`, 120_000, 200) : null,
        })),
        errors: [gone],
        documents: [gone, fetch(`${first}-2`, `/sitemap-${first}-2.xml.gz`, 120_000, 200), fetch(`${first}-1`, `/sitemap-${first}-1.xml`, 180_000, 200)],
      },
      {
        name: "bingbot",
        requests: { verified24h: 0, verified7d: 0, unverified24h: 0, unverified7d: 0 },
        index: null,
        robots: null,
        sections: listed.map(([section, n]) => ({ section, shards: n, fetched: 0, last: null })),
        errors: [],
        documents: [],
      },
    ],
    stale: {
      count: listed.reduce((sum, [, n]) => sum + n, 0) - 2,
      documents: listed.flatMap(([section, n]) => Array.from({ length: n }, (_, i) => `${section}-${i + 1}`)).slice(2, 52),
    },
  };
}

export function syntheticStatus(o: SyntheticOptions = {}): DashboardStatus {
  const site = o.site ?? "https://www.example.com";
  const now = o.now ?? Date.UTC(2026, 2, 1, 12);
  const sections = o.sections ?? { pages: 420, products: 630, blog: 210 };
  const perShard = o.urlsPerShard ?? 100;
  const fill = Object.entries(sections).flatMap(([section, n]) =>
    Array.from({ length: n }, (_, i) => ({
      document: `${section}-${i + 1}`,
      section,
      urls: i === n - 1 ? perShard / 2 : perShard,
      bytes: perShard * 120,
    })),
  );
  const crawlers = o.crawlers === undefined ? crawlersWith404(sections, now) : o.crawlers;
  const runs = Array.from({ length: o.runs ?? 20 }, (_, i) => ({
    id: 100 - i,
    ok: i !== 3,
    startedAt: iso(now - i * 3_600_000),
    trigger: i % 2 ? "cron" : "write",
    durationMs: 800 + i * 37,
    rowsRead: 1_000 + i * 11,
    shardsRendered: 3 + (i % 4),
  }));
  const status = {
    site,
    configuration: { ok: true, disabled: [] },
    manifest: {
      version: 42,
      builtAt: iso(now - 600_000),
      partial: false,
      shards: fill.length,
      emptyShards: 0,
      urls: fill.reduce((sum, f) => sum + f.urls, 0),
      bytes: fill.reduce((sum, f) => sum + f.bytes, 0),
      newestChange: iso(now - 700_000),
      snapshots: fill.length,
      shardFill: fill,
      withoutSnapshot: [],
      indexSnapshot: "snap/index",
      snapshotBytes: { index: 30_000, ...Object.fromEntries(fill.map((f) => [f.document, 1_800])) },
      sections: Object.fromEntries(
        Object.entries(sections).map(([name]) => {
          const own = fill.filter((f) => f.section === name);
          return [name, { shards: own.length, urls: own.reduce((sum, f) => sum + f.urls, 0) }];
        }),
      ),
    },
    regeneration: {
      enabled: true,
      running: false,
      stateSavedAt: iso(now - 600_000),
      cursor: "c",
      pendingShards: 0,
      passPending: null,
      failed: [],
      limits: { enabled: true },
    },
    runs,
    notifications: [
      {
        target: "indexnow",
        lastAttempt: iso(now - 600_000),
        lastSuccess: iso(now - 600_000),
        httpStatus: 200,
        pending: 0,
        failures: 0,
        nextAttempt: null,
        retired: false,
        lastError: null,
      },
      {
        target: "search-console",
        lastAttempt: iso(now - 600_000),
        lastSuccess: iso(now - 600_000),
        httpStatus: 200,
        pending: 0,
        failures: 0,
        nextAttempt: null,
        retired: false,
        lastError: null,
      },
    ],
    records: { store: "d1", projection: null },
    syncs: [],
    lastmod: { sections: Object.keys(sections).map((name) => ({ name, sampled: 300, sameMinuteAsWrite: 12, future: 0 })) },
    mirrors: [],
    searchConsole: {
      enabled: true,
      lastRead: iso(now - 3_600_000),
      lastSuccess: iso(now - 3_600_000),
      httpStatus: 200,
      lastError: null,
      nextAttempt: null,
      dropped: 0,
      sitemaps: [`${site}/sitemap.xml`, ...(o.gscPerShard === false ? [] : fill.map((f) => `${site}/sitemap-${f.document}.xml`))].map((path, i) => ({
        path,
        lastSubmitted: iso(now - 86_400_000),
        lastDownloaded: iso(now - 43_200_000),
        isPending: false,
        isSitemapsIndex: i === 0,
        errors: 0,
        warnings: 0,
        submitted: i === 0 ? fill.length * perShard : perShard,
        contents: [{ type: "web", submitted: perShard }],
        changedAt: iso(now - 700_000),
        notDownloadedSinceChange: false,
        hasErrors: false,
        own: true,
      })),
    },
    robots: { originUrl: `${site}/robots-origin.txt`, loop: "none", loopLastSeenAt: null, problem: null },
    audit: {
      store: "d1",
      entries: Array.from({ length: o.audit ?? 100 }, (_, i) => ({
        at: iso(now - i * 60_000),
        who: "token",
        method: "PUT",
        resource: "/sitemap-admin/urls",
        records: 500,
        status: 200,
      })),
      refused: [{ minute: iso(now - 120_000), reason: "cross-site", who: "token (session 0123abcd)", count: 12 }],
    },
    partitions: null,
    jobs: ["mirror-sweep", "regenerate", "notify", "gsc-status", "sync-sweep", "crawler-ranges"].map((kind, i) => ({
      kind,
      target: site,
      state: "idle",
      dueAt: null,
      lastRun: iso(now - i * 60_000),
      outcome: "done",
      usage: { d1Queries: 12, kvOperations: 3 },
      error: null,
      attempts: 0,
      killed: 0,
      deadAt: null,
    })),
    crawlers,
  };
  return { ...status, health: healthOf(status as unknown as HealthInput, now) } as unknown as DashboardStatus;
}
