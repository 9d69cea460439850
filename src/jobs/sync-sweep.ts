/** The sync sweep job, once per D1 database (named by one of its sites): abandoned syncs expire (src/sync/sweep.ts). */
import { sweepSyncs } from "../sync/sweep.ts";
import type { JobHandler } from "./context.ts";

export const syncSweepJob: JobHandler = async (_job, c) => `swept ${await sweepSyncs([c.services])}`;
