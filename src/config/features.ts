/**
 * Configuration isolated by feature: serving sitemaps depends only on the variables it reads, so a
 * bad variable of an optional feature (a typo in `wrangler secret put INDEXNOW_KEY`, a mirror URL)
 * turns that feature off instead of taking the site down. The feature's value falls back to "off"
 * and the problem is kept in `Config.disabled`, which the admin status and `npm run check-config`
 * show (variable and rule, never the value).
 */
import { ConfigError } from "./error.ts";

/** The optional features, each with the variables it alone reads (src/config/parse.ts). */
export type Feature =
  | "notifications"
  | "indexnow"
  | "ping"
  | "search-console"
  | "search-console-status"
  | "access-sign-in"
  | "mirrors"
  | "robots"
  | "regeneration"
  | "admin"
  | "admin-ingest"
  | "browser-view"
  | "feed"
  | "crawler-log";

/** A feature turned off by a bad variable: what the status shows. */
export interface DisabledFeature {
  feature: Feature;
  variable: string;
  rule: string;
}

/**
 * The value `parse` gives, or `off` when it throws a ConfigError, noted in `disabled`. Any other
 * error is a bug and propagates.
 */
export function featureOrOff<T>(disabled: DisabledFeature[], feature: Feature, parse: () => T, off: T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    disabled.push({ feature, variable: error.variable, rule: error.rule });
    return off;
  }
}
