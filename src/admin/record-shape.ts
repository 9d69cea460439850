/**
 * The structure of one record's JSON text, bounded before JSON.parse builds it. JSON.parse turns
 * 10 MiB of `[[[[…` or `[{},{},…` into millions of objects, hundreds of MiB in workerd (measured
 * in test/e2e/abuse.e2e.test.ts; figures in docs/ingest.md#limits); a real record is a few levels deep and, at the protocol's
 * maximum (1,000 images, 100 videos, 1,000 hreflang links), about 20,000 values. Text past these
 * bounds is refused unparsed.
 *
 * The scan jumps between structural characters with regular expressions (strings skipped whole)
 * and carries its state from one piece of text to the next, so a streamed body is scanned once.
 */

/** Nesting levels in one record (a video's platform object is level 4). */
export const MAX_RECORD_DEPTH = 16;
/** Objects, arrays and separated values in one record: twice the largest valid record. */
export const MAX_RECORD_VALUES = 50_000;

const TOO_MANY_VALUES = `has more than ${MAX_RECORD_VALUES.toLocaleString("en")} JSON values`;
const OUTSIDE = /[[\]{}",]/g;
const INSIDE = /["\\]/g;

export class RecordShape {
  /** scan(): the text ended inside the record. */
  static readonly MORE = -1;
  /** scan(): a "}" or "]" closes more than was opened (at `position`). */
  static readonly UNBALANCED = -2;
  /** scan(): past MAX_RECORD_DEPTH or MAX_RECORD_VALUES (`overLimit` says which). */
  static readonly OVER_LIMIT = -3;

  #depth = 0;
  #values = 0;
  #inString = false;
  #escaped = false;
  /** Where the open string started in the last text scanned; -1: in an earlier one. */
  stringStart = -1;
  /** Where the last scan stopped. */
  position = 0;
  /** Why the record was refused, for the error message. */
  overLimit = "";

  get inString(): boolean {
    return this.#inString;
  }

  /**
   * Scans text from `from`: the index of the first "," or "]" outside any string or structure
   * (where a record in a JSON array ends), or MORE, UNBALANCED or OVER_LIMIT.
   */
  scan(text: string, from: number): number {
    let i = from;
    this.stringStart = -1;
    for (;;) {
      if (this.#inString) {
        if (this.#escaped) {
          if (i >= text.length) return this.#stop(i, RecordShape.MORE);
          this.#escaped = false;
          i += 1;
        }
        INSIDE.lastIndex = i;
        const m = INSIDE.exec(text);
        if (m === null) return this.#stop(text.length, RecordShape.MORE);
        if (text.charCodeAt(m.index) === 0x5c) {
          this.#escaped = true;
          i = m.index + 1;
          continue;
        }
        this.#inString = false;
        i = m.index + 1;
        continue;
      }
      OUTSIDE.lastIndex = i;
      const m = OUTSIDE.exec(text);
      if (m === null) return this.#stop(text.length, RecordShape.MORE);
      i = m.index + 1;
      switch (text.charCodeAt(m.index)) {
        case 0x22: // "
          this.#inString = true;
          this.stringStart = m.index;
          break;
        case 0x7b: // {
        case 0x5b: // [
          this.#depth += 1;
          this.#values += 1;
          if (this.#depth > MAX_RECORD_DEPTH) return this.#refuse(m.index, `nests deeper than ${MAX_RECORD_DEPTH} levels`);
          if (this.#values > MAX_RECORD_VALUES) return this.#refuse(m.index, TOO_MANY_VALUES);
          break;
        case 0x7d: // }
          this.#depth -= 1;
          if (this.#depth < 0) return this.#stop(m.index, RecordShape.UNBALANCED);
          break;
        case 0x5d: // ]
          if (this.#depth === 0) return this.#stop(m.index, m.index);
          this.#depth -= 1;
          break;
        default: // ,
          if (this.#depth === 0) return this.#stop(m.index, m.index);
          this.#values += 1;
          if (this.#values > MAX_RECORD_VALUES) return this.#refuse(m.index, TOO_MANY_VALUES);
      }
    }
  }

  #stop(at: number, result: number): number {
    this.position = at;
    return result;
  }

  #refuse(at: number, why: string): number {
    this.overLimit = `${why}; a record has at most 1,000 images, 100 videos and 1,000 hreflang links`;
    return this.#stop(at, RecordShape.OVER_LIMIT);
  }
}
