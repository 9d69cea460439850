/**
 * Documents of the other formats: news sitemaps, text sitemaps, the Atom feed of recent changes and
 * the browser view's XSL, as served by the document dispatch (src/http/dispatch.ts). Every document
 * is served by serveDocument (src/http/cache/serve.ts), so validators, 304s, HEAD and the edge cache
 * behave exactly as for shards.
 */
import type { Context } from "hono";
import { EXT_NEWS } from "../core/extensions/kinds.ts";
import { MAX_NEWS_PER_SITEMAP } from "../core/extensions/limits.ts";
import { renderUrlset } from "../core/render.ts";
import { paged } from "../core/source.ts";
import { renderFingerprint } from "../core/writers.ts";
import { indexCacheTags, shardCacheTags, siteCacheTag } from "../documents/cache-tags.ts";
import { FEED_PATH, type ShardFile, XSL_PATH, newsPath, textPath } from "../documents/paths.ts";
import { feedVersion, renderAtomFeed } from "../formats/atom.ts";
import { newsFileVersion, newsWindow, summarizeNews } from "../formats/news.ts";
import { renderTextSitemap } from "../formats/text.ts";
import { SITEMAP_XSL, SITEMAP_XSL_LAST_MODIFIED, SITEMAP_XSL_VERSION } from "../formats/xsl.ts";
import { renderOptions, shardPages } from "../sitemaps.ts";
import type { AppEnv } from "./app-env.ts";
import { cachedNewsFiles, cachedValidators, storeNewsFiles, storeValidators } from "./cache/repeat-cache.ts";
import { serveDocument, serveWithoutRender } from "./cache/serve.ts";
import { cachedSite, manifestFor, serveContext, shardFor } from "./request-context.ts";
import { notFound } from "./respond.ts";
import { rowsStillAt } from "./sitemap-documents.ts";

type Ctx = Context<AppEnv>;

const stringStream = (text: string): ReadableStream<Uint8Array> => new Blob([text]).stream();

/**
 * The news sitemaps: the 2-day window, newest first, 1,000 per file. Repeats within a minute are
 * answered from cached validators and file count, without a query (see repeat-cache.ts).
 */
export async function newsFile(c: Ctx, n: number, file: ShardFile): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  const news = s.store.news;
  if (news === null) return notFound("no news sitemap: the record source has no news index");
  const now = Date.now();
  const slot = { now, generation: (await manifestFor(c)).version };
  const ctx = serveContext(c);
  const path = newsPath(n, file);
  const missing = (files: number): Response | null =>
    files === 0 ? notFound("no news articles from the last 2 days") : n > files ? notFound(`no news sitemap ${n}`) : null;
  const site = cachedSite(c);
  const knownFiles = await cachedNewsFiles(site, slot);
  if (knownFiles !== null) {
    const answer = missing(knownFiles);
    if (answer) return answer;
    const known = await cachedValidators(site, path, slot);
    const repeat = known && (await serveWithoutRender(ctx, known));
    if (repeat) return repeat;
  }
  const { since, until } = newsWindow(now);
  const summary = summarizeNews(await news.stats(origin, since, until));
  storeNewsFiles(ctx.waitUntil, site, summary.files, slot);
  const gone = missing(summary.files);
  if (gone) return gone;
  const records = await news.records(origin, since, until, (n - 1) * MAX_NEWS_PER_SITEMAP, MAX_NEWS_PER_SITEMAP);
  if (records.length === 0) return notFound(`no news sitemap ${n}`);
  const options = { ...renderOptions(s.config, origin), namespaces: EXT_NEWS, extensions: EXT_NEWS };
  const doc = {
    origin,
    path,
    file,
    version: newsFileVersion(records, n, renderFingerprint(options)),
    lastChange: summary.lastChange,
    tags: indexCacheTags(origin),
  };
  storeValidators(ctx.waitUntil, site, doc, slot);
  return serveDocument(ctx, { ...doc, render: () => renderUrlset(records, { ...options, maxUrls: MAX_NEWS_PER_SITEMAP }) });
}

/** A shard's text form: same records, same manifest entry as its XML. */
export async function textFile(c: Ctx, section: string, n: number): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  const found = await shardFor(c, section, n);
  if (found instanceof Response) return found;
  const { manifest, shard } = found;
  return serveDocument(serveContext(c), {
    origin,
    path: textPath(shard.section, shard.n),
    file: "xml",
    version: `${shard.version}t`,
    lastChange: shard.lastChange,
    tags: shardCacheTags(origin, shard.section, shard.n),
    contentType: "text/plain; charset=utf-8",
    render: (versioned) => renderTextSitemap(paged(shardPages(s, origin, shard, versioned))),
    current: rowsStillAt(s, manifest, shard),
  });
}

/** The browser view's stylesheet (BROWSER_VIEW). */
export function xslFile(c: Ctx): Promise<Response> | Response {
  if (!c.var.services.config.browserView) return notFound("the browser view is off (BROWSER_VIEW=false)");
  return serveDocument(serveContext(c), {
    origin: c.var.origin,
    path: XSL_PATH,
    file: "xml",
    version: SITEMAP_XSL_VERSION,
    lastChange: SITEMAP_XSL_LAST_MODIFIED,
    tags: [siteCacheTag(c.var.origin)],
    contentType: "text/xsl; charset=utf-8",
    render: () => stringStream(SITEMAP_XSL),
  });
}

/**
 * The Atom feed of the FEED_SIZE most recent changes. Repeats within a minute are answered from
 * cached validators, without a query (see repeat-cache.ts).
 */
export async function feedFile(c: Ctx): Promise<Response> {
  const { config, store } = c.var.services;
  const origin = c.var.origin;
  if (config.feedSize === 0 || store.recent === null) return notFound("no feed (FEED_SIZE=0, or the record source has none)");
  const slot = { now: Date.now(), generation: (await manifestFor(c)).version };
  const ctx = serveContext(c);
  const site = cachedSite(c);
  const known = await cachedValidators(site, FEED_PATH, slot);
  const repeat = known && (await serveWithoutRender(ctx, known));
  if (repeat) return repeat;
  const records = await store.recent.records(origin, config.feedSize);
  if (records.length === 0) return notFound("this site has no URLs yet");
  const doc = {
    origin,
    path: FEED_PATH,
    file: "xml" as const,
    version: feedVersion(records, config.feedSize),
    lastChange: records.reduce((max, r) => Math.max(max, r.updatedAt), 0),
    tags: indexCacheTags(origin),
    contentType: "application/atom+xml; charset=utf-8",
  };
  storeValidators(ctx.waitUntil, site, doc, slot);
  return serveDocument(ctx, { ...doc, render: () => stringStream(renderAtomFeed({ origin, selfUrl: origin + FEED_PATH, records })) });
}
