/**
 * The request budget at the network boundary: every request a mirror sends (each redirect hop
 * included) is taken from the invocation's MirrorBudget before it goes out, so no code path of a
 * pass can send more than the budget allows. A pass checks the budget before it starts a document;
 * OutOfRequests is what stops one that ran out mid-way (a redirect), its saved position intact.
 */
import type { MirrorConfig } from "../config/types.ts";
import type { MirrorBudget } from "./deps.ts";
import type { Fetcher } from "./fetch.ts";

/** The run's request budget is spent: what was not sent is asked in a later run. */
export class OutOfRequests extends Error {
  override readonly name = "OutOfRequests";
}

/** A fresh budget for one invocation, from MIRROR_MAX_REQUESTS_PER_RUN and MIRROR_MAX_RECORDS_PER_RUN. */
export function runBudget(config: MirrorConfig): MirrorBudget {
  return { requests: config.maxRequestsPerRun, records: config.maxRecordsPerRun };
}

/**
 * A run stops taking on work once its invocation has used this many service calls (D1, KV and
 * the rest, of the one budget of 1,000 they share, src/jobs/meter.ts): the batch in flight (≤ 1,000 records, ~130 statements), the
 * saved position and the commit's first steps need less than the rest.
 */
const INVOCATION_SHARE = 600;

/** Whether the run's share is spent: its step's time budget, or its share of the invocation's queries. */
export function outOfShare(budget: MirrorBudget): boolean {
  if (budget.until !== undefined && Date.now() >= budget.until) return true;
  const used = budget.usage?.();
  return used !== undefined && used.serviceCalls >= INVOCATION_SHARE;
}

/** `fetcher`, each call taken from `budget.requests` first; throws OutOfRequests (nothing sent) when none is left. */
export function budgetedFetcher(fetcher: Fetcher, budget: MirrorBudget): Fetcher {
  return (input, init) => {
    if (budget.requests <= 0 || outOfShare(budget)) return Promise.reject(new OutOfRequests("the run's request budget for mirrors is spent"));
    budget.requests -= 1;
    return fetcher(input, init);
  };
}
