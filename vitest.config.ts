import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { TEST_GROUPS } from "./test/workers/groups/members.ts";

// Tests never reach the internet: without this, Miniflare fetches Request.cf from
// workers.cloudflare.com at startup (and only falls back when offline). Child processes inherit it.
process.env["CLOUDFLARE_CF_FETCH_ENABLED"] = "false";

const migrations = fileURLToPath(new URL("./migrations", import.meta.url));

// Small workers files run inside their group's file (test/workers/groups/members.ts), not each in a
// workerd of its own. A member named on the command line runs as a file of its own (so does every
// member with TEST_UNGROUPED=1).
const named = process.argv.slice(2).join(" ");
const grouped = process.env["TEST_UNGROUPED"]
  ? []
  : Object.values(TEST_GROUPS)
      .flat()
      .filter((member) => !named.includes(`${member}.test.ts`))
      .map((member) => `test/workers/${member}.test.ts`);

export default defineConfig({
  test: {
    // Most of the suite waits (workerd start-up, wrangler child processes, loopback servers, queue
    // delays), not computes: three files at a time on a 2-core machine took `npm test` from 12 min 8 s
    // (vitest's default here, one file at a time: cores − 1) to 6 min 16 s, every test passing.
    maxWorkers: 3,
    projects: [
      {
        // Inside workerd with real D1, KV and Cache API bindings from wrangler.jsonc.
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: "./wrangler.jsonc" },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations(migrations),
                ADMIN_TOKEN: "test-admin-token-0123456789abcdef",
                // The tests refuse past a limit (src/jobs/meter.ts); a deployment only counts unless told to enforce (INVOCATION_LIMITS).
                INVOCATION_LIMITS: "enforce",
                // The crawlers' ranges of the default names from a loopback port nothing listens on, never
                // the engines' hosts: a heartbeat's `crawler-ranges` job fails fast and offline (test/workers/crawler-ranges.test.ts fakes them).
                // npm run simulate's options (scripts/simulate.ts); empty: the fixed seeds of test/workers/simulation.test.ts.
                SIM_CONFIG: process.env["SIM_CONFIG"] ?? "",
                // The mirror chain's size in test/workers/mirror-scale.test.ts; empty: the suite's 1,000 (docs/capacity.md's 50,000 run sets it).
                MIRROR_SCALE_CHILDREN: process.env["MIRROR_SCALE_CHILDREN"] ?? "",
                CRAWLER_IP_RANGES: "googlebot=http://127.0.0.1:9/googlebot.json bingbot=http://127.0.0.1:9/bingbot.json",
                // No timer for the crawler log's counts (they go with the next request a minute on): a timer
                // holds its request's waitUntil, and so each test's waitOnExecutionContext, for its
                // 20 s. test/workers/crawler-count-timer.test.ts runs it, with seconds of its own.
                CRAWLER_COUNT_FLUSH_SECONDS: "0",
              },
              // A second D1 database for sites spread over databases (SITE_DATABASES; test/workers/site-databases.test.ts).
              // Three more for one site over several databases (SITE_DATABASES "origin=DB,PART_B,PART_C"; test/workers/partitions*.test.ts).
              d1Databases: {
                SITE_B_DB: "edge-sitemaps-site-b",
                PART_B: "edge-sitemaps-part-b",
                PART_C: "edge-sitemaps-part-c",
                PART_D: "edge-sitemaps-part-d",
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          exclude: grouped,
          setupFiles: ["./test/workers/setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The unit tests next to the code (src/**): pure functions (records in, bytes out; parsers,
        // headers, health rules) that need no binding, and run in Node as the CLI and the benches
        // do. In workerd each file paid about a second of start-up; here the 26 files take ~6 s.
        test: {
          name: "unit",
          include: ["src/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        // Node side: real Worker through wrangler's test harness, checked with real third-party
        // tools (xmllint, gzip on the wire).
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
