/**
 * Record validation: turns untrusted input (ingest API, seed files, imports) into records the
 * renderer can write without further checks. Every issue of every record is collected, so a
 * client fixes a rejected batch in one round trip.
 */
import { echo, echoKey, isAbsent, isPlainObject } from "./input.ts";
import { normalizeW3cDatetime } from "./datetime.ts";
import { RecordValidationError, type ValidationIssue, type ValidationRule } from "./errors.ts";
import type { RecordExtensions } from "./extensions/types.ts";
import { type BatchEntry, EXTENSION_FIELDS, alternateSetIssues, validateExtensions } from "./extensions/validate.ts";
import { MAX_LOC_LENGTH, SECTION_PATTERN } from "./limits.ts";
import { CHANGEFREQS, type Changefreq, type UrlRecord } from "./types.ts";
import { normalizeLoc } from "./url.ts";
import { describeCharAt, findXmlForbiddenChar } from "./xml-chars.ts";

export interface ValidationContext {
  /** Allowed origins, as returned by normalizeOrigin. */
  sites: ReadonlySet<string>;
  defaultSection: string;
}

export interface ValidRecord extends UrlRecord {
  /** Origin of `loc`, one of ValidationContext.sites. */
  origin: string;
  section: string;
  /**
   * Protocol extension fields (`images`, `videos`, `news`, `alternates`), validated and
   * normalised by extensions/validate.ts. Present only when the input had one of them.
   */
  ext?: RecordExtensions;
}

export type ValidationResult = { ok: true; record: ValidRecord } | { ok: false; issues: ValidationIssue[] };

const KNOWN_FIELDS: ReadonlySet<string> = new Set(["loc", "lastmod", "changefreq", "priority", "section"]);
const ALLOWED_FIELDS_TEXT = [...KNOWN_FIELDS, ...EXTENSION_FIELDS].join(", ");
const CHANGEFREQ_SET: ReadonlySet<string> = new Set(CHANGEFREQS);
/** Same shape as a JSON decimal in 0.0–1.0; the numeric range check follows. */
const PRIORITY_STRING = /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/;
/** Long enough to show any loc that could be valid, plus a margin to see why it was not. */
const MAX_ISSUE_LOC = MAX_LOC_LENGTH + 64;

/** Accumulates issues of one record; allocates nothing for a valid record. */
class IssueSink {
  issues: ValidationIssue[] | undefined;
  private readonly index: number | undefined;
  private readonly loc: string | undefined;

  constructor(index: number | undefined, loc: string | undefined) {
    this.index = index;
    this.loc = loc;
  }

  add(field: string, rule: ValidationRule, message: string): void {
    const issue: ValidationIssue = { field, rule, message };
    if (this.index !== undefined) issue.index = this.index;
    if (this.loc !== undefined) issue.loc = this.loc;
    (this.issues ??= []).push(issue);
  }
}

/** xml-char check shared by every string field; true when the string is clean. */
function checkXmlChars(sink: IssueSink, field: string, value: string): boolean {
  const bad = findXmlForbiddenChar(value);
  if (bad === -1) return true;
  sink.add(field, "xml-char", `${field} contains ${describeCharAt(value, bad)} at position ${bad}, which XML 1.0 forbids`);
  return false;
}

/** Normalised loc and its origin, or null; `loc` may be normalised even if its site is not allowed. */
function checkLoc(sink: IssueSink, value: unknown, ctx: ValidationContext): { loc: string; origin: string } | null {
  if (isAbsent(value)) {
    sink.add("loc", "required", "loc is required (an absolute http or https URL)");
    return null;
  }
  if (typeof value !== "string") {
    sink.add("loc", "type", `loc must be a string, got ${echo(value)}`);
    return null;
  }
  const result = normalizeLoc(value);
  if (!result.ok) {
    sink.add("loc", result.rule, result.message);
    return null;
  }
  if (!ctx.sites.has(result.origin)) {
    sink.add("loc", "site", `loc is on ${result.origin}, which is not a configured site (${[...ctx.sites].join(", ") || "none configured"})`);
  }
  return result;
}

function checkLastmod(sink: IssueSink, value: unknown): string | null {
  if (isAbsent(value)) return null;
  if (typeof value !== "string") {
    sink.add("lastmod", "type", `lastmod must be a string, got ${echo(value)}`);
    return null;
  }
  if (!checkXmlChars(sink, "lastmod", value)) return null;
  const normalised = normalizeW3cDatetime(value);
  if (normalised === null) {
    sink.add(
      "lastmod",
      "w3c-datetime",
      `lastmod must be a W3C datetime (YYYY-MM-DD, or YYYY-MM-DDThh:mm[:ss[.s]] with Z or ±hh:mm), got ${echo(value)}`,
    );
  }
  return normalised;
}

function checkChangefreq(sink: IssueSink, value: unknown): Changefreq | null {
  if (isAbsent(value)) return null;
  if (typeof value !== "string") {
    sink.add("changefreq", "type", `changefreq must be a string, got ${echo(value)}`);
    return null;
  }
  if (!checkXmlChars(sink, "changefreq", value)) return null;
  if (CHANGEFREQ_SET.has(value)) return value as Changefreq;
  sink.add("changefreq", "changefreq-enum", `changefreq must be one of ${CHANGEFREQS.join(", ")} (lowercase), got ${echo(value)}`);
  return null;
}

