/**
 * KV takes one write a second per key (a delete is one; production answers 429 past it): a write
 * to a key written at `lastWriteAt` waits, in `waitUntil`, until that second is over. The time a
 * record names is taken before its write went out (a read came first), hence the margin.
 */
import { CALL_LIMITS } from "../../jobs/metered-env.ts";

const WRITE_MARGIN_MS = 100;

export async function afterKeyWriteInterval(lastWriteAt: number, now: number): Promise<void> {
  const wait = lastWriteAt <= now ? lastWriteAt + CALL_LIMITS.kvWriteIntervalMs + WRITE_MARGIN_MS - now : 0;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
