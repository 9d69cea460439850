/** Totals every e2e file adds to; printed once at the end of the run (see globalSetup teardown). */
import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Totals {
  requests?: number;
  errors?: number;
  documentsValidated?: number;
  urlsCompared?: number;
  faultsInjected?: number;
  recordsLost?: number;
  /** p99 latency of the load scenario (ms); the run reports the largest. */
  loadP99Ms?: number;
}

const SUMMARY_FILE = join(tmpdir(), `edge-sitemaps-e2e-summary-${process.env.E2E_RUN_ID ?? "run"}.jsonl`);

export const summary = {
  add(totals: Totals): void {
    appendFileSync(SUMMARY_FILE, `${JSON.stringify(totals)}\n`);
  },
};
