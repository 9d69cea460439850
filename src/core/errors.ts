/** Typed errors of the protocol core. */

/** The rule a record broke; stable identifiers, safe to show in API responses. */
export type ValidationRule =
  | "required"
  | "type"
  | "absolute-url"
  | "scheme"
  | "site"
  | "length"
  | "xml-char"
  | "w3c-datetime"
  | "future-date"
  | "changefreq-enum"
  | "priority-range"
  | "section-name"
  | "duplicate-loc"
  | "unknown-field"
  // protocol extensions (src/core/extensions/)
  | "max-count"
  | "range"
  | "enum"
  | "format"
  | "hreflang-self"
  | "hreflang-duplicate"
  | "hreflang-mismatch"
  // a full sync (src/store/port.ts RecordSync): the record is outside the sync's sites or section
  | "scope";

export interface ValidationIssue {
  /** Position of the record in its batch (0-based), when there is a batch. */
  index?: number;
  /** The record's `loc` as given (may be invalid itself). */
  loc?: string;
  field: string;
  rule: ValidationRule;
  message: string;
}

/**
 * One or more records broke a rule. `issues` names each record, field and rule; `issueCount` is
 * the total, which is more than `issues.length` when the validator was told to keep fewer.
 */
export class RecordValidationError extends Error {
  override readonly name = "RecordValidationError";
  readonly issues: ValidationIssue[];
  readonly issueCount: number;
  constructor(issues: ValidationIssue[], issueCount = issues.length) {
    super(
      issues
        .slice(0, 5)
        .map((i) => `${i.index !== undefined ? `record ${i.index}` : "record"}${i.loc ? ` (${i.loc})` : ""}: ${i.field}: ${i.message} [${i.rule}]`)
        .join("; ") + (issueCount > 5 ? `; and ${issueCount - 5} more` : ""),
    );
    this.issues = issues;
    this.issueCount = issueCount;
  }
}

/** A rendered document would break a protocol limit (URLs or bytes per file). */
export class SitemapLimitError extends Error {
  override readonly name = "SitemapLimitError";
  readonly limit: "urls" | "bytes";
  readonly max: number;
  constructor(limit: "urls" | "bytes", max: number, message: string) {
    super(message);
    this.limit = limit;
    this.max = max;
  }
}

/** A urlset with no `<url>` is invalid (sitemap.xsd minOccurs=1): never emit one. */
export class EmptySitemapError extends Error {
  override readonly name = "EmptySitemapError";
  constructor(message = "refusing to emit an empty urlset: sitemap.xsd requires at least one <url>") {
    super(message);
  }
}
