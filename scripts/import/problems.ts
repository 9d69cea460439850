/**
 * Problems of the input, as they are found: each bad line is counted and printed with its file and
 * line (up to --max-reported); elements the record model has no field for are counted by name and
 * listed at the end with their first place.
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
  /** Where each dropped element was first seen. */
  readonly #droppedFirst = new Map<string, string>();

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

  dropped(element: string, where: string): void {
    this.#summary.dropped[element] = (this.#summary.dropped[element] ?? 0) + 1;
    if (!this.#droppedFirst.has(element)) this.#droppedFirst.set(element, where);
  }

  /** A new pass reads the input again: dropped elements are counted afresh. */
  restartDropped(): void {
    this.#summary.dropped = {};
    this.#droppedFirst.clear();
  }

  printDropped(): void {
    for (const [element, count] of Object.entries(this.#summary.dropped)) {
      this.#progress.message(`not imported: ${count} × ${element} (first at ${this.#droppedFirst.get(element)}): the record model has no field for it`);
    }
  }
}
