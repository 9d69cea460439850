/** What a write to the record store did (src/store/port.ts `RecordWriter`, src/store/sync-port.ts `RecordSync`). */
/** What every write answers. */
interface WriteResult {
  /**
   * true: the whole batch was applied in one transaction (D1 `batch()`), or nothing was. false: the
   * store applies a batch in steps (KV), so a failure may leave part of it written; retrying the
   * same batch completes it.
   */
  atomic: boolean;
  /** Store writes made (D1 rows written, KV puts and deletes). */
  writes: number;
}

/** inserted + updated + unchanged = records given. */
export interface UpsertResult extends WriteResult {
  /** New locs, and tombstoned locs brought back. */
  inserted: number;
  /** Live records whose content changed (their change stamp moved). */
  updated: number;
  /** Live records sent with identical content: nothing written, change stamp kept. */
  unchanged: number;
}

/** deleted + alreadyDeleted + notFound = distinct locs given. */
export interface DeleteResult extends WriteResult {
  deleted: number;
  alreadyDeleted: number;
  notFound: number;
}
