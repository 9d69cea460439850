/**
 * The sitemap service: manifest → record store → render. Knows nothing of HTTP; returns Web Streams.
 */
import type { Config } from "./config.ts";
import { BlockCutter } from "./core/block-plan.ts";
import { w3cSeconds } from "./core/datetime-format.ts";
import { EXT_NEWS } from "./core/extensions/kinds.ts";
import { Fingerprint } from "./core/fingerprint.ts";
import { type RenderBlocks, type RenderLimits, type RenderedXml, renderSitemapIndex, renderUrlRows, renderUrlset } from "./core/render.ts";
import { type Source, paged } from "./core/source.ts";
import type { SitemapRef, StoredRecord, UrlRecord } from "./core/types.ts";
import { type RenderOptions, SHARD_EXTENSIONS, renderFingerprint } from "./core/writers.ts";
import { FEED_PATH, newsPath, shardPath } from "./documents/paths.ts";
import { type NewsSummary, newsWindow, summarizeNews } from "./formats/news.ts";
import { type BuildOptions, buildManifest, buildManifestWithin } from "./manifest/build.ts";
import { type ManifestStore, type ShardEntry, type ShardManifest, listedShards } from "./manifest/manifest.ts";
import { versionChecked } from "./manifest/version-check.ts";
import { pinQuery } from "./partitions/pinned.ts";
import type { RecordStore } from "./store/port.ts";

/**
 * What asks for a site's regeneration: the wiring's job scheduler (src/jobs/scheduler.ts; a
 * partition's asks for that partition's). The regeneration builds a missing manifest in bounded steps.
 */
interface RegenerationRequests {
  request(kind: "regenerate", origin: string, delaySeconds: number, trigger: string): Promise<boolean>;
}

export interface SitemapDeps {
  config: Config;
  store: RecordStore;
  manifests: ManifestStore;
  /** Where a request that may not build a missing manifest (the site is too large to walk) asks for it; null or absent: no queue. */
  jobs?: RegenerationRequests | null;
}

/** How a site's documents are rendered (date-only lastmod globally or for this site, browser view). */
export function renderOptions(config: Config, origin?: string): RenderOptions {
  return {
    lastmodDateOnly: config.lastmodDateOnly || (origin !== undefined && config.dateOnlySites.has(origin)),
    stylesheet: config.browserView,
  };
}

/** How a site's manifest is planned (limits, and what shapes its versions): the walk and the cron alike. */
export function manifestBuildOptions(config: Config, origin: string): BuildOptions {
  return {
    maxUrls: config.maxUrlsPerShard,
    maxBytes: config.maxBytesPerShard,
    renderFingerprint: renderFingerprint(renderOptions(config, origin)),
    indexFingerprint: `${config.indexLinkForm}${config.browserView ? "+xsl" : ""}`,
    // A partition of a site over several databases numbers its shards in its own range (src/partitions/keys.ts).
    firstShardNumber: (config.shardBase.get(origin) ?? 0) + 1,
  };
}

/**
 * Rebuilds a site's manifest from its records (one keyset walk of the whole site) and stores it
 * atomically. No request or job calls it (they build within bounds: `builtWithin`, the regeneration,
 * a move's build steps); tests and benches use it to set a site up.
 */
export async function rebuildManifest(deps: SitemapDeps, origin: string, previous?: ShardManifest | null): Promise<ShardManifest> {
  const before = previous === undefined ? await deps.manifests.load(origin) : previous;
  const manifest = await buildManifest(deps.store.reader, origin, before, manifestBuildOptions(deps.config, origin));
  await deps.manifests.save(manifest);
  return manifest;
}

/** How long a client should wait when a site's manifest is being built (a large site's first pass takes minutes). */
const MANIFEST_PENDING_RETRY_SECONDS = 120;

/**
 * A request found no complete manifest of the site, and building it would take a walk longer than a
 * request may make (MANIFEST_REQUEST_ROWS): its regeneration was asked to build it, in bounded
 * steps. The HTTP layer answers 503 with Retry-After (src/http/errors.ts).
 */
export class ManifestPendingError extends Error {
  override readonly name = "ManifestPendingError";
  readonly retryAfterSeconds = MANIFEST_PENDING_RETRY_SECONDS;
}

/** The key rows a request may still walk to build missing manifests; a partitioned site's partitions share one. */
interface WalkBudget {
  rows: number;
}

/**
 * The site's manifest when it is complete; otherwise built by a walk of its key rows if the walk
 * ends within `budget` (and saved), else null once the site's regeneration has been asked to build
 * it. A request never walks further than its budget: a site of millions of rows is thousands of D1
 * queries, and an invocation may make 1,000.
 *
 * `stored`: the manifest as loaded (null: none). A partial one (a first pass under way,
 * src/regen/publish.ts) that already lists as many URLs as the budget allows is not walked at all:
 * the walk could not end within it, and the pass is already building the manifest.
 */
