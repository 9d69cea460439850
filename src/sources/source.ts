/** The record source interface: what the manifest and the renderer need from a store (D1 or KV). */
import type { StoredRecord } from "../core/types.ts";

/** A contiguous range of stable keys within one site section (bounds inclusive). */
export interface ShardRange {
  origin: string;
  section: string;
  firstKey: number;
  lastKey: number;
}

/** What the manifest walk needs of every record, tombstones included. */
export interface KeyRow {
  section: string;
  key: number;
  updatedAt: number;
  deleted: boolean;
  /** UTF-8 bytes of the record's `<url>` element. */
  size: number;
}

export interface UrlSource {
  /** Live (not deleted) records of one range, ascending by key. Keyset-paged: never OFFSET. */
  records(range: ShardRange): AsyncIterable<StoredRecord>;
  /** Every record of a site (tombstones too), ordered by (section, key). */
  keyRows(origin: string): AsyncIterable<KeyRow>;
}
