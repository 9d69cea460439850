/**
 * The one parser of document paths: every `/sitemap…` path the Worker serves a document at, as one
 * union, so that one dispatch (src/http/dispatch.ts) switches on it instead of routes falling
 * through to each other in registration order. The inverse builders are in src/http/paths.ts.
 */
import { SECTION_PATTERN } from "../core/limits.ts";
import { keyFilePath } from "../notify/indexnow.ts";
import { FEED_PATH, INDEX_PATH, type ShardFile, XSL_PATH } from "./paths.ts";

export type DocumentPath =
  | { kind: "index" }
  | { kind: "shard"; section: string; n: number; file: ShardFile }
  | { kind: "text"; section: string; n: number }
  | { kind: "news"; n: number; file: ShardFile }
  | { kind: "feed" }
  | { kind: "xsl" }
  | { kind: "indexnow-key" };

const SHARD_PATH = /^\/sitemap-([a-z0-9_-]+)-([1-9][0-9]{0,8})\.(xml|xml\.gz)$/;
const TEXT_PATH = /^\/sitemap-([a-z0-9_-]+)-([1-9][0-9]{0,8})\.txt$/;
/** `news`, `news2`, `news3`, …: no `-` before the number, so never a shard of a section "news". */
const NEWS_PATH = /^\/sitemap-news([2-9]|[1-9][0-9]{1,5})?\.(xml|xml\.gz)$/;

/**
 * What document a request path names; null for anything else (→ 404 "no such sitemap path").
 * `indexNowKey` is the configured IndexNow key (null: IndexNow off): only that key's file is the key
 * file, so any other `/sitemap-indexnow-….txt`, e.g. a text sitemap of a section "indexnow", stays
 * what its form says. The forms are otherwise disjoint: shards and text sitemaps end in `-{n}.xml`
 * and `-{n}.txt`, news sitemaps have no `-` before their number, the rest are exact paths.
 */
export function parseDocumentPath(pathname: string, indexNowKey: string | null): DocumentPath | null {
  switch (pathname) {
    case INDEX_PATH:
      return { kind: "index" };
    case FEED_PATH:
      return { kind: "feed" };
    case XSL_PATH:
      return { kind: "xsl" };
  }
  if (indexNowKey !== null && pathname === keyFilePath(indexNowKey)) return { kind: "indexnow-key" };
  const shard = SHARD_PATH.exec(pathname);
  if (shard) {
    return SECTION_PATTERN.test(shard[1]!) ? { kind: "shard", section: shard[1]!, n: Number(shard[2]), file: shard[3] as ShardFile } : null;
  }
  const text = TEXT_PATH.exec(pathname);
  if (text) {
    return SECTION_PATTERN.test(text[1]!) ? { kind: "text", section: text[1]!, n: Number(text[2]) } : null;
  }
  const news = NEWS_PATH.exec(pathname);
  if (news) return { kind: "news", n: news[1] ? Number(news[1]) : 1, file: news[2] as ShardFile };
  return null;
}
