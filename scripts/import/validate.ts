/**
 * Local validation of a batch with the core validator, before anything is sent: invalid records
 * are reported with their file and line and left out.
 *
 * By default the import is tolerant (tolerate.ts): extension parts the record model cannot
 * represent are dropped and the URL kept, and a repeated loc replaces the earlier one (the last
 * occurrence wins, counted in `duplicates`). With --strict a record with any bad part is invalid
 * and a repeated loc is an error, as the admin API has it.
 *
 * Locs are tracked across batches to find repeats (unless --no-dedupe), at most
 * MAX_TRACKED_LOCS of them: past that, repeats across batches are no longer counted; the Worker's
 * upsert still keeps the last of each.
 */
import { RecordValidationError, type ValidationIssue } from "../../src/core/errors.ts";
import { DEFAULT_SECTION } from "../../src/core/limits.ts";
import { normalizeLoc } from "../../src/core/url.ts";
import { type ValidRecord, type ValidationContext, validateBatch } from "../../src/core/validate.ts";
import { dropParts, isPart } from "../../src/ingest/tolerate.ts";
import type { ImportOptions } from "./options.ts";
import { type Problems, issueText } from "./problems.ts";
import { rehost } from "./rehost.ts";
import type { ImportSummary } from "./summary.ts";
import type { Entry } from "./walk.ts";

/** An entry that passed: its input (rehosted and trimmed if so) and the record the core made of it. */
export interface Valid extends Entry {
  record: ValidRecord;
}

/** Every origin is acceptable: the server's SITES decide. */
class AnySite extends Set<string> {
  override has(): boolean {
    return true;
  }
}

/** Locs remembered across batches at most (~130 bytes each: about 130 MB). */
const MAX_TRACKED_LOCS = 1_000_000;

export class BatchValidator {
  readonly #ctx: ValidationContext;
  readonly #summary: ImportSummary;
  readonly #problems: Problems;
  readonly #dedupe: boolean;
  readonly #strict: boolean;
  /** Where each loc was first seen: source id × 2³² + line. */
  #seen = new Map<string, number>();
  #full = false;
  readonly #sourceIds = new Map<string, number>();
  readonly #sourceNames: string[] = [];
  /** Where the first repeated loc was met (tolerant mode), for the warning. */
  firstRepeatAt: string | undefined;
  /** Records of this batch that replace one of an earlier batch (tolerant mode). */
  #replaced = 0;
  /** Origins of the valid records (what the import needs to be configured sites). */
  readonly origins = new Set<string>();

  constructor(options: ImportOptions, summary: ImportSummary, problems: Problems) {
    const sites = options.sites ? new Set(options.sites) : options.origin ? new Set([options.origin]) : new AnySite();
    this.#ctx = { sites, defaultSection: options.section ?? DEFAULT_SECTION };
    this.#summary = summary;
    this.#problems = problems;
    this.#dedupe = !options.noDedupe;
    this.#strict = options.strict;
  }

  /** A new pass sees every loc again. */
  restart(): void {
    this.#seen = new Map();
    this.#full = false;
    this.firstRepeatAt = undefined;
  }

  /** How many valid records of the last batch replace a record of an earlier batch (and were not new). */
  takeReplaced(): number {
    const n = this.#replaced;
    this.#replaced = 0;
    return n;
  }

