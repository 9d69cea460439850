/**
 * How a shard of a partitioned site is read for the link a crawler followed: its index links each
 * shard with the partition count it listed (src/partitions/pinned.ts), so a crawl that read the
 * index before a move's flip reads its shards as that index listed them, after the flip too.
 * A link without a count was listed under one partition (an index of one partition adds none,
 * src/partitions/pinned.ts), so within a day of the site's flip from one it is read as that index
 * listed it, whatever flips followed; otherwise, and for any other site, the shard is read as it is now.
 */
import { Fingerprint } from "../core/fingerprint.ts";
import type { ShardEntry, ShardManifest } from "../manifest/manifest.ts";
import { partitionKey } from "../partitions/keys.ts";
import { pinnedCount } from "../partitions/pinned.ts";
import type { Services } from "../services-type.ts";
import { notFound } from "./respond.ts";

export interface ShardReading {
  /** The services whose records the shard is rendered from. */
  services: Services;
  /** The version its bytes are served (and cached) under. */
  version: string;
  /** Whether the shard's pre-rendered snapshot is these bytes. */
  snapshot: boolean;
  /**
   * Rendered under an earlier partition count than the manifest's: the range was planned for the
   * rows served now, and the rows the partition gave away come back into it, so the rendering ends
   * at the shard limits (the rows past them are those written after the flip: keys only grow).
   */
  pinned: boolean;
}

/**
 * How to read `shard` for a link listed under `linked` partitions (null: none); a 404 for a shard that
 * layout did not have, and for a shard with no URLs now unless the link is pinned (its every URL moved
 * in the flip: the index that listed it had them there, and the old partition keeps them hidden).
 */
export async function shardReading(
  s: Services,
  manifest: ShardManifest,
  shard: ShardEntry,
  linked: number | null,
  now = Date.now(),
): Promise<ShardReading | Response> {
  const current: ShardReading | Response =
    shard.urlCount > 0 ? { services: s, version: shard.version, snapshot: true, pinned: false } : notFound(`no sitemap ${shard.section}-${shard.n}`);
  if (!s.servedAs || !s.layouts || manifest.partitions === undefined) return current;
  // No count: one partition's link. Under the manifest's own count of one, nothing to read.
  const count = linked ?? 1;
  if (count > manifest.partitions) return current;
  // The manifest's own count: its versions and snapshots are that layout's, and rendering under it
  // needs no read of the layout (each loc in its home under that count). A location whose copy of
  // the manifest predates a flip so renders what that copy lists.
  if (count === manifest.partitions) return current instanceof Response ? current : { ...current, services: s.servedAs(count) };
  // An index from before the flip this manifest has seen: as it listed the shard, for PIN_GRACE_MS
  // (a link without a count from the site's flip from one partition on, whatever flips followed).
  const layout = await s.layouts.read();
  if (pinnedCount(linked, layout, now) !== count) return current;
  if (partitionKey(shard.firstKey).partition >= count) return notFound(`no sitemap ${shard.section}-${shard.n} under ${count} partitions`);
  return { services: s.servedAs(count), version: new Fingerprint().addString(shard.version).addNumber(count).digest(), snapshot: false, pinned: true };
}