export async function builtWithin(deps: SitemapDeps, origin: string, stored: ShardManifest | null, budget: WalkBudget): Promise<ShardManifest | null> {
  if (stored && !stored.partial) return stored;
  const planned = stored ? listedShards(stored).reduce((sum, s) => sum + s.urlCount, 0) : 0;
  let rows = 0;
  if (planned < budget.rows) {
    const built = await buildManifestWithin(deps.store.reader, origin, stored, manifestBuildOptions(deps.config, origin), budget.rows);
    rows = built.rows;
    budget.rows -= built.rows;
    if (built.manifest) {
      await saveBuilt(deps, built.manifest);
      return built.manifest;
    }
  }
  let queued: boolean | string = false;
  try {
    queued = (await deps.jobs?.request("regenerate", origin, 0, "manifest-missing")) ?? "no queue";
  } catch (err) {
    queued = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
  console.log(
    JSON.stringify({
      event: "sitemap.manifest.pending",
      origin,
      partial: stored !== null,
      rowsWalked: rows,
      queued,
    }),
  );
  return null;
}

/**
 * Saves the manifest a request built. Saving only spares the next requests the walk: a save that
 * fails (KV's one write a second to the site's key, refused when another isolate's request saved
 * the same manifest a moment ago; D1 trouble) is logged, and the request serves what it built.
 */
async function saveBuilt(deps: SitemapDeps, manifest: ShardManifest): Promise<void> {
  try {
    await deps.manifests.save(manifest);
  } catch (err) {
    console.error(
      JSON.stringify({
        event: "sitemap.manifest.save-failed",
        origin: manifest.origin,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      }),
    );
  }
}

/**
 * The stored manifest when complete; a small site's is built by the request that finds none (a
 * walk within MANIFEST_REQUEST_ROWS key rows). Throws ManifestPendingError for a larger site, after
 * asking for its regeneration.
 */
export async function currentManifest(deps: SitemapDeps, origin: string, loaded?: ShardManifest | null): Promise<ShardManifest> {
  const stored = loaded === undefined ? await deps.manifests.load(origin) : loaded;
  const manifest = await builtWithin(deps, origin, stored, { rows: deps.config.manifestRequestRows });
  if (!manifest) throw new ManifestPendingError(`the manifest of ${origin} is being built`);
  return manifest;
}

/**
 * What the index lists besides the shards. The news part depends on the clock (articles age out
 * after 2 days), so it is found at request time: see indexExtras.
 */
export interface IndexExtras {
  /** The news sitemaps, when there is at least one article in the window. */
  news: NewsSummary | null;
  /** The Atom feed of recent changes (/sitemap-feed.atom). */
  feed: boolean;
}

/**
 * The index's extras for a site now. Costs one small query (a range of the news index) only when
 * the manifest says the site has records with news data; none otherwise.
 */
export async function indexExtras(deps: SitemapDeps, manifest: ShardManifest, now = Date.now()): Promise<IndexExtras> {
  const feed = deps.config.feedInIndex && deps.config.feedSize > 0 && deps.store.recent !== null;
  const hasNews = manifest.shards.some((s) => (s.extKinds ?? 0) & EXT_NEWS);
  const newsIndex = deps.store.news;
  if (!hasNews || newsIndex === null) return { news: null, feed };
  const { since, until } = newsWindow(now);
  const news = summarizeNews(await newsIndex.stats(manifest.origin, since, until));
  return { news: news.files > 0 ? news : null, feed };
}

/** Validators of the index: the manifest's version and newest change, plus those of the extras. */
export function indexMeta(manifest: ShardManifest, extras?: IndexExtras): { version: string; lastChange: number } {
  const lastChange = listedShards(manifest).reduce((max, shard) => Math.max(max, shard.lastChange), 0);
  if (!extras || (!extras.news && !extras.feed)) return { version: manifest.version, lastChange };
  const version = new Fingerprint()
    .addString(manifest.version)
    .addString(extras.feed ? "feed" : "")
    .addString(extras.news?.version ?? "")
    .digest();
  return { version, lastChange: Math.max(lastChange, extras.news?.lastChange ?? 0) };
}

function indexRefs(config: Config, manifest: ShardManifest, extras?: IndexExtras): SitemapRef[] {
  const refs: SitemapRef[] = listedShards(manifest).map((s) => ({
    loc: manifest.origin + shardPath(s.section, s.n, config.indexLinkForm) + (manifest.partitions ? pinQuery(manifest.partitions) : ""),
    lastmod: w3cSeconds(s.lastChange),
  }));
  if (extras?.news) {
    for (let n = 1; n <= extras.news.files; n++) {
      refs.push({ loc: manifest.origin + newsPath(n, config.indexLinkForm), lastmod: w3cSeconds(extras.news.lastChange) });
    }
  }
  if (extras?.feed && refs.length > 0) {
    const newest = listedShards(manifest).reduce((max, s) => Math.max(max, s.lastChange), 0);
    refs.push({ loc: manifest.origin + FEED_PATH, lastmod: w3cSeconds(newest) });
  }
  return refs;
}

/** The index document. The caller checks there is at least one listed shard. */
export function renderIndex(config: Config, manifest: ShardManifest, extras?: IndexExtras): ReadableStream<Uint8Array> {
  return renderSitemapIndex(indexRefs(config, manifest, extras), { stylesheet: config.browserView });
}

/**
 * One shard, rendered live from the record store. Protocol limits (not the configured shard size) apply:
 * records added since the manifest was built must not break a document that is still valid.
 * `records`: the shard's live records when the caller already reads them (the cron's one pass
 * renders snapshots through here, so snapshot and live bytes cannot diverge).
 */
export function renderShard(
  deps: SitemapDeps,
  origin: string,
  shard: ShardEntry,
  records?: Source<UrlRecord>,
  /** How the records are cut in blocks when not by the entry's own starts (the regeneration's plan as it goes). */
  blocks?: BlockCutter,
): RenderedXml {
  if (records === undefined) return renderLiveShard(deps, origin, shard);
  return renderUrlset(records, { ...shardRenderOptions(deps, origin, shard), ...(blocks ? { blocks } : {}) });
}

/**
 * A shard as a request renders it: from the store's row arrays where it reads them so (D1's
 * `.raw()` rows, only the columns `<url>` needs: no object per record), else from its records,
 * version-checked where its copy may trail (shardPages). The same bytes either way
 * (test/workers/row-render.test.ts).
 */
export function renderLiveShard(
  deps: SitemapDeps,
  origin: string,
  shard: ShardEntry,
  versioned: Promise<boolean> = Promise.resolve(true),
  /** A pinned link's rendering (src/http/shard-reading.ts): ends at the shard limits, in key order. */
  pinned = false,
): RenderedXml {
  const rowPages = deps.store.reader.rowPages;
  // A pinned link reads records (rare, and the overflow cut is the record renderer's).
  if (rowPages === null || deps.store.projection !== null || pinned) {
    return renderUrlset(paged(shardPages(deps, origin, shard, versioned)), shardRenderOptions(deps, origin, shard, pinned));
  }
  const range = { origin, section: shard.section, firstKey: shard.firstKey, lastKey: shard.lastKey };
  return renderUrlRows(paged(rowPages(range)), shardRenderOptions(deps, origin, shard));
}

function shardRenderOptions(deps: SitemapDeps, origin: string, shard: ShardEntry, pinned = false): RenderOptions & RenderLimits & RenderBlocks {
  return {
    ...renderOptions(deps.config, origin),
    // Declare the namespaces of what the shard's records use (news is not written in shards); a
    // pinned rendering lists rows the entry's kinds do not count (those the partition gave away).
    namespaces: pinned ? SHARD_EXTENSIONS : (shard.extKinds ?? 0) & SHARD_EXTENSIONS,
    ...(pinned
      ? { maxUrls: deps.config.maxUrlsPerShard, maxBytes: deps.config.maxBytesPerShard, overflow: "end" as const }
      : // Cut in the entry's blocks: the bytes its snapshot holds (a pinned rendering has none). An
        // entry planned before blocks is gzipped whole, as its snapshot of that version was.
        shard.blockStarts
        ? { blocks: new BlockCutter(shard.blockStarts) }
        : {}),
  };
}

/**
 * A shard's records as the record store's reader gives them. From a store whose request-path copy
 * may trail its committed writes (KV: `store.projection`), they are checked to be exactly the
 * shard's version, and fail at their end when they are not while `versioned` says the bytes go out
 * (or are stored) under that version (src/manifest/version-check.ts): what is served under the
 * version's ETag, or cached under its key, is always that version's bytes.
 */
export function shardPages(
  deps: SitemapDeps,
  origin: string,
  shard: ShardEntry,
  versioned: Promise<boolean> = Promise.resolve(true),
): AsyncIterable<readonly StoredRecord[]> {
  const pages = deps.store.reader.recordPages({ origin, section: shard.section, firstKey: shard.firstKey, lastKey: shard.lastKey });
  if (deps.store.projection === null) return pages;
  return versionChecked(pages, shard, renderFingerprint(renderOptions(deps.config, origin)), versioned);
}
