/**
 * The name the crawler log keeps for a requested path (src/crawlers/types.ts `CrawlerFetch.document`):
 * one name per document whatever its form, so that `.xml` and `.xml.gz` of a shard are one
 * document, and the names match the manifest's (`<section>-<n>`).
 */
import { parseDocumentPath } from "../document-path.ts";

/** Paths are kept up to this many characters: a crawler's typo is stored, not a megabyte of it. */
export const PATH_KEPT = 200;

/** The document a path names; null for a path that names none (a made-up `/sitemap-x.xml`): counted, never written as a row. */
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
