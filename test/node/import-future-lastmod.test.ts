/** The import CLI validates with the ingest's validator: a lastmod years ahead is an invalid record named by its rule. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, summaryOf } from "./import-helpers.ts";

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "import-future-"));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe("import CLI: lastmod in the future", () => {
  it("counts a lastmod five years ahead as invalid, naming the line, field and rule; an hour ahead is fine", async () => {
    const ahead = new Date(Date.now() + 5 * 365 * 86400_000).toISOString().slice(0, 10);
    const soon = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, "Z");
    const file = join(tmp, "future.ndjson");
    writeFileSync(file, [`{"loc": "http://shop.example/a", "lastmod": "${soon}"}`, `{"loc": "http://shop.example/b", "lastmod": "${ahead}"}`].join("\n"));
    const run = await runCli([file, "--dry-run", "--json", "--site", "http://shop.example"]);
    expect(run.code).toBe(1);
    expect(summaryOf(run)).toMatchObject({ mode: "dry-run", records: 1, invalid: 1, sent: 0 });
    expect(run.stderr).toContain(`future.ndjson:2: lastmod: lastmod ${ahead} is more than 24 hours in the future`);
    expect(run.stderr).toContain("[future-date]");
  });
});
