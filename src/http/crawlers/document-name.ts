/**
 * The name the crawler log keeps for a requested path (src/crawlers/types.ts `CrawlerFetch.document`):
 * one name per document whatever its form, so that `.xml` and `.xml.gz` of a shard are one
 * document, and the names match the manifest's (`<section>-<n>`). Whether the answer names a
 * document at all is decided by what was served (`loggedDocument`), not by the path's syntax.
 */
import { isOk } from "../../crawlers/log-store.ts";
import { parseDocumentPath } from "../document-path.ts";

/** Paths are kept up to this many characters: a crawler's typo is stored, not a megabyte of it. */
export const PATH_KEPT = 200;

/** The document a path's syntax names (`/sitemap-pages-99999.xml`: `pages-99999`, whether the site has it or not); null for none. */
export function documentName(pathname: string, indexNowKey: string | null): string | null {
  if (pathname === "/robots.txt") return "robots.txt";
  const path = parseDocumentPath(pathname, indexNowKey);
  switch (path?.kind) {
    case "index":
      return "index";
    case "shard":
      return `${path.section}-${path.n}`;
    case "text":
      return `text-${path.section}-${path.n}`;
    case "news":
      return `news-${path.n}`;
    case "feed":
      return "feed";
    case "xsl":
      return "stylesheet";
    case "indexnow-key":
      return "indexnow-key";
    case undefined:
      return null;
  }
}

/** Documents at one fixed path each: a failed answer for one of them names it (they cannot be made up in numbers). */
const FIXED_PATHS: ReadonlySet<string> = new Set(["index", "robots.txt", "feed", "stylesheet", "indexnow-key"]);

/**
 * The document an answer names for the log's rows; null: only counted (issue 50). A served answer
 * (2xx, 304: HEAD, a range and either form of a shard included) names the document it served. A
 * failed one (404, 410, 503…) names only a document at a fixed path, whose failure is the
 * site's (the index not published, robots.txt failing): a shard, text or news sitemap's number
 * and section come from the path alone, so `/sitemap-pages-99999.xml` would be a "document" and a
 * red item per made-up path.
 */
export function loggedDocument(named: string | null, status: number): string | null {
  if (named === null) return null;
  return isOk(status) || FIXED_PATHS.has(named) ? named : null;
}