  #sourceId(source: string): number {
    let id = this.#sourceIds.get(source);
    if (id === undefined) {
      id = this.#sourceNames.push(source) - 1;
      this.#sourceIds.set(source, id);
    }
    return id;
  }

  #where(packed: number): string {
    return `${this.#sourceNames[Math.floor(packed / 2 ** 32)]}:${packed % 2 ** 32}`;
  }

  /** Tolerant mode: a loc repeated within the batch keeps only its last occurrence. */
  #lastOccurrences(batch: readonly Entry[], inputs: readonly Record<string, unknown>[]): number[] {
    const last = new Map<string, number>();
    const keep = batch.map(() => true);
    inputs.forEach((input, i) => {
      const raw = input["loc"];
      const n = typeof raw === "string" ? normalizeLoc(raw) : undefined;
      if (!n?.ok) return;
      const earlier = last.get(n.loc);
      if (earlier !== undefined) {
        keep[earlier] = false;
        this.#summary.duplicates += 1;
        this.firstRepeatAt ??= `${batch[i]!.source}:${batch[i]!.line}`;
      }
      last.set(n.loc, i);
    });
    return batch.map((_, i) => i).filter((i) => keep[i]);
  }

  /** Valid entries of a batch; reports the others (core rules, then repeats across batches). */
  validate(batch: readonly Entry[]): Valid[] {
    const to = this.#summary.rehostedTo;
    const inputs = batch.map((e) => (to !== null ? rehost(e.input, to) : e.input));
    let indices = this.#strict ? batch.map((_, i) => i) : this.#lastOccurrences(batch, inputs);
    /** Parts dropped from each entry, counted once the entry turns out valid. */
    const drops = new Map<number, string[]>();
    let records: ValidRecord[] = [];
    // Each round removes a record or a part of one (removing a record can leave a variant whose
    // hreflang partner is gone): it ends.
    while (indices.length > 0) {
      try {
        records = validateBatch(
          indices.map((i) => inputs[i]),
          this.#ctx,
        );
        break;
      } catch (err) {
        if (!(err instanceof RecordValidationError)) throw err;
        const bad = this.#round(err.issues, batch, inputs, indices, drops);
        if (bad === undefined) throw err;
        indices = indices.filter((_, k) => !bad.has(k));
        records = [];
      }
    }
    const valid: Valid[] = [];
    records.forEach((record, k) => {
      const i = indices[k]!;
      const entry = batch[i]!;
      for (const kind of drops.get(i) ?? []) this.#problems.dropped(kind, `${entry.source}:${entry.line}`, "the URL was kept without it");
      const first = this.#seen.get(record.loc);
      if (first !== undefined) {
        if (this.#strict) {
          const duplicate = {
            field: "loc",
            rule: "duplicate-loc" as const,
            message: `loc ${record.loc} appears more than once (first at ${this.#where(first)})`,
          };
          this.#problems.report(`${entry.source}:${entry.line}`, issueText(duplicate));
          return;
        }
        this.#summary.duplicates += 1;
        this.#replaced += 1;
        this.firstRepeatAt ??= `${entry.source}:${entry.line}`;
      } else if (this.#dedupe && !this.#full) {
        this.#seen.set(record.loc, this.#sourceId(entry.source) * 2 ** 32 + entry.line);
        if (this.#seen.size >= MAX_TRACKED_LOCS) this.#full = true;
      }
      this.origins.add(record.origin);
      valid.push({ ...entry, input: inputs[i]!, record });
    });
    return valid;
  }

  /**
   * One failed validation: drops the parts that may go (tolerant mode) and returns the positions
   * (in `indices`) of the records rejected; undefined when the issues name no record.
   */
  #round(
    issues: readonly ValidationIssue[],
    batch: readonly Entry[],
    inputs: Record<string, unknown>[],
    indices: readonly number[],
    drops: Map<number, string[]>,
  ): Set<number> | undefined {
    const bad = new Set<number>();
    const parts = new Map<number, ValidationIssue[]>();
    const where = (k: number) => `${batch[indices[k]!]!.source}:${batch[indices[k]!]!.line}`;
    const reject = (k: number, issue: ValidationIssue): void => {
      // The core names the first occurrence by its batch index: name its file and line instead.
      const text = issueText(issue).replace(/\(first at record (\d+)\)/, (whole, n: string) =>
        indices[Number(n)] === undefined ? whole : `(first at ${where(Number(n))})`,
      );
      this.#problems.report(where(k), text, !bad.has(k));
      bad.add(k);
    };
    for (const issue of issues) {
      const k = issue.index;
      if (k === undefined || indices[k] === undefined) continue;
      if (this.#strict || !isPart(issue.field)) {
        reject(k, issue);
        continue;
      }
      parts.set(k, [...(parts.get(k) ?? []), issue]);
      // An hreflang set that disagrees with another record's: both records lose their links.
      const other = issue.rule === "hreflang-mismatch" ? /record (\d+)/.exec(issue.message) : null;
      const o = other ? Number(other[1]) : undefined;
      if (o !== undefined && indices[o] !== undefined) parts.set(o, [...(parts.get(o) ?? []), { ...issue, index: o }]);
    }
    for (const [k, list] of parts) {
      if (bad.has(k)) continue;
      const i = indices[k]!;
      const dropped = dropParts(inputs[i]!, list);
      if (dropped === undefined) {
        for (const issue of list) reject(k, issue);
        continue;
      }
      inputs[i] = dropped.input;
      drops.set(i, [...(drops.get(i) ?? []), ...dropped.kinds]);
    }
    return bad.size === 0 && parts.size === 0 ? undefined : bad;
  }
}
