/**
 * The browser view's handlers (docs/browser-view.md): what a top-level browser navigation to the
 * index, a shard, a news sitemap or the feed gets instead of the XML. The dispatch
 * (src/http/dispatch.ts) decides when; these answer with HTML that is never cached by anyone
 * (src/http/document-headers.ts viewHeaders), so a crawler fetching the same URL keeps getting the
 * XML with its bytes and validators. What a shard's view reads is bounded by a per-version cache of
 * its own (src/formats/view/view-cache.ts, view-rows.ts), apart from the documents' entries; the
 * pages themselves are rendered in src/formats/view/, which knows nothing of Hono.
 */

import type { Context } from "hono";
import { w3cSeconds } from "../core/datetime-format.ts";
import { MAX_NEWS_PER_SITEMAP } from "../core/extensions/limits.ts";
import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP } from "../core/limits.ts";
import { FEED_PATH, newsPath, shardPath, textPath } from "../documents/paths.ts";
import { newsWindow } from "../formats/news.ts";
import { type IndexViewRow, renderIndexView } from "../formats/view/index-view.ts";
import { fmt, h } from "../formats/view/page.ts";
import { type UrlsetView, renderUrlsetView } from "../formats/view/urlset-view.ts";
import { viewCache } from "../formats/view/view-cache.ts";
import { type ViewQuery, scanRows, shardRows } from "../formats/view/view-rows.ts";
import { invocationStream } from "../jobs/meter.ts";
import { listedShards } from "../manifest/manifest.ts";
import { indexExtras } from "../sitemaps.ts";
import type { AppEnv } from "./app-env.ts";
import { viewHeaders } from "./document-headers.ts";
import { cachedSite, manifestFor, shardFor, waitUntilOf } from "./request-context.ts";
import { notFound, plainError } from "./respond.ts";

type Ctx = Context<AppEnv>;

const MAX_FILTER_CHARS = 200;
const PAGE_PARAM = /^[1-9][0-9]{0,5}$/;

/** `?page=` and `?q=`; a 400 naming the parameter when either is malformed. */
function viewQuery(c: Ctx): ViewQuery | Response {
  const page = c.req.query("page");
  const q = (c.req.query("q") ?? "").trim();
  if (page !== undefined && !PAGE_PARAM.test(page)) return plainError(400, "page must be a page number (1 to 999999)");
  if (q.length > MAX_FILTER_CHARS) return plainError(400, `q (the URL filter) is limited to ${MAX_FILTER_CHARS} characters`);
  return { page: page === undefined ? 1 : Number(page), q };
}

/** A streamed page reads its rows as it is pulled: in this request's invocation (src/jobs/meter.ts). */
const html = (body: ReadableStream<Uint8Array> | string): Response =>
  new Response(typeof body === "string" ? body : invocationStream(body), { status: 200, headers: viewHeaders() });

