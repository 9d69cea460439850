/**
 * The move of a site over several databases when a database was appended to its list
 * (src/partitions/rebalance.ts): one bounded step per job, continued until the flip; then a site
 * pass of every partition (one regeneration job each) renders snapshots without the rows that left
 * and with those that arrived. A day later the same job removes the rows the move left behind,
 * step by step (src/partitions/purge.ts). A minute after the flip the chain's next step reads what
 * writes left in old partitions since (src/partitions/catch-up.ts). A site with nothing to do answers at once (one read of its layout).
 */
import { AFTER_FLIP_MS } from "../partitions/catch-up.ts";
import { LayoutChangedError } from "../partitions/layout.ts";
import { rebalanceStep } from "../partitions/rebalance.ts";
import { DatabaseListError } from "../store/errors.ts";
import type { JobHandler } from "./context.ts";
import { MAX_STEPS } from "./messages.ts";

/** The first copy waits this long after the move started: writes that read the old layout are over by then. */
const START_DELAY_SECONDS = 10;
/** After a flip, the chain's next step comes when the last catch-up is due (AFTER_FLIP_MS) and a little after. */
const AFTER_FLIP_SECONDS = Math.ceil(AFTER_FLIP_MS / 1000) + 5;
/** A step that found a partition's regeneration lease taken looks again this much later. */
const WAITING_DELAY_SECONDS = 15;

export const rebalanceJob: JobHandler = async (job, c) => {
  const s = c.services;
  if (!s.partitions || !s.layouts || !s.config.sites.has(job.origin)) return "not-partitioned";
  let step: Awaited<ReturnType<typeof rebalanceStep>>;
  try {
    step = await rebalanceStep(s, job.origin, { deadline: c.deadline, usage: c.usage });
  } catch (err) {
    // Another step saved the layout since this one read it (this delivery was overtaken): it stops, that one goes on.
    if (err instanceof LayoutChangedError) return "superseded";
    // The site's database list does not match what was recorded: nothing moves until it does (status names it).
    if (err instanceof DatabaseListError) return `refused: ${err.message}`;
    throw err;
  }
  if (step.state === "flipped") {
    await c.scheduler.request("regenerate", job.origin, 0, "rebalance", { full: true });
    // The catch-up a minute after the flip (src/partitions/catch-up.ts) is this chain's next step.
    c.continueWith({ delaySeconds: AFTER_FLIP_SECONDS });
    return `flipped ${step.settled}`;
  }
  if (step.state === "settled" || step.state === "refused") return step.state;
  if (step.state === "purged") return `purged ${step.removed}`;
  if (step.state === "caught-up") return `caught up ${step.copied}`;
  if (job.step >= MAX_STEPS) return "stopped";
  c.continueWith({ delaySeconds: step.state === "started" ? START_DELAY_SECONDS : step.state === "waiting" ? WAITING_DELAY_SECONDS : 0 });
  return step.waitingFor ? `waiting for ${step.waitingFor}` : `${step.state} ${step.rowsRead}`;
};
