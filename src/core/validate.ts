/**
 * Record validation: turns untrusted input (ingest API, seed files, imports) into records the
 * renderer can write without further checks. The rules are the record declaration's
 * (record/schema.ts); this adds what depends on the deployment (configured sites, default
 * section) and on the batch (duplicate locs, hreflang sets). Every issue of every record is
 * collected, so a client fixes a rejected batch in one round trip.
 */
import { z } from "zod";
import { RecordValidationError, type ValidationIssue } from "./errors.ts";
import type { RecordExtensions } from "./extensions/types.ts";
import { MAX_LOC_LENGTH } from "./limits.ts";
import { type BatchEntry, alternateSetIssues } from "./record/alternate-sets.ts";
import { echo, isPlainObject } from "./record/echo.ts";
import { countValidationIssues, toValidationIssues } from "./record/issues.ts";
import { RecordInputSchema, recordIssueRank } from "./record/schema.ts";

type RecordInput = z.output<typeof RecordInputSchema>;

import { type SectionRule, sectionByRule } from "./section-rules.ts";
import type { Changefreq, UrlRecord } from "./types.ts";
import { normalizeLoc } from "./url.ts";

export interface ValidationContext {
  /** Allowed origins, as returned by normalizeOrigin. */
  sites: ReadonlySet<string>;
  defaultSection: string;
  /** SECTION_RULES: the section of a record that names none (first match wins). */
  sectionRules?: readonly SectionRule[];
  /** The server's clock (ms) for the lastmod sanity check; Date.now() when absent. */
  now?: number;
}

/** A lastmod further ahead of the server's clock than this is a data error ("future-date"). */
const LASTMOD_AHEAD_MS = 24 * 3600_000;

export interface ValidRecord extends UrlRecord {
  /** Origin of `loc`, one of ValidationContext.sites. */
  origin: string;
  section: string;
  /**
   * true when neither the record nor a section rule named the section, so `section` is
   * ctx.defaultSection: a store keeps the section of a record that already exists (re-sending a
   * record never moves it) and uses `section` only for a new one. Absent: `section` is meant.
   */
  sectionDefaulted?: boolean;
  /**
   * Protocol extension fields (`images`, `videos`, `news`, `alternates`), validated and
   * normalised by the record declaration (record/schema.ts). Present only when the input had one of them.
   */
  ext?: RecordExtensions;
}

export type ValidationResult = { ok: true; record: ValidRecord } | { ok: false; issues: ValidationIssue[] };

/** Long enough to show any loc that could be valid, plus a margin to see why it was not. */
const MAX_ISSUE_LOC = MAX_LOC_LENGTH + 64;
/** Issues keep the input they reject: the messages quote it. */
const PARSE_OPTIONS = { reportInput: true } as const;
/** zod's parse context, made once: safeParse would copy it for every record. Nothing writes to it (no recursive schema). */
const PARSE_CONTEXT: z.core.ParseContextInternal = { ...PARSE_OPTIONS, async: false };
/** The origin of a normalised loc: everything before its path, query or fragment (no credentials, so no "@"). */
function originOf(loc: string): string {
  const start = loc.indexOf("://") + 3;
  for (let i = start; i < loc.length; i++) {
    const c = loc.charCodeAt(i);
    if (c === 0x2f || c === 0x3f || c === 0x23) return loc.slice(0, i); // "/", "?", "#"
  }
  return loc;
}

/** Issues kept per record, at most: a hostile record (one object, 100,000 unknown keys) stays small. */
const MAX_ISSUES_PER_RECORD = 1_000;

const cutLoc = (raw: string): string => (raw.length > MAX_ISSUE_LOC ? `${raw.slice(0, MAX_ISSUE_LOC)}…` : raw);

interface Checked {
  result: ValidationResult;
  /** Normalised loc whenever it normalised, even if other fields failed: for duplicate detection. */
  loc: string | null;
  /** Issues of this record beyond MAX_ISSUES_PER_RECORD: counted, not kept. */
  unlisted?: number;
}

function withWhere(issue: ValidationIssue, index: number | undefined, loc: string | undefined): ValidationIssue {
  const out: ValidationIssue = { field: issue.field, rule: issue.rule, message: issue.message };
  if (index !== undefined) out.index = index;
  if (loc !== undefined) out.loc = loc;
  return out;
}

