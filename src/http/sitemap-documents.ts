/** The sitemap index and its shards, as served by the document dispatch (src/http/dispatch.ts). */
import type { Context } from "hono";
import { indexCacheTags, shardCacheTags } from "../cache/headers.ts";
import { serveDocument } from "../cache/serve.ts";
import { findShard, listedShards } from "../manifest/manifest.ts";
import { indexExtras, indexMeta, renderIndex, renderShard } from "../sitemaps.ts";
import { indexSnapshotKey } from "../snapshots/store.ts";
import type { AppEnv } from "./app-env.ts";
import { INDEX_PATH, type ShardFile, shardPath } from "./paths.ts";
import { manifestFor, serveContext } from "./request-context.ts";
import { notFound } from "./respond.ts";

export async function indexDocument(c: Context<AppEnv>): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  const manifest = await manifestFor(c);
  const shards = listedShards(manifest);
  if (shards.length === 0) return notFound("this site has no URLs yet");
  // News sitemaps (listed only while non-empty) and the feed: docs/extensions.md.
  const extras = await indexExtras(s, manifest);
  const meta = indexMeta(manifest, extras);
  // The cron's index snapshot is keyed by the index version; it serves only while that still holds.
  const snapshot = manifest.snapshot === indexSnapshotKey(origin, meta.version) ? manifest.snapshot : null;
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
  const manifest = await manifestFor(c);
  const shard = findShard(manifest, section, n);
  if (!shard) return notFound(`no sitemap ${section}-${n}`);
  return serveDocument(serveContext(c), {
    origin,
    path: shardPath(shard.section, shard.n, file),
    file,
    version: shard.version,
    lastChange: shard.lastChange,
    tags: shardCacheTags(origin, shard.section, shard.n),
    snapshot: shard.snapshot ?? null,
    render: () => renderShard(s, origin, shard),
  });
}
