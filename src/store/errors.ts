/**
 * Write failures a record store reports beyond "the write failed": the admin API turns each into
 * its own status (src/admin/urls.ts), so a client can tell "retry later" from "split the batch"
 * from "part of it may be written". Plain errors; nothing here knows an adapter.
 */

/**
 * The store cannot take the batch now: "busy" (another writer has the site; nothing of the batch
 * was written) or "unavailable" (the writer stopped mid-batch; what it began is finished by the
 * next write). Either way, send the batch again after `retryAfterSeconds`.
 */
export class StoreBusyError extends Error {
  override readonly name = "StoreBusyError";
  readonly code: "busy" | "unavailable";
  readonly retryAfterSeconds: number;
  constructor(code: "busy" | "unavailable", message: string, retryAfterSeconds: number) {
    super(message);
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The batch needs more store operations than one request may use; nothing of it was written. */
export class StoreBudgetError extends Error {
  override readonly name: string = "StoreBudgetError";
}

/**
 * A non-atomic store failed partway: some writes of the batch may be stored. Sending the same
 * batch again completes it (and the store's next write to the site finishes it anyway).
 */
export class PartialWriteError extends Error {
  override readonly name = "PartialWriteError";
}

/** No sync with this id (never started, or swept after it expired or ended). */
export class SyncNotFoundError extends Error {
  override readonly name = "SyncNotFoundError";
}

/** A site of the scope has as many open syncs as it may (`maxOpenPerSite`); nothing was started. */
export class SyncQuotaError extends Error {
  override readonly name = "SyncQuotaError";
}

/** The sync is not in a state that allows this (e.g. a batch after the commit, an abort of a committed sync). */
export class SyncStateError extends Error {
  override readonly name = "SyncStateError";
}

/** A record of the batch is outside the sync's scope (another site or section); nothing written. */
export class SyncScopeError extends Error {
  override readonly name = "SyncScopeError";
  /** Positions in the batch of the records outside the scope. */
  readonly indexes: readonly number[];
  constructor(message: string, indexes: readonly number[]) {
    super(message);
    this.indexes = indexes;
  }
}

/** The commit would delete more than the guard allows; nothing was deleted and the sync stays open. */
export class SyncGuardError extends Error {
  override readonly name = "SyncGuardError";
  readonly wouldDelete: number;
  readonly inScope: number;
  readonly maxDelete: number;
  constructor(message: string, wouldDelete: number, inScope: number, maxDelete: number) {
    super(message);
    this.wouldDelete = wouldDelete;
    this.inScope = inScope;
    this.maxDelete = maxDelete;
  }
}

/** The sync guard: throws when a commit would delete more than `maxDelete` of the records in its scope. */
export function checkSyncGuard(wouldDelete: number, inScope: number, maxDelete: number): void {
  if (wouldDelete <= maxDelete * inScope) return;
  const share = (x: number) => `${Math.round(x * 1000) / 10}%`;
  throw new SyncGuardError(
    `this sync would delete ${wouldDelete.toLocaleString("en-US")} of the ${inScope.toLocaleString("en-US")} records in its scope (${share(wouldDelete / inScope)}); the guard allows ${share(maxDelete)}: nothing was deleted and the sync is still open (commit again with a larger maxDelete to go ahead)`,
    wouldDelete,
    inScope,
    maxDelete,
  );
}

/** The sync received no record: an empty input never empties a scope. Nothing was deleted. */
export class SyncEmptyError extends Error {
  override readonly name = "SyncEmptyError";
}

/**
 * A partitioned site's SITE_DATABASES list does not keep the databases recorded for its partitions
 * in their places (src/partitions/database-list.ts): nothing of the site that is read or written by
 * partition is, until the list is fixed. The message names SITE_DATABASES and what to restore.
 */
export class DatabaseListError extends Error {
  override readonly name = "DatabaseListError";
}
