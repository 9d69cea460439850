/**
 * Where a `loc` lives in a site spread over several databases (SITE_DATABASES, docs/capacity.md
 * "Partitions"): its bucket, one of BUCKETS, is a hash of the normalised loc; a bucket's partition is
 * jump consistent hashing of the bucket over the partition count. Nothing is asked of any database,
 * so a write, a delete or a lookup goes straight to the one partition that holds the loc.
 *
 * Growing from n to n + 1 partitions moves exactly the buckets whose jump hash changes: about
 * 1 / (n + 1) of them, all into the new partition, none between old ones (docs/capacity.md).
 *
 * Both functions are a stored layout: changing them moves records. Pure; the seeding scripts use them too.
 */

/** Buckets per site: the unit a rebalance moves. 4,096 keeps a bucket of a 100M-URL site at ~25,000 URLs. */
const BUCKETS = 4096;

/** FNV-1a (32 bits) of the loc's UTF-16 code units, modulo BUCKETS. */
function bucketOf(loc: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < loc.length; i++) {
    h ^= loc.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % BUCKETS;
}

const MASK = (1n << 64n) - 1n;

/** Jump consistent hash (Lamping and Veach, 2014): the partition (0 … n-1) of a bucket over n partitions. */
function jump(bucket: number, n: number): number {
  let key = BigInt(bucket);
  let b = -1;
  let j = 0;
  while (j < n) {
    b = j;
    key = (key * 2862933555777941757n + 1n) & MASK;
    j = Math.floor((b + 1) * (2 ** 31 / (Number(key >> 33n) + 1)));
  }
  return b;
}

const tables = new Map<number, Uint8Array>();

/** The partition of every bucket over `n` partitions (computed once per n). */
function bucketTable(n: number): Uint8Array {
  let table = tables.get(n);
  if (!table) {
    table = new Uint8Array(BUCKETS);
    for (let bucket = 0; bucket < BUCKETS; bucket++) table[bucket] = jump(bucket, n);
    tables.set(n, table);
  }
  return table;
}

/** The partition (0 … n-1) of a normalised loc in a site of `n` partitions. */
export function partitionOf(loc: string, n: number): number {
  return n <= 1 ? 0 : bucketTable(n)[bucketOf(loc)]!;
}