function checkPriority(sink: IssueSink, value: unknown): number | null {
  if (isAbsent(value)) return null;
  let p: number;
  if (typeof value === "number") {
    p = value;
  } else if (typeof value === "string") {
    if (!checkXmlChars(sink, "priority", value)) return null;
    p = PRIORITY_STRING.test(value) ? Number(value) : Number.NaN;
  } else {
    sink.add("priority", "type", `priority must be a number, got ${echo(value)}`);
    return null;
  }
  if (!(p >= 0 && p <= 1)) {
    // `!(…)` so NaN lands here too; Infinity fails the range on its own.
    sink.add("priority", "priority-range", `priority must be between 0.0 and 1.0, got ${echo(value)}`);
    return null;
  }
  return p === 0 ? 0 : p; // -0 → 0, so it never prints as "-0.0"
}

function checkSection(sink: IssueSink, value: unknown, fallback: string): string {
  if (isAbsent(value)) return fallback;
  if (typeof value !== "string") {
    sink.add("section", "type", `section must be a string, got ${echo(value)}`);
    return fallback;
  }
  if (!checkXmlChars(sink, "section", value)) return fallback;
  if (SECTION_PATTERN.test(value)) return value;
  sink.add(
    "section",
    "section-name",
    `section must be 1–64 characters of a-z, 0-9, "_" and "-", starting and ending with a letter or digit, got ${echo(value)}`,
  );
  return fallback;
}

/** Flags unknown keys and collects extension fields; returns `ext` or undefined. */
function checkFields(sink: IssueSink, obj: Record<string, unknown>): Record<string, unknown> | undefined {
  let ext: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    if (KNOWN_FIELDS.has(key)) continue;
    if (EXTENSION_FIELDS.has(key)) {
      const value = obj[key];
      if (value !== undefined) (ext ??= {})[key] = value;
      continue;
    }
    const field = echoKey(key);
    sink.add(field, "unknown-field", `unknown field ${echo(key)} (allowed: ${ALLOWED_FIELDS_TEXT})`);
  }
  return ext;
}

interface Checked {
  result: ValidationResult;
  /** Normalised loc whenever it normalised, even if other fields failed: for duplicate detection. */
  loc: string | null;
}

function check(input: unknown, ctx: ValidationContext, index: number | undefined): Checked {
  if (!isPlainObject(input)) {
    const sink = new IssueSink(index, undefined);
    sink.add("record", "type", `record must be a JSON object, got ${echo(input)}`);
    return { result: { ok: false, issues: sink.issues ?? [] }, loc: null };
  }
  // Own properties only: a plain object's prototype is Object.prototype or null, neither has these keys.
  const rawLoc = input["loc"];
  const issueLoc = typeof rawLoc === "string" ? (rawLoc.length > MAX_ISSUE_LOC ? `${rawLoc.slice(0, MAX_ISSUE_LOC)}…` : rawLoc) : undefined;
  const sink = new IssueSink(index, issueLoc);

  const loc = checkLoc(sink, rawLoc, ctx);
  const lastmod = checkLastmod(sink, input["lastmod"]);
  const changefreq = checkChangefreq(sink, input["changefreq"]);
  const priority = checkPriority(sink, input["priority"]);
  const section = checkSection(sink, input["section"], ctx.defaultSection);
  const rawExt = checkFields(sink, input);
  const ext = rawExt === undefined ? undefined : validateExtensions(sink, rawExt, loc?.loc ?? null);

  if (sink.issues !== undefined || loc === null) {
    return { result: { ok: false, issues: sink.issues ?? [] }, loc: loc?.loc ?? null };
  }
  // Every field always present (null when absent): one object shape for the whole batch.
  const record: ValidRecord = { loc: loc.loc, lastmod, changefreq, priority, origin: loc.origin, section };
  if (ext !== undefined) record.ext = ext;
  return { result: { ok: true, record }, loc: loc.loc };
}

/**
 * Validates and normalises one record. `index` (position in its batch) is copied into issues.
 * Absent optional fields (undefined, null or "") become null; `section` defaults to
 * ctx.defaultSection.
 */
export function validateRecord(input: unknown, ctx: ValidationContext, index?: number): ValidationResult {
  return check(input, ctx, index).result;
}

/**
 * Validates a batch; a `loc` that normalises to one seen earlier in the batch is a
 * "duplicate-loc" issue on the later record. Throws RecordValidationError carrying every issue
 * of every record, or returns all records in input order.
 */
export function validateBatch(inputs: readonly unknown[], ctx: ValidationContext): ValidRecord[] {
  const records: ValidRecord[] = [];
  const issues: ValidationIssue[] = [];
  const firstIndexOf = new Map<string, number>();
  const withAlternates: BatchEntry[] = [];

  for (let i = 0; i < inputs.length; i++) {
    const { result, loc } = check(inputs[i], ctx, i);
    if (result.ok) records.push(result.record);
    else for (const issue of result.issues) issues.push(issue);
    if (loc !== null) {
      // Any record may be another's hreflang variant: all take part in the set check below.
      const alternates = result.ok ? result.record.ext?.alternates : undefined;
      withAlternates.push({ index: i, rawLoc: (inputs[i] as { loc: string }).loc, loc, alternates });
    }

    if (loc === null) continue;
    const first = firstIndexOf.get(loc);
    if (first === undefined) {
      firstIndexOf.set(loc, i);
      continue;
    }
    const rawLoc = (inputs[i] as { loc: string }).loc;
    issues.push({
      index: i,
      loc: rawLoc.length > MAX_ISSUE_LOC ? `${rawLoc.slice(0, MAX_ISSUE_LOC)}…` : rawLoc,
      field: "loc",
      rule: "duplicate-loc",
      message: `loc ${loc} appears more than once in the batch (first at record ${first})`,
    });
  }

  if (withAlternates.some((e) => e.alternates)) {
    for (const issue of alternateSetIssues(withAlternates)) issues.push(issue);
  }
  if (issues.length > 0) throw new RecordValidationError(issues);
  return records;
}