/**
 * The normalised extensions, or undefined when none is present and non-empty. The entry types are
 * the schemas' outputs (extensions/types.ts), so no cast joins them.
 */
function extensionsOf(data: Pick<RecordInput, keyof RecordExtensions>): RecordExtensions | undefined {
  let ext: RecordExtensions | undefined;
  if (data.images !== undefined && data.images.length > 0) (ext ??= {}).images = data.images;
  if (data.videos !== undefined && data.videos.length > 0) (ext ??= {}).videos = data.videos;
  // A news entry without a publication never gets here: NewsSchema's check rejects it.
  if (data.news?.publication !== undefined) (ext ??= {}).news = { ...data.news, publication: data.news.publication };
  if (data.alternates !== undefined && data.alternates.length > 0) (ext ??= {}).alternates = data.alternates;
  return ext;
}

/**
 * `room`: issues the caller can still list. With none left (a batch past its listed cap), the
 * record's issues are only counted, never given messages: a flood of bad records costs no strings.
 */
function check(input: unknown, ctx: ValidationContext, index: number | undefined, room = MAX_ISSUES_PER_RECORD): Checked {
  if (!isPlainObject(input)) {
    const issue: ValidationIssue = { field: "record", rule: "type", message: `record must be a JSON object, got ${echo(input)}` };
    return { result: { ok: false, issues: [withWhere(issue, index, undefined)] }, loc: null };
  }
  // Own properties only: a plain object's prototype is Object.prototype or null, neither has these keys.
  const rawLoc = input["loc"];
  const issueLoc = typeof rawLoc === "string" ? cutLoc(rawLoc) : undefined;
  const parsed = RecordInputSchema._zod.run({ value: input, issues: [] }, PARSE_CONTEXT) as z.core.ParsePayload<RecordInput>;
  const success = parsed.issues.length === 0;
  let loc: string | null;
  let issues: ValidationIssue[];
  let unlisted = 0;
  if (success) {
    loc = parsed.value.loc;
    issues = [];
  } else {
    if (room > 0) {
      const config = z.config();
      const zodIssues = parsed.issues.map((iss) => z.core.util.finalizeIssue(iss, PARSE_CONTEXT, config));
      const converted = toValidationIssues(zodIssues, { index, loc: issueLoc }, recordIssueRank, Math.min(room, MAX_ISSUES_PER_RECORD));
      issues = converted.issues;
      unlisted = converted.count - issues.length;
    } else {
      issues = [];
      unlisted = countValidationIssues(parsed.issues);
    }
    const locFailed = room > 0 ? issues.some((i) => i.field === "loc") : parsed.issues.some((iss) => iss.path?.[0] === "loc");
    const normalised = typeof rawLoc === "string" && !locFailed ? normalizeLoc(rawLoc) : null;
    loc = normalised?.ok ? normalised.loc : null;
  }
  const origin = loc === null ? "" : originOf(loc);
  if (loc !== null && !ctx.sites.has(origin)) {
    // A loc issue, so it comes first (a loc that normalised has no other).
    const sites = [...ctx.sites].join(", ") || "none configured";
    issues.unshift(withWhere({ field: "loc", rule: "site", message: `loc is on ${origin}, which is not a configured site (${sites})` }, index, issueLoc));
  }
  if (!success || issues.length > 0) return { result: { ok: false, issues }, loc, unlisted };

  const data = parsed.value;
  // Engines want lastmod to match reality: a date a day or more ahead (clock skew and time zones
  // stay below that) is a data error. A partial date (W3C "2031", "2031-05") counts from its first instant.
  if (data.lastmod && Date.parse(data.lastmod) > (ctx.now ?? Date.now()) + LASTMOD_AHEAD_MS) {
    const issue: ValidationIssue = {
      field: "lastmod",
      rule: "future-date",
      message: `lastmod ${data.lastmod} is more than 24 hours in the future (now: ${new Date(ctx.now ?? Date.now()).toISOString()})`,
    };
    return { result: { ok: false, issues: [withWhere(issue, index, issueLoc)] }, loc };
  }
  const section = data.section ?? sectionByRule(ctx.sectionRules ?? [], data.loc);
  // Every field always present (null when absent): one object shape for the whole batch.
  const record: ValidRecord = {
    loc: data.loc,
    lastmod: data.lastmod ?? null,
    changefreq: (data.changefreq as Changefreq | undefined) ?? null,
    priority: data.priority ?? null,
    origin,
    section: section ?? ctx.defaultSection,
    sectionDefaulted: section === null,
  };
  const ext = extensionsOf(data);
  if (ext !== undefined) record.ext = ext;
  return { result: { ok: true, record }, loc };
}

