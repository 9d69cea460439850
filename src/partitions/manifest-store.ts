/**
 * The manifest of a partitioned site: every partition's last published manifest, side by side. Each
 * partition plans and publishes its own (its regeneration, in its own database); the site's index
 * lists the shards of each partition's last published manifest, so it never names a shard that does
 * not exist, and a shard's entry carries its partition in its keys and number (keys.ts).
 */
import { Fingerprint } from "../core/fingerprint.ts";
import type { ManifestStore, ShardEntry, ShardManifest } from "../manifest/manifest.ts";
import { ManifestPendingError, type SitemapDeps, builtWithin } from "../sitemaps.ts";
import { siteKey } from "./keys.ts";
import type { LayoutOf } from "./served.ts";

/** A partition's shards as the site sees them: keys in the partition's range of the site's key space. */
function siteShard(partition: number, shard: ShardEntry): ShardEntry {
  const offset = siteKey(partition, 0);
  if (offset === 0) return shard;
  return {
    ...shard,
    firstKey: shard.firstKey + offset,
    lastKey: shard.lastKey + offset,
    ...(shard.pageStarts ? { pageStarts: shard.pageStarts.map((k) => k + offset) } : {}),
    ...(shard.blockStarts ? { blockStarts: shard.blockStarts.map((k) => k + offset) } : {}),
  };
}

/** One manifest of the site from its partitions' manifests, in partition order. */
function mergeManifests(origin: string, parts: readonly ShardManifest[]): ShardManifest {
  const shards = parts.flatMap((m, p) => m.shards.map((s) => siteShard(p, s)));
  shards.sort((a, b) => (a.section < b.section ? -1 : a.section > b.section ? 1 : a.firstKey - b.firstKey));
  const version = new Fingerprint().addNumber(parts.length);
  for (const m of parts) version.addString(m.version);
  return {
    origin,
    version: version.digest(),
    // The oldest: what a live render checks rows against (src/http/sitemap-documents.ts) stays conservative.
    builtAt: Math.min(...parts.map((m) => m.builtAt)),
    // Each partition's index snapshot lists only its own shards: the site's index renders from this one.
    snapshot: null,
    shards,
    // A crawl that read this index reads its shards as listed even across a move's flip.
    partitions: parts.length,
  };
}

export class PartitionedManifestStore implements ManifestStore {
  /** Each partition's deps: its own records, manifests and jobs (a small partition without a manifest builds it once). */
  readonly parts: readonly SitemapDeps[];
  readonly layoutOf: LayoutOf;

  constructor(parts: readonly SitemapDeps[], layoutOf: LayoutOf) {
    this.parts = parts;
    this.layoutOf = layoutOf;
  }

  /**
   * The partitions that hold records: a database being filled by a move is listed from its flip on.
   * Each must have a complete manifest: one without is built here if the walk fits what the request
   * may still read (MANIFEST_REQUEST_ROWS, shared by all the partitions), else its regeneration is
   * asked for it and this throws ManifestPendingError. The index never leaves a partition out.
   */
  async load(origin: string): Promise<ShardManifest> {
    const { settled } = await this.layoutOf();
    const parts = this.parts.slice(0, settled);
    const stored = await Promise.all(parts.map((p) => p.manifests.load(origin)));
    const budget = { rows: parts[0]?.config.manifestRequestRows ?? 0 };
    const built: ShardManifest[] = [];
    const pending: number[] = [];
    for (const [p, part] of parts.entries()) {
      const manifest = await builtWithin(part, origin, stored[p] ?? null, budget);
      if (manifest) built.push(manifest);
      else pending.push(p);
    }
    if (pending.length > 0) throw new ManifestPendingError(`the manifests of ${origin}'s partitions ${pending.join(", ")} are being built`);
    return mergeManifests(origin, built);
  }

  save(): Promise<void> {
    return Promise.reject(new Error("a partitioned site's manifest is saved by each partition's regeneration"));
  }
}
