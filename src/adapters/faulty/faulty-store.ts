/**
 * Test-only fault injection: a record store whose shard reads fail after N records, as a D1 error
 * on the third page of rows would. Wired by src/services.ts only when the var FAULT_INJECTION is
 * "on" (never set in wrangler.jsonc), so production builds carry the code but can never take
 * this path. The knob is read here, not in the production Config.
 */
import { ConfigError } from "../../config.ts";
import type { StoredRecord } from "../../core/types.ts";
import type { RecordStore, ShardRange } from "../../store/port.ts";

class InjectedFaultError extends Error {
  override readonly name = "InjectedFaultError";
}

/** FAULT_AFTER_RECORDS when FAULT_INJECTION is "on", else null. Throws ConfigError for a bad value. */
export function faultAfterRecords(env: Env): number | null {
  const vars = env as unknown as Record<string, unknown>;
  const value = (name: string): string | undefined => {
    const raw = vars[name];
    if (raw === undefined || raw === null || raw === "") return undefined;
    if (typeof raw !== "string") throw new ConfigError(name, `must be a string, got ${typeof raw}`);
    return raw.trim();
  };
  if (value("FAULT_INJECTION") !== "on") return null;
  const raw = value("FAULT_AFTER_RECORDS");
  if (raw === undefined) return 0;
  const max = Number.MAX_SAFE_INTEGER;
  if (!/^\d+$/.test(raw)) throw new ConfigError("FAULT_AFTER_RECORDS", `must be a whole number from 0 to ${max}, got "${raw}"`);
  const n = Number(raw);
  if (n > max) throw new ConfigError("FAULT_AFTER_RECORDS", `must be a whole number from 0 to ${max}, got ${n}`);
  return n;
}

/**
 * `inner` with shard reads that fail after `afterRecords` records. Only the basic capabilities
 * stay (no news, feed or scan), so every document and the regeneration go through `recordPages`.
 */
export function faultyRecordStore(inner: RecordStore, afterRecords: number): RecordStore {
  const reader = inner.reader;
  return {
    kind: inner.kind,
    reader: {
      async *recordPages(range: ShardRange): AsyncIterable<readonly StoredRecord[]> {
        let served = 0;
        for await (const page of reader.recordPages(range)) {
          if (served + page.length > afterRecords) {
            // The records before the fault still go out, as a store failing mid-page would have read them.
            if (afterRecords > served) yield page.slice(0, afterRecords - served);
            throw new InjectedFaultError(`injected fault: record read failed after ${afterRecords} records`);
          }
          served += page.length;
          yield page;
        }
      },
      // Shards render from recordPages, where the fault is injected.
      rowPages: null,
      keyRows: (origin, limit) => reader.keyRows(origin, limit),
      find: (loc) => reader.find(loc),
    },
    writer: inner.writer,
    changes: inner.changes,
    news: null,
    recent: null,
    sample: inner.sample,
    scan: null,
    freshness: inner.freshness,
    projection: inner.projection,
    purge: inner.purge,
    copy: inner.copy,
    sync: inner.sync,
  };
}
