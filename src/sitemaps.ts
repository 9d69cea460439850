/**
 * The sitemap service: manifest → source → render. Knows nothing of HTTP; returns Web Streams.
 */
import type { Config } from "./config.ts";
import { w3cSeconds } from "./core/datetime-format.ts";
import { renderSitemapIndex, renderUrlset } from "./core/render.ts";
import type { SitemapRef } from "./core/types.ts";
import { type RenderOptions, renderFingerprint } from "./core/writers.ts";
import { buildManifest } from "./manifest/build.ts";
import { type ManifestStore, type ShardEntry, type ShardManifest, listedShards } from "./manifest/manifest.ts";
import { shardPath } from "./http/paths.ts";
import type { UrlSource } from "./sources/source.ts";

export interface SitemapDeps {
  config: Config;
  source: UrlSource;
  manifests: ManifestStore;
}

export function renderOptions(config: Config): RenderOptions {
  return { lastmodDateOnly: config.lastmodDateOnly };
}

/** Rebuilds a site's manifest from its records (one keyset walk) and stores it atomically. */
export async function rebuildManifest(deps: SitemapDeps, origin: string, previous?: ShardManifest | null): Promise<ShardManifest> {
  const before = previous === undefined ? await deps.manifests.load(origin) : previous;
  const manifest = await buildManifest(deps.source, origin, before, {
    maxUrls: deps.config.maxUrlsPerShard,
    maxBytes: deps.config.maxBytesPerShard,
    renderFingerprint: renderFingerprint(renderOptions(deps.config)),
    indexFingerprint: deps.config.indexLinkForm,
  });
  await deps.manifests.save(manifest);
  return manifest;
}

/** The stored manifest; built once when there is none yet (first request after a fresh deploy). */
export async function currentManifest(deps: SitemapDeps, origin: string): Promise<ShardManifest> {
  return (await deps.manifests.load(origin)) ?? (await rebuildManifest(deps, origin, null));
}

export function indexRefs(config: Config, manifest: ShardManifest): SitemapRef[] {
  return listedShards(manifest).map((s) => ({
    loc: manifest.origin + shardPath(s.section, s.n, config.indexLinkForm),
    lastmod: w3cSeconds(s.lastChange),
  }));
}

/** The index document. The caller checks there is at least one listed shard. */
export function renderIndex(config: Config, manifest: ShardManifest): ReadableStream<Uint8Array> {
  return renderSitemapIndex(indexRefs(config, manifest));
}

/**
 * One shard, rendered live from the source. Protocol limits (not the configured shard size) apply:
 * records added since the manifest was built must not break a document that is still valid.
 */
export function renderShard(deps: SitemapDeps, origin: string, shard: ShardEntry): ReadableStream<Uint8Array> {
  const records = deps.source.records({ origin, section: shard.section, firstKey: shard.firstKey, lastKey: shard.lastKey });
  return renderUrlset(records, renderOptions(deps.config));
}
