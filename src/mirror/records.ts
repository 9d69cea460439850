/**
 * A mirrored `<url>` → a record, tolerantly, as the import CLI does by default
 * (src/ingest/tolerate.ts): an extension part the record model cannot represent is dropped and
 * counted, the URL kept; only a record whose own fields break a rule (a bad loc, a site this
 * deployment does not serve) is rejected.
 */
import { type ValidRecord, type ValidationContext, validateRecord } from "../core/validate.ts";
import { dropParts, isPart } from "../ingest/tolerate.ts";

export type Mirrored = { record: ValidRecord; dropped: number } | { record: null; dropped: number };

export function mirroredRecord(input: Record<string, unknown>, ctx: ValidationContext): Mirrored {
  let current = input;
  let dropped = 0;
  // Each round removes at least one part: it ends.
  for (;;) {
    const result = validateRecord(current, ctx);
    if (result.ok) return { record: result.record, dropped };
    if (!result.issues.every((issue) => isPart(issue.field))) return { record: null, dropped };
    const less = dropParts(current, result.issues);
    if (less === undefined) return { record: null, dropped };
    current = less.input;
    dropped += less.kinds.length;
  }
}
