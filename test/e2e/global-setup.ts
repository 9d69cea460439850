/** Prints the e2e summary after all files ran: requests, errors, documents, URLs, faults, losses. */
import { existsSync, readFileSync, rmSync } from "node:fs";
import type { Totals } from "./support/summary.ts";

export default function setup(): () => void {
  process.env.E2E_RUN_ID = String(process.pid);
  const file = `${process.env.TMPDIR ?? "/tmp"}/edge-sitemaps-e2e-summary-${process.env.E2E_RUN_ID}.jsonl`;
  rmSync(file, { force: true });
  return () => {
    const totals: Required<Totals> = { requests: 0, errors: 0, documentsValidated: 0, urlsCompared: 0, faultsInjected: 0, recordsLost: 0 };
    if (existsSync(file)) {
      for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
        const entry = JSON.parse(line) as Totals;
        for (const key of Object.keys(totals) as (keyof Totals)[]) totals[key] += entry[key] ?? 0;
      }
      rmSync(file, { force: true });
    }
    console.log(
      `\ne2e summary: requests ${totals.requests}, errors ${totals.errors}, documents validated ${totals.documentsValidated}, ` +
        `URLs compared ${totals.urlsCompared}, faults injected ${totals.faultsInjected}, records lost ${totals.recordsLost}`,
    );
  };
}
