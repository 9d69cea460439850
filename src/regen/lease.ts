/** One run per site at a time: the regeneration's lease. */
import type { Lease, RegenStore } from "./store.ts";

export class RegenBusyError extends Error {
  override readonly name = "RegenBusyError";
}

/** A run's lease outlives the longest possible invocation (15 min of a queue consumer) with a margin. */
const LEASE_MS = 20 * 60_000;

/**
 * Takes the site's lease, or throws RegenBusyError when another run holds it. `id` names the lease
 * (a job's chain): a lease already held under that name is taken back, so the retry of a step killed
 * mid-run (which ran no `finally`) does not wait out the 20 minutes. The step it was taken from,
 * if it still runs, can no longer save progress or publish (D1RegenStore.acquire).
 */
export async function acquireLease(state: RegenStore, origin: string, now: number, id?: string): Promise<Lease> {
  const lease = await state.acquire(origin, now, LEASE_MS, id);
  if (!lease) throw new RegenBusyError(`a regeneration of ${origin} is already running`);
  return lease;
}
