/** The sitemap index URLs of a site: what robots.txt lists and what pings and Search Console announce. */
import { INDEX_PATH } from "../documents/paths.ts";

export function indexUrls(origin: string): string[] {
  return [origin + INDEX_PATH];
}
