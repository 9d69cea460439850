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
