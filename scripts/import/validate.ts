/**
 * Local validation of a batch with the core validator, before anything is sent: invalid records
 * are reported with their file and line and left out; so are duplicates of a loc seen in an
 * earlier batch (unless --no-dedupe).
 */
import { RecordValidationError } from "../../src/core/errors.ts";
import { DEFAULT_SECTION } from "../../src/core/limits.ts";
import { type ValidRecord, type ValidationContext, validateBatch } from "../../src/core/validate.ts";
import type { ImportOptions } from "./options.ts";
import { type Problems, issueText } from "./problems.ts";
import { rehost } from "./rehost.ts";
import type { ImportSummary } from "./summary.ts";
import type { Entry } from "./walk.ts";

/** An entry that passed: its input (rehosted if so) and the record the core made of it. */
export interface Valid extends Entry {
  record: ValidRecord;
}

/** Every origin is acceptable: the server's SITES decide. */
class AnySite extends Set<string> {
  override has(): boolean {
    return true;
  }
}

export class BatchValidator {
  readonly #ctx: ValidationContext;
  readonly #summary: ImportSummary;
  readonly #problems: Problems;
  readonly #dedupe: boolean;
  /** Where each loc was first seen: source id × 2³² + line. */
  #seen = new Map<string, number>();
  readonly #sourceIds = new Map<string, number>();
  readonly #sourceNames: string[] = [];
  /** Origins of the valid records (what the import needs to be configured sites). */
  readonly origins = new Set<string>();

  constructor(options: ImportOptions, summary: ImportSummary, problems: Problems) {
    const sites = options.sites ? new Set(options.sites) : options.origin ? new Set([options.origin]) : new AnySite();
    this.#ctx = { sites, defaultSection: options.section ?? DEFAULT_SECTION };
    this.#summary = summary;
    this.#problems = problems;
    this.#dedupe = !options.noDedupe;
  }

  /** A new pass sees every loc again. */
  restart(): void {
    this.#seen = new Map();
  }

  #sourceId(source: string): number {
    let id = this.#sourceIds.get(source);
    if (id === undefined) {
      id = this.#sourceNames.push(source) - 1;
      this.#sourceIds.set(source, id);
    }
    return id;
  }

  /** Valid entries of a batch; reports the others (core rules, then duplicates across batches). */
  validate(batch: readonly Entry[]): Valid[] {
    const to = this.#summary.rehostedTo;
    const inputs = batch.map((e) => (to !== null ? rehost(e.input, to) : e.input));
    let indices = batch.map((_, i) => i);
    let records: ValidRecord[] = [];
    // Removing bad records can leave a variant whose hreflang partner was removed: re-check.
    // Each round removes at least one record, so this ends.
    while (indices.length > 0) {
      try {
        records = validateBatch(
          indices.map((i) => inputs[i]),
          this.#ctx,
        );
        break;
      } catch (err) {
        if (!(err instanceof RecordValidationError)) throw err;
        const bad = new Set<number>();
        for (const issue of err.issues) {
          const i = indices[issue.index ?? -1];
          if (i === undefined) continue;
          // The core names the first occurrence by its batch index: name its file and line instead.
          const text = issueText(issue).replace(/\(first at record (\d+)\)/, (whole, n: string) => {
            const first = batch[indices[Number(n)] ?? -1];
            return first ? `(first at ${first.source}:${first.line})` : whole;
          });
          this.#problems.report(`${batch[i]!.source}:${batch[i]!.line}`, text, !bad.has(issue.index!));
          bad.add(issue.index!);
        }
        if (bad.size === 0) throw err;
        indices = indices.filter((_, k) => !bad.has(k));
        records = [];
      }
    }
    const valid: Valid[] = [];
    records.forEach((record, k) => {
      const entry = batch[indices[k]!]!;
      const first = this.#seen.get(record.loc);
      if (first !== undefined) {
        const where = `${this.#sourceNames[Math.floor(first / 2 ** 32)]}:${first % 2 ** 32}`;
        const duplicate = { field: "loc", rule: "duplicate-loc" as const, message: `loc ${record.loc} appears more than once (first at ${where})` };
        this.#problems.report(`${entry.source}:${entry.line}`, issueText(duplicate));
        return;
      }
      if (this.#dedupe) this.#seen.set(record.loc, this.#sourceId(entry.source) * 2 ** 32 + entry.line);
      this.origins.add(record.origin);
      valid.push({ ...entry, input: inputs[indices[k]!]!, record });
    });
    return valid;
  }
}
