/**
 * Shard links pinned to a layout. A crawler reads the index, then its shards — minutes or hours
 * apart. If a move's flip falls in between, the index it read lists the old partitions' shards,
 * which from the flip on leave out the rows they gave away: that crawl would miss the moved locs.
 * So a partitioned site's index links each shard with the partition count it was listed under
 * (`/sitemap-products-1.xml?partitions=3`), and for a while after a flip a shard asked for under
 * the count before it is rendered as it was then: each old partition's rows whose home under that
 * count is that partition (the moved rows stay in it, hidden, so this needs no copy).
 *
 * A link of any other count, or one older than PIN_GRACE_MS, is served as the shard is now. Within
 * the grace the old rendering is what the index that listed it said: a moved loc changed after the
 * flip shows its old row there (as any index read before a change does).
 */
import type { PartitionLayout } from "./layout.ts";

/** The query parameter of a partitioned site's shard links in its index. */
export const PIN_PARAM = "partitions";

/** How long after a flip a shard is still served as the index before it listed it: one day of crawling. */
export const PIN_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * The query a partitioned site's index appends to its shard links: none under one partition, so a
 * site's links never carry a query until its first move, and change once per move.
 */
export const pinQuery = (settled: number): string => (settled > 1 ? `?${PIN_PARAM}=${settled}` : "");

/** The layout a shard link pinned to `partitions` is rendered with: each loc in its home under that count. */
export const pinnedLayout = (partitions: number): PartitionLayout => ({
  // Never saved: a constant layout.
  version: 0,
  settled: partitions,
  target: partitions,
  flippedAt: 0,
  flippedFrom: null,
  partitionedAt: null,
  cursor: null,
  purgeCursor: null,
  purgedAt: null,
  catchUp: null,
});

/** The partition count a shard link carries (`?partitions=n`), or null for none or anything else. */
export function linkedCount(param: string | undefined): number | null {
  return param !== undefined && /^[1-9]\d{0,3}$/.test(param) ? Number(param) : null;
}

/** Whether a shard linked under `count` partitions is rendered as before the last flip: fewer than now, within PIN_GRACE_MS of it. */
function isPinned(count: number, layout: PartitionLayout, now: number): boolean {
  return count < layout.settled && layout.flippedAt !== null && now - layout.flippedAt < PIN_GRACE_MS;
}

/**
 * The partition count a shard link (`linked`: its count, null for none) is rendered under now, or
 * null: as the shard is now. A link without a count was listed by an index of one partition: pinned
 * to one for PIN_GRACE_MS after the site left one partition, however many flips followed (the rows
 * it lists stay in the first partition until the purge, which waits PIN_GRACE_MS after the last
 * flip); before that flip, or on a site never of one partition, it is a link typed by hand.
 */
export function pinnedCount(linked: number | null, layout: PartitionLayout, now: number): number | null {
  if (linked !== null) return isPinned(linked, layout, now) ? linked : null;
  return layout.partitionedAt !== null && layout.settled > 1 && now - layout.partitionedAt < PIN_GRACE_MS ? 1 : null;
}
