/**
 * Progress on stderr: records, records per second, and the percentage when the input size is
 * known. On a terminal one line is rewritten in place; otherwise a line is written per interval.
 */
import { plural } from "../../src/core/plural.ts";

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

const number = new Intl.NumberFormat("en-US");

export class Progress {
  readonly #out: ProgressStream;
  readonly #intervalMs: number;
  readonly #quiet: boolean;
  #label = "";
  #start = 0;
  #last = 0;
  #records = 0;
  #fraction: number | undefined;
  #sized = false;
  #dirty = false;

  constructor(out: ProgressStream, intervalMs: number, quiet: boolean) {
    this.#out = out;
    this.#intervalMs = intervalMs;
    this.#quiet = quiet;
  }

  /** Starts a phase ("validating", "importing"): counters restart. */
  phase(label: string): void {
    this.#label = label;
    this.#start = performance.now();
    this.#last = this.#start;
    this.#records = 0;
    this.#fraction = undefined;
    this.#sized = false;
  }

  update(records: number, fraction: number | undefined): void {
    this.#records = records;
    if (fraction !== undefined) {
      this.#fraction = fraction;
      this.#sized = true;
    }
    const now = performance.now();
    if (now - this.#last < this.#intervalMs) return;
    this.#last = now;
    this.#print(false);
  }

  /** The input's size is known: the final line shows 100 %. */
  sized(): void {
    this.#sized = true;
  }

  /** Prints the final line of the phase (100 % when the size was known: the input was read to its end). */
  done(): void {
    if (this.#sized) this.#fraction = 1;
    this.#print(true);
  }

  /** Prints a message on its own line (clearing an in-place progress line first). */
  message(text: string): void {
    if (this.#dirty) {
      this.#out.write("\n");
      this.#dirty = false;
    }
    this.#out.write(`${text}\n`);
  }

  line(): string {
    const seconds = Math.max((performance.now() - this.#start) / 1000, 0.001);
    const rate = Math.round(this.#records / seconds);
    const percent = this.#fraction === undefined ? "" : `, ${(Math.min(this.#fraction, 1) * 100).toFixed(1)}%`;
    return `${this.#label}: ${plural(this.#records, "record")}, ${number.format(rate)} records/s${percent}, ${seconds.toFixed(1)} s`;
  }

  #print(final: boolean): void {
    if (this.#quiet) return;
    if (this.#out.isTTY) {
      this.#out.write(`\r\x1b[2K${this.line()}${final ? "\n" : ""}`);
      this.#dirty = !final;
    } else {
      this.#out.write(`${this.line()}\n`);
    }
  }
}
