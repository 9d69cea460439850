/**
 * Routes of the other formats: news sitemaps, text sitemaps, the Atom feed of recent changes and the
 * browser view's XSL. Registered by app.ts before the shard route; any other path falls through to
 * it. Every document is served by serveDocument (src/cache/serve.ts), so validators, 304s, HEAD and
 * the edge cache behave exactly as for shards.
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../app.ts";
import { indexCacheTags, shardCacheTags, siteCacheTag } from "../cache/headers.ts";
import { requestManifest } from "../cache/manifest-cache.ts";
import { type ServeContext, serveDocument } from "../cache/serve.ts";
import { EXT_NEWS, MAX_NEWS_PER_SITEMAP } from "../core/extensions/types.ts";
import { renderUrlset } from "../core/render.ts";
import { renderFingerprint } from "../core/writers.ts";
import { FEED_PATH, XSL_PATH, newsPath, parseFormatPath, textPath } from "../http/paths.ts";
import { notFound } from "../http/respond.ts";
import { findShard } from "../manifest/manifest.ts";
import { renderOptions } from "../sitemaps.ts";
import { feedVersion, renderAtomFeed } from "./atom.ts";
import { newsFileVersion, newsWindow, summarizeNews } from "./news.ts";
import { renderTextSitemap } from "./text.ts";
import { SITEMAP_XSL, SITEMAP_XSL_VERSION } from "./xsl.ts";

type Ctx = Context<AppEnv>;

/** Last-Modified of the stylesheet: the date its text last changed (bump with SITEMAP_XSL). */
const XSL_LAST_MODIFIED = Date.UTC(2026, 10, 20);

function waitUntilOf(c: Ctx): (promise: Promise<unknown>) => void {
  try {
    const ctx = c.executionCtx;
    return (promise) => ctx.waitUntil(promise);
  } catch {
    return (promise) => void promise.catch(() => undefined); // no execution context (app.fetch without one)
  }
}

function serveContext(c: Ctx): ServeContext {
  return { request: c.req.raw, config: c.var.services.config, snapshots: c.var.services.snapshots, waitUntil: waitUntilOf(c) };
}

const stringStream = (text: string): ReadableStream<Uint8Array> => new Blob([text]).stream();

/** Hono handler for the news sitemaps: the 2-day window, newest first, 1,000 per file. */
async function newsFile(c: Ctx, n: number, file: "xml" | "xml.gz"): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  const news = s.store.news;
  if (news === null) return notFound("no news sitemap: the record source has no news index");
  const { since, until } = newsWindow(Date.now());
  const records = await news.records(origin, since, until, (n - 1) * MAX_NEWS_PER_SITEMAP, MAX_NEWS_PER_SITEMAP);
  if (records.length === 0) return notFound(n === 1 ? "no news articles from the last 2 days" : `no news sitemap ${n}`);
  const stats = await news.stats(origin, since, until);
  const options = { ...renderOptions(s.config, origin), namespaces: EXT_NEWS, extensions: EXT_NEWS };
  return serveDocument(serveContext(c), {
    origin,
    path: newsPath(n, file),
    file,
    version: newsFileVersion(records, n, renderFingerprint(options)),
    lastChange: summarizeNews(stats).lastChange,
    tags: indexCacheTags(origin),
    render: () => renderUrlset(records, { ...options, maxUrls: MAX_NEWS_PER_SITEMAP }),
  });
}

/** Hono handler for a shard's text form: same records, same manifest entry as its XML. */
async function textFile(c: Ctx, section: string, n: number): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  const manifest = await requestManifest(s, origin, s.config.cache.manifestTtl, waitUntilOf(c));
  const shard = findShard(manifest, section, n);
  if (!shard) return notFound(`no sitemap ${section}-${n}`);
  const range = { origin, section: shard.section, firstKey: shard.firstKey, lastKey: shard.lastKey };
  return serveDocument(serveContext(c), {
    origin,
    path: textPath(shard.section, shard.n),
    file: "xml",
    version: `${shard.version}t`,
    lastChange: shard.lastChange,
    tags: shardCacheTags(origin, shard.section, shard.n),
    contentType: "text/plain; charset=utf-8",
    render: () => renderTextSitemap(s.store.reader.records(range)),
  });
}

export function registerFormatRoutes(app: Hono<AppEnv>): void {
  app.get(XSL_PATH, (c) => {
    if (!c.var.services.config.browserView) return notFound("the browser view is off (BROWSER_VIEW=false)");
    return serveDocument(serveContext(c), {
      origin: c.var.origin,
      path: XSL_PATH,
      file: "xml",
      version: SITEMAP_XSL_VERSION,
      lastChange: XSL_LAST_MODIFIED,
      tags: [siteCacheTag(c.var.origin)],
      contentType: "text/xsl; charset=utf-8",
      render: () => stringStream(SITEMAP_XSL),
    });
  });

  app.get(FEED_PATH, async (c) => {
    const { config, store } = c.var.services;
    const origin = c.var.origin;
    if (config.feedSize === 0 || store.recent === null) return notFound("no feed (FEED_SIZE=0, or the record source has none)");
    const records = await store.recent.records(origin, config.feedSize);
    if (records.length === 0) return notFound("this site has no URLs yet");
    return serveDocument(serveContext(c), {
      origin,
      path: FEED_PATH,
      file: "xml",
      version: feedVersion(records, config.feedSize),
      lastChange: records.reduce((max, r) => Math.max(max, r.updatedAt), 0),
      tags: indexCacheTags(origin),
      contentType: "application/atom+xml; charset=utf-8",
      render: () => stringStream(renderAtomFeed({ origin, selfUrl: origin + FEED_PATH, records })),
    });
  });

  app.get("/:file{sitemap-.+}", async (c, next) => {
    const path = parseFormatPath(new URL(c.req.url).pathname);
    if (path?.kind === "news") return newsFile(c, path.n, path.file);
    if (path?.kind === "text") return textFile(c, path.section, path.n);
    await next();
  });
}
