/**
 * One write over several partitions: each partition's part is its own D1 transaction, so a batch
 * whose part failed in one database while another's committed is partly stored. Said as such
 * (`PartialWriteError`: the admin API answers that sending the batch again completes it, which it
 * does, a write being idempotent), never as "nothing was written". A failure of every part (or of
 * the only one) is passed on as it is.
 */
import { PartialWriteError } from "../store/errors.ts";

export async function allParts<T>(parts: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(parts);
  const failed = settled.filter((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed.length === 0) return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
  const stored = settled.length - failed.length;
  if (stored === 0) throw failed[0]!.reason;
  const why = failed[0]!.reason instanceof Error ? failed[0]!.reason.message : String(failed[0]!.reason);
  throw new PartialWriteError(`the batch was stored in ${stored} of its ${settled.length} databases; another failed (${why})`, {
    cause: failed[0]!.reason,
  });
}
