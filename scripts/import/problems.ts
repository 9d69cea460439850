/**
 * Problems of the input, as they are found: each bad line is counted and printed with its file and
 * line (up to --max-reported); what is not imported (elements the record model has no field for,
 * extension entries it cannot represent, feed entries without a link) is counted by kind and
 * listed at the end with its first place and the reason.
 */
import type { ValidationIssue } from "../../src/core/errors.ts";
import type { Progress } from "./progress.ts";
import type { ImportSummary } from "./summary.ts";

export const issueText = (i: Pick<ValidationIssue, "field" | "message" | "rule">): string => `${i.field}: ${i.message} [${i.rule}]`;

export class Problems {
  readonly #summary: ImportSummary;
  readonly #progress: Progress;
  readonly #maxReported: number;
  #reported = 0;
  /** Where each dropped kind was first seen, and why it was dropped. */
  readonly #droppedFirst = new Map<string, { where: string; why: string }>();

  constructor(summary: ImportSummary, progress: Progress, maxReported: number) {
    this.#summary = summary;
    this.#progress = progress;
    this.#maxReported = maxReported;
  }

  /** Reports a problem; `count` false for a further issue of a line already counted. */
  report(where: string, message: string, count = true): void {
    if (count) this.#summary.invalid += 1;
    this.#reported += 1;
    if (this.#reported <= this.#maxReported) this.#progress.message(`${where}: ${message}`);
    else if (this.#reported === this.#maxReported + 1) {
      this.#progress.message(`… more invalid lines are counted but not shown (--max-reported ${this.#maxReported})`);
    }
  }

  dropped(kind: string, where: string, why = "the record model has no field for it"): void {
    this.#summary.dropped[kind] = (this.#summary.dropped[kind] ?? 0) + 1;
    if (!this.#droppedFirst.has(kind)) this.#droppedFirst.set(kind, { where, why });
  }

  /** A new pass reads the input again: dropped elements are counted afresh. */
  restartDropped(): void {
    this.#summary.dropped = {};
    this.#droppedFirst.clear();
  }

  printDropped(): void {
    for (const [kind, count] of Object.entries(this.#summary.dropped)) {
      const first = this.#droppedFirst.get(kind);
      this.#progress.message(`not imported: ${count} × ${kind} (first at ${first?.where}): ${first?.why}`);
    }
  }
}
