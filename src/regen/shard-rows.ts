/**
 * The rows of one range pass (src/regen/run.ts), read once and handed out shard by shard: each
 * shard's rows are planned as the renderer pulls them, and the row that starts the next shard (or
 * another section) is held back for the pass. Every row read is counted and shown to `onRow`.
 */
import type { UrlRecord } from "../core/types.ts";
import type { SectionPlanner } from "../manifest/manifest.ts";
import type { ScannedRecord } from "../store/port.ts";
import type { RunCounters } from "./counters.ts";

export class ShardRowsReader {
  readonly #rows: AsyncIterator<ScannedRecord>;
  readonly #counters: RunCounters;
  readonly #onRow: (row: ScannedRecord) => void;
  /** A row read but not yet handed out (it starts the next shard). */
  #held: ScannedRecord | undefined;
  #ended = false;

  constructor(rows: AsyncIterable<ScannedRecord>, counters: RunCounters, onRow: (row: ScannedRecord) => void) {
    this.#rows = rows[Symbol.asyncIterator]();
    this.#counters = counters;
    this.#onRow = onRow;
  }

  /** The row held back by the last shard (the first of the next one), or undefined at the end. */
  takeHeld(): ScannedRecord | undefined {
    const held = this.#held;
    this.#held = undefined;
    return held;
  }

  /** Reads one row from the scan. */
  async read(): Promise<ScannedRecord | undefined> {
    if (this.#ended) return undefined;
    const next = await this.#rows.next();
    if (next.done) {
      this.#ended = true;
      return undefined;
    }
    this.#counters.rowsRead++;
    this.#onRow(next.value);
    return next.value;
  }

  /** Holds back the row after a shard, for `takeHeld`. */
  hold(row: ScannedRecord | undefined): void {
    this.#held = row;
  }

  /** The rows of the shard `first` opens (already added to `planner`). */
  shard(first: ScannedRecord, planner: SectionPlanner): ShardRows {
    return new ShardRows(this, first, planner);
  }

  async close(): Promise<void> {
    await this.#rows.return?.();
  }
}

/** One shard's rows: planned as they are read, the live ones yielded to the renderer. */
export class ShardRows {
  readonly #reader: ShardRowsReader;
  readonly #first: ScannedRecord;
  readonly #planner: SectionPlanner;
  /** Rows yielded (not tombstones). */
  live = 0;
  /** Every row of the shard was read. */
  complete = false;

  constructor(reader: ShardRowsReader, first: ScannedRecord, planner: SectionPlanner) {
    this.#reader = reader;
    this.#first = first;
    this.#planner = planner;
  }

  /** The shard's next row (planned), or undefined at its end. */
  async #take(): Promise<ScannedRecord | undefined> {
    if (this.complete) return undefined;
    const row = await this.#reader.read();
    if (row && row.section === this.#first.section && !this.#planner.startsNewShard(row)) {
      this.#planner.add(row);
      return row;
    }
    this.#reader.hold(row);
    this.complete = true;
    return undefined;
  }

  /** The live records, for the renderer. */
  async *records(): AsyncGenerator<UrlRecord> {
    if (!this.#first.deleted) {
      this.live++;
      yield this.#first;
    }
    for (let row = await this.#take(); row; row = await this.#take()) {
      if (!row.deleted) {
        this.live++;
        yield row;
      }
    }
  }

  /** Reads (and plans) the rows the renderer left, after it stopped. */
  async drain(): Promise<void> {
    while (await this.#take());
  }
}
