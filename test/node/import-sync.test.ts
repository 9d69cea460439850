/**
 * `npm run import -- <file> --sync` end to end: the real Worker (wrangler's test harness, real
 * local D1), the CLI as a child process. A sync leaves its scope equal to the file, touches
 * nothing else, refuses an empty input and a deletion over the guard, and a CLI killed midway
 * deletes nothing.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locsOf } from "../shared/locs.ts";
import { TOKEN, runCli, summaryOf, tempInputs } from "./import-helpers.ts";
import { cronAndJobs } from "./support/jobs.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

const SITE = "http://sync.example";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const inputs = tempInputs("import-sync-");

let worker: RunningWorker;

beforeAll(async () => {
  // A write's regeneration settles 3 s, not the default minute (the CLI's wait is the same loop).
  worker = await startWorker({ SITES: SITE, REGEN_SETTLE_SECONDS: "3" }, { secrets: { ADMIN_TOKEN: TOKEN }, servesOwnOrigin: true });
});

afterAll(async () => {
  await worker?.close();
});

const ndjson = (records: object[]) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
const urls = (prefix: string, n: number, from = 1, extra: object = {}) =>
  Array.from({ length: n }, (_, i) => ({ loc: `${SITE}${prefix}${from + i}`, ...extra }));

function cli(file: string, ...flags: string[]) {
  return runCli([file, "--url", worker.origin, "--json", "--quiet", ...flags], { ADMIN_TOKEN: TOKEN });
}

/** Live locs of a section, as D1 has them. */
async function live(section: string): Promise<string[]> {
  const { results } = await worker.env.DB.prepare("SELECT loc FROM urls WHERE origin = ?1 AND section = ?2 AND deleted = 0 ORDER BY loc")
    .bind(SITE, section)
    .all<{ loc: string }>();
  return results.map((r) => r.loc.slice(SITE.length));
}

async function tombstones(): Promise<number> {
  return (await worker.env.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND deleted = 1").bind(SITE).first<{ n: number }>())?.n ?? 0;
}

const sorted = (list: { loc: string }[]) => list.map((r) => r.loc.slice(SITE.length)).sort();

describe("import --sync", () => {
  it("makes a section equal to the file: removals deleted, additions added, other sections untouched, shards follow", async () => {
    const seeded = await cli(inputs.write("seed.ndjson", ndjson([...urls("/p/", 20, 1, { section: "products" }), ...urls("/a/", 5)])));
    expect(seeded.code, seeded.stderr).toBe(0);
    const file = [...urls("/p/", 15), ...urls("/p/", 2, 21)];
    const run = await cli(inputs.write("products.ndjson", ndjson(file)), "--sync", "--section", "products");
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ mode: "sync", inserted: 2, updated: 0, unchanged: 15, deleted: 5 });
    expect(await live("products")).toEqual(sorted(file));
    expect(await live("pages")).toEqual(sorted(urls("/a/", 5)));
    // After the next cron run, the served shard lists exactly the file.
    await cronAndJobs(worker.harness, worker.env.DB);
    const shard = await worker.harness.fetch(`${SITE}/sitemap-products-1.xml`);
    expect(shard.status).toBe(200);
    expect(locsOf(await shard.text()).sort()).toEqual(file.map((r) => r.loc).sort());

    // The same sync again changes nothing.
    const again = await cli(inputs.write("products-again.ndjson", ndjson(file)), "--sync", "--section", "products");
    expect(summaryOf(again)).toMatchObject({ inserted: 0, updated: 0, unchanged: 17, deleted: 0 });
    // The text summary names the deletions too.
    const text = await runCli([inputs.write("products-text.ndjson", ndjson(file)), "--url", worker.origin, "--quiet", "--sync", "--section", "products"], {
      ADMIN_TOKEN: TOKEN,
    });
    expect(text.stdout).toContain("17 unchanged, 0 deleted");
  });

  it("refuses an empty input, and an input with nothing valid, deleting nothing", async () => {
    const before = await live("pages");
    const empty = await cli(inputs.write("empty.ndjson", ""), "--sync", "--max-delete", "100%");
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("an empty input never empties a scope");
    const invalid = await cli(inputs.write("invalid.ndjson", ndjson([{ loc: "not a url" }])), "--sync", "--skip-invalid", "--max-delete", "100%");
    expect(invalid.code).toBe(1);
    expect(await live("pages")).toEqual(before);
  });

  it("the guard refuses a sync deleting more than half the scope, with the count; --max-delete lets it through", async () => {
    const file = inputs.write("pages.ndjson", ndjson(urls("/a/", 2)));
    const refused = await cli(file, "--sync", "--section", "pages");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/would delete 3 of the 5 records in its scope \(60%\); the guard allows 50%/);
    expect(refused.stderr).toContain("--max-delete");
    expect(await live("pages")).toEqual(sorted(urls("/a/", 5)));
    const allowed = await cli(file, "--sync", "--section", "pages", "--max-delete", "0.6");
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(summaryOf(allowed)).toMatchObject({ deleted: 3 });
    expect(await live("pages")).toEqual(sorted(urls("/a/", 2)));
  });

  it("a CLI killed midway deletes nothing", async () => {
    const before = { products: await live("products"), pages: await live("pages") };
    const deletedBefore = await tombstones();
    // 3,000 records in batches of 10: the kill lands while batches are still being sent.
    const file = inputs.write("big.ndjson", ndjson(urls("/big/", 3000)));
    const child = spawn(
      `${ROOT}node_modules/.bin/node`,
      [`${ROOT}scripts/import.ts`, file, "--url", worker.origin, "--sync", "--batch-size", "10", "--quiet"],
      {
        cwd: ROOT,
        env: { ...process.env, ADMIN_TOKEN: TOKEN, IMPORT_DEV_VARS: "" },
        stdio: "ignore",
      },
    );
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
    // Wait until the server has taken some batches of the sync, then kill the CLI without warning.
    let received = 0;
    for (let i = 0; i < 600 && received === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const row = await worker.env.DB.prepare("SELECT COALESCE(SUM(received), 0) AS n FROM syncs WHERE state = 'open'").first<{ n: number }>();
      received = row?.n ?? 0;
    }
    child.kill("SIGKILL");
    await exited;
    expect(received).toBeGreaterThan(0);
    const open = await worker.env.DB.prepare("SELECT state, received FROM syncs WHERE state IN ('open', 'committing')").all<{
      state: string;
      received: number;
    }>();
    expect(open.results.map((r) => r.state)).toEqual(["open"]);
    expect(open.results[0]!.received).toBeLessThan(3000);
    // Nothing deleted: every record is still live (the batches that arrived were stored, nothing more).
    expect(await tombstones()).toBe(deletedBefore);
    expect(await live("products")).toEqual(before.products);
    expect(await live("pages")).toEqual(expect.arrayContaining(before.pages));
  });
});
