/**
 * A mirrored `<url>` → what the pass does with it (docs/mirror.md "Invalid entries"). A mirror
 * never deletes a URL its remote lists, so an entry that fails validation keeps its URL:
 *
 * - an invalid field of the record's own (a lastmod in 2099, a priority of 1.5, a changefreq of
 *   `Daily`) is dropped and the record written without it, as an extension part the record model
 *   cannot represent is dropped (src/ingest/tolerate.ts), the URL kept;
 * - an entry malformed as XML (two `<lastmod>`, a bad reference) says nothing reliable but its
 *   loc: the stored record of that loc, if any, is kept as it is and counted as seen;
 * - only an entry whose loc itself is invalid (not a URL, a site this deployment does not serve)
 *   is rejected. Such a loc names no stored record, so rejecting it deletes nothing listed.
 */
import { type ValidRecord, type ValidationContext, validateRecord } from "../core/validate.ts";
import { dropParts, isPart } from "../ingest/tolerate.ts";

export type Mirrored =
  /** Written; `repaired`: without one or more invalid fields of its own. */
  | { kind: "record"; record: ValidRecord; dropped: number; repaired: boolean }
  /** Not written: the stored record of `loc` (normalised, on `origin`), if any, is kept. */
  | { kind: "keep"; loc: string; origin: string; dropped: number }
  | { kind: "rejected"; dropped: number };

/** The record's own optional fields: one that is invalid is dropped, the URL kept. */
const OWN_FIELDS: ReadonlySet<string> = new Set(["lastmod", "changefreq", "priority"]);

/** `error`: the XML reader found the entry itself malformed (SitemapItem.error). */
export function mirroredRecord(input: Record<string, unknown>, ctx: ValidationContext, error?: string): Mirrored {
  if (error !== undefined) return keepLoc(input, ctx, 0);
  let current = input;
  let dropped = 0;
  let repaired = false;
  // Each round removes at least one field or part: it ends.
  for (;;) {
    const result = validateRecord(current, ctx);
    if (result.ok) return { kind: "record", record: result.record, dropped, repaired };
    const own = result.issues.filter((issue) => OWN_FIELDS.has(issue.field) && issue.field in current);
    if (own.length > 0 && result.issues.every((issue) => OWN_FIELDS.has(issue.field) || isPart(issue.field))) {
      current = { ...current };
      for (const issue of own) delete current[issue.field];
      repaired = true;
      continue;
    }
    const less = result.issues.every((issue) => isPart(issue.field)) ? dropParts(current, result.issues) : undefined;
    // Nothing more to drop: the loc decides (keep the stored record, or reject a bad loc).
    if (less === undefined) return keepLoc(current, ctx, dropped);
    current = less.input;
    dropped += less.kinds.length;
  }
}

/** The entry's loc alone, validated: kept when it is a valid URL of a configured site. */
function keepLoc(input: Record<string, unknown>, ctx: ValidationContext, dropped: number): Mirrored {
  const result = validateRecord({ loc: input["loc"] }, ctx);
  return result.ok ? { kind: "keep", loc: result.record.loc, origin: result.record.origin, dropped } : { kind: "rejected", dropped };
}