/**
 * Validates and normalises one record. `index` (position in its batch) is copied into issues.
 * Absent optional fields (undefined, null or "") become null; a missing `section` comes from the
 * first matching section rule, else ctx.defaultSection (marked `sectionDefaulted`).
 */
export function validateRecord(input: unknown, ctx: ValidationContext, index?: number): ValidationResult {
  return check(input, ctx, index).result;
}

export interface BatchOptions {
  /**
   * Issues kept in the error, at most (default: all). The rest are only counted in its
   * `issueCount`, so a hostile batch cannot make a huge error response.
   */
  maxIssues?: number;
}

/**
 * Validates a batch one record at a time, as a streamed body yields them: the caller can let each
 * input go once added. A `loc` that normalises to one seen earlier in the batch is a
 * "duplicate-loc" issue on the later record. Once any record failed, valid records are no longer
 * kept (the batch will be refused), so a failing batch costs only its issues (up to
 * `options.maxIssues`) and the locs seen.
 */
export class BatchValidator {
  readonly #ctx: ValidationContext;
  readonly #maxIssues: number;
  #records: ValidRecord[] = [];
  readonly #issues: ValidationIssue[] = [];
  #issueCount = 0;
  #index = 0;
  readonly #firstIndexOf = new Map<string, number>();
  readonly #withAlternates: BatchEntry[] = [];
  #anyAlternates = false;

  constructor(ctx: ValidationContext, options: BatchOptions = {}) {
    this.#ctx = ctx;
    this.#maxIssues = options.maxIssues ?? Number.POSITIVE_INFINITY;
  }

  #report(issue: ValidationIssue): void {
    this.#issueCount++;
    if (this.#issues.length < this.#maxIssues) this.#issues.push(issue);
  }

  /** Validates the next record of the batch. */
  add(input: unknown): void {
    const i = this.#index++;
    const { result, loc, unlisted = 0 } = check(input, this.#ctx, i, this.#maxIssues - this.#issues.length);
    if (result.ok) {
      if (this.#issueCount === 0) this.#records.push(result.record);
    } else {
      for (const issue of result.issues) this.#report(issue);
      this.#records = [];
    }
    this.#issueCount += unlisted;
    if (loc === null) return;
    const rawLoc = (input as { loc: string }).loc;
    // Any record may be another's hreflang variant: all take part in the set check in finish().
    const alternates = result.ok ? result.record.ext?.alternates : undefined;
    if (alternates) this.#anyAlternates = true;
    this.#withAlternates.push({ index: i, rawLoc, loc, alternates });

    const first = this.#firstIndexOf.get(loc);
    if (first === undefined) {
      this.#firstIndexOf.set(loc, i);
      return;
    }
    this.#records = [];
    this.#report({
      index: i,
      loc: cutLoc(rawLoc),
      field: "loc",
      rule: "duplicate-loc",
      message: `loc ${loc} appears more than once in the batch (first at record ${first})`,
    });
  }

  /**
   * The batch's records in input order, or a RecordValidationError carrying the issues of every
   * record (up to `options.maxIssues`, and their total count).
   */
  finish(): ValidRecord[] {
    if (this.#anyAlternates) {
      for (const issue of alternateSetIssues(this.#withAlternates)) this.#report(issue);
    }
    if (this.#issueCount > 0) throw new RecordValidationError(this.#issues, this.#issueCount);
    return this.#records;
  }
}

/** Validates a whole batch at once: see BatchValidator. */
export function validateBatch(inputs: readonly unknown[], ctx: ValidationContext, options: BatchOptions = {}): ValidRecord[] {
  const validator = new BatchValidator(ctx, options);
  for (const input of inputs) validator.add(input);
  return validator.finish();
}
