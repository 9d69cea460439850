/** One item of a site's health list (src/admin/health.ts builds the list; docs/dashboard.md "Health"). */
export type HealthLevel = "red" | "amber";

export interface HealthItem {
  /** red: something is broken now (a crawler given an error, a feature off, work failing); amber: something to check. */
  level: HealthLevel;
  /** What it is about: `crawler`, `index`, `stale`, `robots`, `configuration`, `databases`, `jobs`, `mirrors`, `search-console`, `regeneration`, `notifications`, `ranges`, `lastmod`, `manifest`. */
  topic: string;
  message: string;
  /** What to do. */
  action: string;
  /** The document, sitemap or URL it is about, when it is about one. */
  document?: string;
}
