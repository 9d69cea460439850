/** One run per site at a time: the regeneration's lease. */
import type { Lease, RegenStore } from "./store.ts";

export class RegenBusyError extends Error {
  override readonly name = "RegenBusyError";
}

/** A run's lease outlives the longest possible cron invocation (15 min) with a margin. */
const LEASE_MS = 20 * 60_000;

/** Takes the site's lease, or throws RegenBusyError when another run holds it. */
export async function acquireLease(state: RegenStore, origin: string, now: number): Promise<Lease> {
  const lease = await state.acquire(origin, now, LEASE_MS);
  if (!lease) throw new RegenBusyError(`a regeneration of ${origin} is already running`);
  return lease;
}
