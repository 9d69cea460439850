/**
 * Every job kind the code declares (JOB_KINDS) has its largest measured invocation in
 * docs/capacity.md's per-path table, a row naming it in backticks: a new kind fails here until it is
 * swept (test/workers/limits-sweep-jobs.test.ts names where each kind runs at its extremes).
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { JOB_KINDS } from "./messages.ts";

it("docs/capacity.md's per-path table has a row for every job kind", () => {
  const doc = readFileSync("docs/capacity.md", "utf8"); // vitest runs from the repository's root;
  const start = doc.indexOf("| Path | 1M | 10M | 100M | Limit |");
  expect(start).toBeGreaterThan(0);
  const rows = doc.slice(start).split("\n\n")[0]!.split("\n").slice(2);
  const firstCells = rows.map((row) => row.split(" | ")[0]!);
  const missing = JOB_KINDS.filter((kind) => !firstCells.some((cell) => cell.includes(`\`${kind}\``)));
  expect(missing).toEqual([]);
});
