/**
 * How a partitioned site looks like one store from outside: each partition numbers its own keys and
 * shards; the site's view offsets them by the partition, so that keys and shard URLs of different
 * partitions never meet. Partition 0 keeps its own numbers, so a site that becomes partitioned
 * keeps its shard URLs.
 */

/** Keys per partition in the site's key space: 2^40 (a trillion) each, 64 partitions stay below 2^53. */
const KEY_SPAN = 2 ** 40;

/** Shard numbers per partition and section: partition p's shards are p × SHARD_SPAN + 1, + 2, … */
export const SHARD_SPAN = 1_000_000;

export const siteKey = (partition: number, key: number): number => partition * KEY_SPAN + key;

/** The partition a site key (or a key range's first key) belongs to, and its own key there. */
export function partitionKey(key: number): { partition: number; key: number } {
  const partition = Math.floor(key / KEY_SPAN);
  return { partition, key: key - partition * KEY_SPAN };
}

/** The first shard number of partition p, minus one (the planners' base). */
export const shardBase = (partition: number): number => partition * SHARD_SPAN;