const share = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)}%`;

function serveUrlset(c: Ctx, view: UrlsetView): Response {
  const query = viewQuery(c);
  return query instanceof Response ? query : html(renderUrlsetView(view, query));
}

export async function indexView(c: Ctx): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  const manifest = await manifestFor(c);
  const shards = listedShards(manifest);
  if (shards.length === 0) return notFound("this site has no URLs yet");
  const extras = await indexExtras(s, manifest);
  const form = s.config.indexLinkForm;
  // The same entries, in the same order, as the index document (src/sitemaps.ts indexRefs).
  const rows: IndexViewRow[] = shards.map((shard) => ({
    href: shardPath(shard.section, shard.n, "xml"),
    label: origin + shardPath(shard.section, shard.n, form),
    kind: "shard",
    urls: shard.urlCount,
    bytes: shard.byteCount,
    lastmod: w3cSeconds(shard.lastChange),
  }));
  const news = extras.news;
  for (let n = 1; news && n <= news.files; n++) {
    const articles = Math.min(MAX_NEWS_PER_SITEMAP, news.count - (n - 1) * MAX_NEWS_PER_SITEMAP);
    rows.push({
      href: newsPath(n, "xml"),
      label: origin + newsPath(n, form),
      kind: "news",
      urls: articles,
      bytes: null,
      lastmod: w3cSeconds(news.lastChange),
    });
  }
  if (extras.feed) {
    const newest = shards.reduce((max, shard) => Math.max(max, shard.lastChange), 0);
    rows.push({ href: FEED_PATH, label: origin + FEED_PATH, kind: "feed", urls: null, bytes: null, lastmod: w3cSeconds(newest) });
  }
  return html(renderIndexView(new URL(origin).host, rows));
}

export async function shardView(c: Ctx, section: string, n: number): Promise<Response> {
  const s = c.var.services;
  const origin = c.var.origin;
  const found = await shardFor(c, section, n);
  if (found instanceof Response) return found;
  const { shard } = found;
  const range = { origin, section: shard.section, firstKey: shard.firstKey, lastKey: shard.lastKey };
  const path = shardPath(shard.section, shard.n, "xml");
  const source = {
    reader: s.store.reader,
    range,
    pageStarts: shard.pageStarts ?? null,
    openCache: () => viewCache(cachedSite(c), path, shard.version, s.config.cache.edgeTtl),
    waitUntil: waitUntilOf(c),
  };
  return serveUrlset(c, {
    title: `Sitemap ${shard.section}-${shard.n}`,
    path,
    facts:
      `This sitemap lists <strong id="count">${fmt(shard.urlCount)}</strong> URLs (${share(shard.urlCount, MAX_URLS_PER_SITEMAP)} of ${fmt(MAX_URLS_PER_SITEMAP)}) ` +
      `in ${fmt(shard.byteCount)} bytes (${share(shard.byteCount, MAX_SITEMAP_BYTES)} of ${fmt(MAX_SITEMAP_BYTES)}); last modified ${h(w3cSeconds(shard.lastChange))}.`,
    forms: [
      { label: "text sitemap", href: textPath(shard.section, shard.n) },
      { label: "gzip file", href: shardPath(shard.section, shard.n, "xml.gz") },
    ],
    total: shard.urlCount,
    rows: (query) => shardRows(source, query),
    dateColumn: "lastmod",
  });
}

export async function newsView(c: Ctx, n: number): Promise<Response> {
  const news = c.var.services.store.news;
  if (news === null) return notFound("no news sitemap: the record source has no news index");
  const { since, until } = newsWindow(Date.now());
  const records = await news.records(c.var.origin, since, until, (n - 1) * MAX_NEWS_PER_SITEMAP, MAX_NEWS_PER_SITEMAP);
  if (records.length === 0) return notFound(n === 1 ? "no news articles from the last 2 days" : `no news sitemap ${n}`);
  return serveUrlset(c, {
    title: n === 1 ? "News sitemap" : `News sitemap ${n}`,
    path: newsPath(n, "xml"),
    facts: `This news sitemap lists <strong id="count">${fmt(records.length)}</strong> articles from the last 2 days (at most ${fmt(MAX_NEWS_PER_SITEMAP)} a file).`,
    forms: [{ label: "gzip file", href: newsPath(n, "xml.gz") }],
    total: records.length,
    rows: (query) => scanRows(records, query, "lastmod"),
    dateColumn: "lastmod",
  });
}

export async function feedView(c: Ctx): Promise<Response> {
  const { config, store } = c.var.services;
  if (config.feedSize === 0 || store.recent === null) return notFound("no feed (FEED_SIZE=0, or the record source has none)");
  const records = await store.recent.records(c.var.origin, config.feedSize);
  if (records.length === 0) return notFound("this site has no URLs yet");
  return serveUrlset(c, {
    title: "Recently changed URLs",
    path: FEED_PATH,
    facts: `The Atom feed at this address lists the <strong id="count">${fmt(records.length)}</strong> most recently changed URLs, newest first.`,
    forms: [],
    total: records.length,
    rows: (query) => scanRows(records, query, "updated"),
    dateColumn: "updated",
  });
}
