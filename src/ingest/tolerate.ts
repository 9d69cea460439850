/**
 * The tolerant import (the default; --strict turns it off): an issue the core validator finds in
 * an extension part of a record (an image, a video, an hreflang link, the news entry) drops that
 * part, and the record is validated again without it. Only issues of the record's own fields
 * (loc, lastmod, changefreq, priority, section, …) reject it. The API stays strict: this runs
 * only in the importer, which exists to bring in sitemaps as they are.
 *
 * Dropping by the issues' field paths (rather than pre-filtering the raw input here) keeps one
 * set of rules: whatever src/core/validate.ts rejects is what is dropped, nothing is guessed.
 */
import type { ValidationIssue } from "../core/errors.ts";

/** The element each extension part comes from in a sitemap, for the report. */
const PARTS: Readonly<Record<string, string>> = {
  images: "<image:image>",
  videos: "<video:video>",
  alternates: "<xhtml:link>",
  news: "<news:news>",
};

const PART_FIELD = /^(images|videos|alternates|news)(?:\[(\d+)\])?(?=$|[.[])/;

/** Whether the importer may drop what `field` names (rather than reject the record). */
export function isPart(field: string): boolean {
  return PART_FIELD.test(field);
}

/** What one drop was: its kind, for the counts (`<video:video>: videos[].title [required]`). */
function kindOf(issue: Pick<ValidationIssue, "field" | "rule">): string {
  const [, key] = PART_FIELD.exec(issue.field) ?? [];
  return `${PARTS[key ?? ""] ?? issue.field}: ${issue.field.replace(/\[\d+\]/g, "[]")} [${issue.rule}]`;
}

/**
 * `input` without the parts the issues name (a list entry, or the whole list or news entry when
 * the issue is about it as a whole), and the kinds dropped; undefined when nothing could be
 * dropped (the issues name parts that are already gone), so the caller rejects the record.
 */
export function dropParts(
  input: Record<string, unknown>,
  issues: readonly Pick<ValidationIssue, "field" | "rule">[],
): { input: Record<string, unknown>; kinds: string[] } | undefined {
  const out: Record<string, unknown> = { ...input };
  const kinds: string[] = [];
  const entries = new Map<string, Set<number>>();
  for (const issue of issues) {
    const [, key, index] = PART_FIELD.exec(issue.field) ?? [];
    if (key === undefined || !(key in out)) continue;
    const list = out[key];
    if (index !== undefined && Array.isArray(list) && Number(index) < list.length) {
      const set = entries.get(key) ?? new Set();
      if (!set.has(Number(index))) kinds.push(kindOf(issue));
      entries.set(key, set.add(Number(index)));
    } else if (index === undefined) {
      delete out[key];
      entries.delete(key);
      kinds.push(kindOf(issue));
    }
  }
  for (const [key, drop] of entries) {
    const list = out[key];
    if (!Array.isArray(list)) continue;
    const kept = list.filter((_, i) => !drop.has(i));
    if (kept.length > 0) out[key] = kept;
    else delete out[key];
  }
  return kinds.length === 0 ? undefined : { input: out, kinds };
}
