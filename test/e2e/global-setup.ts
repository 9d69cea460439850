/** Prints the e2e summary after all files ran: requests, errors, documents, URLs, faults, losses. */
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { templatePrefix } from "./support/run.ts";
import type { Totals } from "./support/summary.ts";

export default function setup(): () => void {
  process.env.E2E_RUN_ID = String(process.pid);
  const file = `${process.env.TMPDIR ?? "/tmp"}/edge-sitemaps-e2e-summary-${process.env.E2E_RUN_ID}.jsonl`;
  rmSync(file, { force: true });
  return () => {
    // Seeded-storage templates shared by this run's files (support/dev-server.ts).
    const prefix = templatePrefix(process.env.E2E_RUN_ID!);
    for (const name of readdirSync(dirname(prefix))) {
      if (name.startsWith(basename(prefix))) rmSync(join(dirname(prefix), name), { recursive: true, force: true });
    }
    const totals: Required<Totals> = { requests: 0, errors: 0, documentsValidated: 0, urlsCompared: 0, faultsInjected: 0, recordsLost: 0, loadP99Ms: 0 };
    if (existsSync(file)) {
      for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
        const entry = JSON.parse(line) as Totals;
        for (const key of Object.keys(totals) as (keyof Totals)[]) {
          totals[key] = key === "loadP99Ms" ? Math.max(totals[key], entry[key] ?? 0) : totals[key] + (entry[key] ?? 0);
        }
      }
      rmSync(file, { force: true });
    }
    console.log(
      `\ne2e summary: requests ${totals.requests}, errors ${totals.errors}, documents validated ${totals.documentsValidated}, ` +
        `URLs compared ${totals.urlsCompared}, faults injected ${totals.faultsInjected}, records lost ${totals.recordsLost}, ` +
        `load p99 ${totals.loadP99Ms} ms`,
    );
  };
}
