/**
 * Change stamps of the seeded demo records (`npm start`, the e2e harness).
 *
 * One second apart, ending before the settle window: index lastmods differ between shards, and a
 * manifest built right after seeding vouches for every shard's rows. (A live render goes out with
 * its ETag only when no row of the shard changed after the manifest's `builtAt` less
 * REGEN_SETTLE_SECONDS, docs/caching.md; demo rows stamped inside that window would leave the
 * newest shards without validators until the first cron run.)
 */
export function demoStamps(count: number, now: number, settleSeconds: number): (i: number) => number {
  // A few seconds' margin: some writers number records from 1, not 0.
  const newest = now - (settleSeconds + 5) * 1000;
  return (i) => newest - (count - 1 - i) * 1000;
}
