/**
 * Test-only fault injection: a source whose shard reads fail after N records, as a D1 error on
 * the third page of rows would. Wired only when the var FAULT_INJECTION is "on" (never set in
 * wrangler.jsonc), so production builds carry the code but can never take this path.
 */
import type { StoredRecord } from "../core/types.ts";
import type { KeyRow, ShardRange, UrlSource } from "./source.ts";

export class InjectedFaultError extends Error {
  override readonly name = "InjectedFaultError";
}

export class FaultyUrlSource implements UrlSource {
  readonly #inner: UrlSource;
  readonly #afterRecords: number;

  constructor(inner: UrlSource, afterRecords: number) {
    this.#inner = inner;
    this.#afterRecords = afterRecords;
  }

  async *records(range: ShardRange): AsyncIterable<StoredRecord> {
    let served = 0;
    for await (const record of this.#inner.records(range)) {
      if (served++ >= this.#afterRecords) throw new InjectedFaultError(`injected fault: record read failed after ${this.#afterRecords} records`);
      yield record;
    }
  }

  keyRows(origin: string): AsyncIterable<KeyRow> {
    return this.#inner.keyRows(origin);
  }
}
