/**
 * hreflang consistency within one batch: when a record lists another record of the same batch as
 * its variant, that record must list exactly the same set (every variant lists all variants).
 * Records outside the batch cannot be checked here; docs/extensions.md says so. A batch rule, so
 * it lives outside the per-record schema.
 */
import type { ValidationIssue } from "../errors.ts";
import type { AlternateLink } from "../extensions/types.ts";

export interface BatchEntry {
  index: number;
  /** The record's loc as given (for the issue). */
  rawLoc: string;
  loc: string;
  alternates: readonly AlternateLink[] | undefined;
}

/** Canonical text of an alternate set, for comparing the sets of two variants. */
function alternateSetKey(links: readonly AlternateLink[]): string {
  return links
    .map((l) => `${l.hreflang.toLowerCase()} ${l.href}`)
    .sort()
    .join("\n");
}

export function alternateSetIssues(entries: readonly BatchEntry[]): ValidationIssue[] {
  const byLoc = new Map<string, BatchEntry>();
  for (const e of entries) byLoc.set(e.loc, e);
  const issues: ValidationIssue[] = [];
  const reported = new Set<number>();
  // Each record's key at most once (a group of n variants costs n keys, not n² of them), and
  // only when a variant is in the batch: most sets point outside it.
  const keys = new Map<BatchEntry, string>();
  const keyOf = (entry: BatchEntry, links: readonly AlternateLink[]): string => {
    let key = keys.get(entry);
    if (key === undefined) keys.set(entry, (key = alternateSetKey(links)));
    return key;
  };
  for (const e of entries) {
    if (!e.alternates) continue;
    for (const link of e.alternates) {
      if (link.href === e.loc) continue;
      const other = byLoc.get(link.href);
      if (!other || reported.has(other.index)) continue;
      if (other.alternates && keyOf(other, other.alternates) === keyOf(e, e.alternates)) continue;
      reported.add(other.index);
      issues.push({
        index: other.index,
        loc: other.rawLoc,
        field: "alternates",
        rule: "hreflang-mismatch",
        message: other.alternates
          ? `alternates differ from those of record ${e.index} (${e.loc}), which lists this URL as hreflang "${link.hreflang}": every variant must list the same set`
          : `record ${e.index} (${e.loc}) lists this URL as hreflang "${link.hreflang}", but this record has no alternates: every variant must list the same set`,
      });
    }
  }
  return issues;
}
