/**
 * The one parser of document paths: every `/sitemap…` path the Worker serves a document at, as one
 * union, so that one dispatch (src/http/dispatch.ts) switches on it instead of routes falling
 * through to each other in registration order. The inverse builders are in src/documents/paths.ts.
 */
import { SECTION_PATTERN } from "../core/limits.ts";
import { FEED_PATH, INDEX_PATH, type ShardFile, XSL_PATH } from "../documents/paths.ts";
import { keyFilePath } from "../notify/indexnow.ts";

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
    const [, section = "", n, file] = shard;
    return SECTION_PATTERN.test(section) ? { kind: "shard", section, n: Number(n), file: file as ShardFile } : null;
  }
  const text = TEXT_PATH.exec(pathname);
  if (text) {
    const [, section = "", n] = text;
    return SECTION_PATTERN.test(section) ? { kind: "text", section, n: Number(n) } : null;
  }
  const news = NEWS_PATH.exec(pathname);
  if (news) {
    const [, n, file] = news;
    return { kind: "news", n: n ? Number(n) : 1, file: file as ShardFile };
  }
  return null;
}
