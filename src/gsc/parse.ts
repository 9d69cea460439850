/**
 * Search Console's `sitemaps.list` answer (Webmasters API v3: `{"sitemap": [WmxSitemap…]}`) to
 * SitemapReports. The API writes int64 counts as strings and times as RFC 3339; an entry that does
 * not fit is skipped and counted, never guessed at, and a count that is missing or does not parse
 * is unknown (null), never 0. Which entries are kept is decided by src/gsc/keep.ts.
 */
import { z } from "zod";
import type { SitemapReport } from "./store.ts";

/** Content types kept per sitemap (the API knows a handful). */
const MAX_CONTENT_TYPES = 16;
const MAX_PATH_CHARS = 2048;

/** A count: int64 as a string (the API's form) or a number; anything else is unknown (null). */
const count = z
  .union([
    z
      .string()
      .regex(/^\d{1,15}$/)
      .transform(Number),
    z.number().int().nonnegative(),
  ])
  .optional()
  .catch(undefined)
  .transform((n) => n ?? null);

const time = z
  .string()
  .optional()
  .catch(undefined)
  .transform((text) => {
    const ms = text === undefined ? Number.NaN : Date.parse(text);
    return Number.isFinite(ms) ? ms : null;
  });

const Entry = z.object({
  path: z.string().min(1).max(MAX_PATH_CHARS),
  lastSubmitted: time,
  lastDownloaded: time,
  isPending: z.boolean().optional().catch(undefined),
  isSitemapsIndex: z.boolean().optional().catch(undefined),
  errors: count,
  warnings: count,
  contents: z
    .array(z.unknown())
    .optional()
    .catch(undefined)
    .transform((list) =>
      (list ?? []).slice(0, MAX_CONTENT_TYPES).flatMap((c) => {
        const parsed = z.object({ type: z.string().max(32), submitted: count }).safeParse(c);
        return parsed.success ? [parsed.data] : [];
      }),
    ),
});

export interface ParsedList {
  sitemaps: SitemapReport[];
  /** Entries not of the documented shape. */
  dropped: number;
}

/** null: the text is not a sitemaps.list answer at all. */
export function parseSitemapsList(text: string): ParsedList | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
  // An answer without the field is a site with no sitemaps (the API leaves empty lists out).
  const list = (json as { sitemap?: unknown }).sitemap ?? [];
  if (!Array.isArray(list)) return null;
  const sitemaps: SitemapReport[] = [];
  let dropped = 0;
  for (const raw of list) {
    const entry = Entry.safeParse(raw);
    if (!entry.success) {
      dropped++;
      continue;
    }
    const e = entry.data;
    sitemaps.push({
      path: e.path,
      lastSubmitted: e.lastSubmitted,
      lastDownloaded: e.lastDownloaded,
      isPending: e.isPending ?? false,
      isSitemapsIndex: e.isSitemapsIndex ?? false,
      errors: e.errors,
      warnings: e.warnings,
      contents: e.contents,
    });
  }
  return { sitemaps, dropped };
}
