/**
 * Small workers test files run in groups: each group is one test file (test/workers/groups/<name>.test.ts),
 * one workerd and one storage for all its members, each member inside a `describe` of its own name
 * (so its hooks stay its own). A file in a workerd of its own costs ~1.5 s of start-up and CPU
 * (spawn, module graph, migrations), which over the small files was a fifth of `npm test`. Only
 * files that also passed sharing a workerd with any others (vitest `isolate: false`, 28 Nov) are
 * members; a file that needs fresh storage or a fresh isolate (global tables, the registry list,
 * timers) runs alone, and so does one that moves the clock (vi.setSystemTime: the isolate's
 * caches then hold stamps from the moved clock; partitions-pinned failed once in a clean clone
 * after partitions-databases had moved it), and so does one that reads the platform's list of
 * registered sites (the isolate caches that list: break50c-matrix-gaps once missed its own site
 * after other members had filled it); so every file that registers sites or reads the registry
 * runs alone. vitest.config.ts excludes the members from the workers project's own files,
 * so each runs once; a member named on the command line (`npx vitest run test/workers/<file>`) runs alone.
 */
export const TEST_GROUPS: Readonly<Record<string, readonly string[]>> = {
  admin: ["admin-access", "admin-auth", "admin-body", "admin-guard", "admin-urls"],
  break49: [
    "break49-abandoned-commit",
    "break49-first-list",
    "break49-holds-two-moves",
    "break49-pinned-shards",
    "break49-sim-programs",
    "break49-status-counts",
    "break49-two-moves",
  ],
  break50: ["break50-audit-quota-refusals", "break50-expired-syncs-cap", "break50-holds-sync-cap", "break50-scope-before-schema"],
  break51: ["break51-kv-manifest-rate", "break51-notify-budget", "break51-notify-swallowed", "break51-robots-loop-rate", "break51-sweep-batch-bytes"],
  break51b: [
    "break51b-admin-extremes",
    "break51b-cold-renders",
    "break51b-meters",
    "break51b-partial-write",
    "break51b-partitions-scale",
    "break51b-step-budget",
  ],
  break53: [
    "break53-capped-feed",
    "break53-carried-changes",
    "break53-corrupt-kv",
    "break53-grown-block",
    "break53-gzip-ratio",
    "break53-http-after-splice",
    "break53-kv-source",
    "break53-partitioned-splice",
    "break53-view-pages",
  ],
  partitions: [
    "partitions-build",
    "partitions-first-list",
    "partitions-grow",
    "partitions-move-race",
    "partitions-news-after-flip",
    "partitions-pending-after-flip",
    "partitions-purge",
    "partitions-sync-after-flip",
    "partitions-sync-resume",
    "partitions",
  ],
  "misc-1": [
    "cache",
    "call-limits",
    "config",
    "crawler-count-timer",
    "crawler-log-served",
    "crawler-range-cap",
    "d1-reader",
    "etag-bytes",
    "ext",
    "faults",
    "formats",
    "gsc-status",
  ],
  "misc-2": [
    "gzip-blocks",
    "http-conditional",
    "job-chains",
    "kv-adoption",
    "kv-news-feed",
    "kv-stale-render",
    "lastmod-trust",
    "lease-renewal",
    "manifest-request",
    "manifest-save-diff",
    "mirror-crossed",
    "mirror-entries",
    "mirror-fetch",
    "notify-gsc",
    "notify-ping",
  ],
  "misc-3": [
    "partition-guards",
    "queue-message-size",
    "regen",
    "regen-commit-order",
    "regen-isolation",
    "repeat",
    "robots",
    "row-copy-pages",
    "row-render",
    "section-rules",
    "site-databases",
  ],
  "misc-4": ["sync-ownership", "tenant-scale"],
};
