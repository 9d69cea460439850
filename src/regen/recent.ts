/**
 * Changes already handled past the change cursor (see RegenState.recent), kept compact as key
 * intervals per (section, stamp): a bulk write shares one stamp and consecutive keys, so a million
 * rows handled in the settle window are a handful of intervals, not a million entries.
 *
 * An interval [a, b] at (section, stamp) claims: every row of that section with that stamp and a
 * key in [a, b] was handled. It is only ever grown over rows read one after the other (a "block")
 * that cover every such row: a scan reads a section's rows in key order (a block ends when another
 * stamp comes between), the change feed reads all rows of a stamp in key order (a block ends with
 * the stamp or the page). A write that commits late gets a new key (inserts) or changes a row read
 * with another stamp, so it never hides inside an interval.
 */
import type { ChangeCursor } from "../store/port.ts";

/** [section, stamp, firstKey, lastKey] */
export type RecentInterval = [string, number, number, number];

export class RecentChanges {
  readonly #intervals = new Map<string, RecentInterval[]>();
  /** Block in which each (section, stamp)'s last interval was last grown. */
  readonly #block = new Map<string, number>();
  #size = 0;

  constructor(intervals: readonly RecentInterval[] = []) {
    for (const interval of intervals) this.restore(interval);
  }

  /** Takes back an interval saved by an earlier run (malformed entries are dropped). */
  restore(interval: RecentInterval): void {
    if (!Array.isArray(interval) || interval.length !== 4) return;
    const [section, stamp, first, last] = interval;
    if (typeof section !== "string" || ![stamp, first, last].every(Number.isFinite)) return;
    this.#list(section, stamp).push([section, stamp, first, last]);
    this.#size++;
  }

  clear(): void {
    this.#intervals.clear();
    this.#block.clear();
    this.#size = 0;
  }

  get size(): number {
    return this.#size;
  }

  #list(section: string, stamp: number): RecentInterval[] {
    const id = `${section}\u0000${stamp}`;
    let list = this.#intervals.get(id);
    if (!list) this.#intervals.set(id, (list = []));
    return list;
  }

  has(section: string, key: number, stamp: number): boolean {
    const list = this.#intervals.get(`${section}\u0000${stamp}`);
    return list?.some(([, , a, b]) => a <= key && key <= b) ?? false;
  }

  /** Records a handled row, read in `block` (grows the interval of the same block, else opens one). */
  add(section: string, key: number, stamp: number, block: number): void {
    const id = `${section}\u0000${stamp}`;
    const list = this.#list(section, stamp);
    const last = list[list.length - 1];
    if (last && this.#block.get(id) === block && key >= last[3]) {
      last[3] = key;
      return;
    }
    if (this.has(section, key, stamp)) return;
    list.push([section, stamp, key, key]);
    this.#block.set(id, block);
    this.#size++;
  }

  /** The intervals still ahead of a cursor (the rest will never be read again). */
  after(cursor: ChangeCursor): RecentInterval[] {
    const out: RecentInterval[] = [];
    for (const list of this.#intervals.values()) {
      for (const interval of list) {
        const [, stamp, , last] = interval;
        if (stamp > cursor.stamp || (stamp === cursor.stamp && last > cursor.key)) out.push(interval);
      }
    }
    return out;
  }
}
