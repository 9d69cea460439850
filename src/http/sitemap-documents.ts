/** The sitemap index and its shards, as served by the document dispatch (src/http/dispatch.ts). */
import type { Context } from "hono";
import { indexCacheTags, shardCacheTags } from "../documents/cache-tags.ts";
import { INDEX_PATH, type ShardFile, shardPath } from "../documents/paths.ts";
import { type ShardEntry, type ShardManifest, listedShards } from "../manifest/manifest.ts";
import { PIN_PARAM, linkedCount } from "../partitions/pinned.ts";
import type { Services } from "../services-type.ts";
import { indexExtras, indexMeta, renderIndex, renderLiveShard } from "../sitemaps.ts";
import type { AppEnv } from "./app-env.ts";
import { serveDocument } from "./cache/serve.ts";
import { manifestFor, serveContext, shardFor } from "./request-context.ts";
import { notFound } from "./respond.ts";
import { shardReading } from "./shard-reading.ts";

export async function indexDocument(c: Context<AppEnv>): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  const manifest = await manifestFor(c);
  const shards = listedShards(manifest);
  if (shards.length === 0) return notFound("this site has no URLs yet");
  // News sitemaps (listed only while non-empty) and the feed: docs/extensions.md.
  const extras = await indexExtras(s, manifest);
  const meta = indexMeta(manifest, extras);
  // The cron's index snapshot holds one index version; it serves only while that is still this index's.
  const held = manifest.snapshot && s.snapshots?.holds(manifest.snapshot, { kind: "index", origin, version: meta.version });
  const snapshot = held ? manifest.snapshot : null;
  return serveDocument(serveContext(c), {
    origin,
    path: INDEX_PATH,
    file: "xml",
    ...meta,
    tags: indexCacheTags(origin),
    snapshot,
    render: () => renderIndex(s.config, manifest, extras),
  });
}

export async function shardDocument(c: Context<AppEnv>, section: string, n: number, file: ShardFile): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  // A partitioned site's index links its shards with its partition count (src/partitions/pinned.ts).
  const linked = s.servedAs ? linkedCount(c.req.query(PIN_PARAM)) : null;
  const found = await shardFor(c, section, n, linked, s.servedAs !== undefined);
  if (found instanceof Response) return found;
  const { manifest, shard } = found;
  const reading = await shardReading(s, manifest, shard, linked);
  if (reading instanceof Response) return reading;
  const from = reading.services;
  return serveDocument(serveContext(c), {
    origin,
    path: shardPath(shard.section, shard.n, file),
    file,
    version: reading.version,
    lastChange: shard.lastChange,
    tags: shardCacheTags(origin, shard.section, shard.n),
    snapshot: reading.snapshot ? (shard.snapshot ?? null) : null,
    render: (versioned) => renderLiveShard(from, origin, shard, versioned, reading.pinned),
    current: rowsStillAt(s, manifest, shard),
  });
}

/**
 * Whether a shard's rows are still those its manifest entry's version was made from: none changed
 * after the manifest was built (less the settle window, in which a write stamped earlier may
 * commit later). Undefined when the store cannot tell cheaply.
 */
export function rowsStillAt(s: Services, manifest: ShardManifest, shard: ShardEntry): (() => Promise<boolean>) | undefined {
  const freshness = s.store.freshness;
  if (freshness === null) return undefined;
  const range = { origin: manifest.origin, section: shard.section, firstKey: shard.firstKey, lastKey: shard.lastKey };
  const since = manifest.builtAt - s.config.regen.settleSeconds * 1000;
  return async () => !(await freshness.changedAfter(range, since));
}
