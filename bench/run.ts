/**
 * `npm run bench [-- options]`: prints one markdown table per section. Never asserts: a missed
 * target is printed as "❌ missed" and the run still exits 0 (it exits 1 only if a benchmark
 * itself breaks, so CI notices a broken bench).
 *
 *   --quick              smoke mode: small data sets, 2 runs, 2 s load (seconds in total)
 *   --scale 100k|1m|all|2m|10m|12m|100m  end-to-end data sets (default all = 100,000 and 1,000,000 records;
 *                        2m and 10m are large-scale runs, not in CI; 12m and 100m partitions only)
 *   --changes N          partitions: scattered changes after the first regeneration (default 10,000;
 *                        `--scale 12m --changes 1200` is 100M's density, 6.25 a products shard)
 *   --only a,b           sections: renderer, validation, memory, ingest, workerd, load, browser-view, view-cost, capacity,
 *                        kv-scale, partitions, tenants, registry-resolve, cold-shard, blocks, cost (default all but capacity, kv-scale,
 *                        partitions, tenants, registry-resolve, cold-shard, blocks and cost; browser-view, headless Chromium, and
 *                        view-cost, a full shard of its own, are left out of --quick unless named; capacity and
 *                        kv-scale seed again, so they run only when named)
 *   --sites N            tenants: sites registered (default 10,000; --quick 200)
 *   --runs N             timed repetitions per case (default 5)
 *   --load-seconds N     load duration per target (default 20)
 *   --storage separate|same  D1/KV/Cache in a second workerd process (default, like production) or
 *                        in the Worker's own process and thread (`wrangler dev`'s layout)
 *   --heap-cap N         cap the Worker's V8 old space at N MiB (`--max-old-space-size`): a step that
 *                        completes kept under N MiB live; one that needs more fails with its row
 *
 * Every bench route that does what a product invocation does runs under the enforcing meter
 * (bench/worker/metering.ts); the last table is each path's largest invocation against the limits.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { blocksBench } from "./blocks.ts";
import { browserViewBench } from "./browser-view.ts";
import { capacityBench } from "./capacity.ts";
import { coldShardBench } from "./cold-shard.ts";
import { costBench } from "./cost.ts";
import { ingestBench } from "./ingest.ts";
import { kvScaleBench } from "./kv-scale.ts";
import { markdownTable, parseArgs, scaledTable } from "./lib.ts";
import { limitsTable } from "./limits.ts";
import { memoryBench } from "./memory.ts";
import { partitionsBench } from "./partitions.ts";
import { registryResolveBench } from "./registry-resolve.ts";
import { rendererBench } from "./renderer.ts";
import { sitesOption, tenantsBench } from "./tenants.ts";
import { validationBench } from "./validation.ts";
import { viewCostBench } from "./view-cost.ts";
import { workerdBench } from "./workerd.ts";

const options = parseArgs(process.argv.slice(2));
const wants = (name: string): boolean => options.only === null || options.only.has(name);

function version(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .trim()
      .split("\n")[0]!;
  } catch {
    return "?";
  }
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
}

const started = Date.now();
console.log(`## edge-sitemaps benchmarks${options.quick ? " (quick smoke mode)" : ""}\n`);
console.log(
  [
    `- machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `- node ${process.version}, workerd ${version("npx", ["workerd", "--version"]).replace(/^workerd\s+/, "")}, wrangler ${packageVersion("wrangler")}, ` +
      `miniflare ${packageVersion("miniflare")}, sitemap (sitemap.js) ${packageVersion("sitemap")}, autocannon ${packageVersion("autocannon")}`,
    `- options: scales ${options.scales.join(", ")}, runs ${options.runs}, load ${options.loadSeconds} s`,
    "",
  ].join("\n"),
);

let failed = false;
async function section(name: string, fn: () => Promise<string>): Promise<void> {
  if (!wants(name)) return;
  const t = Date.now();
  const load = (): string => loadavg()[0]!.toFixed(2);
  const loadBefore = load();
  try {
    console.log(await fn());
    // Other processes on the machine skew timings: say how busy it was.
    console.log(`_${name}: ${((Date.now() - t) / 1000).toFixed(0)} s; 1-min load average ${loadBefore} before, ${load()} after._\n`);
  } catch (err) {
    failed = true;
    console.log(`### ${name}: failed\n\n\`\`\`\n${(err as Error)?.stack ?? err}\n\`\`\`\n`);
  }
  console.error(`[bench] ${name} took ${((Date.now() - t) / 1000).toFixed(0)} s`);
}

await section("renderer", async () => markdownTable((await rendererBench(options)).section));
await section("validation", async () => markdownTable(validationBench(options)));
await section("memory", async () => markdownTable(await memoryBench(options)));
await section("ingest", async () => markdownTable(await ingestBench(options)));
if (wants("workerd") || wants("load")) {
  await section(wants("workerd") ? "workerd" : "load", async () => {
    const { e2e, load } = await workerdBench(options, wants("load"));
    return [wants("workerd") ? scaledTable(e2e) : "", load ? markdownTable(load) : ""].join("\n");
  });
}
if (options.only?.has("cost")) await section("cost", async () => markdownTable(costBench()));
if (options.only?.has("blocks")) await section("blocks", async () => markdownTable(blocksBench(options)));
if (options.only?.has("cold-shard")) await section("cold-shard", async () => markdownTable(await coldShardBench(options)));
if (options.only?.has("capacity")) await section("capacity", async () => markdownTable(await capacityBench(options)));
if (options.only?.has("kv-scale")) await section("kv-scale", async () => markdownTable(await kvScaleBench(options)));
if (options.only?.has("registry-resolve")) await section("registry-resolve", async () => markdownTable(await registryResolveBench(options)));
if (options.only?.has("partitions")) await section("partitions", async () => markdownTable(await partitionsBench(options)));
if (options.only?.has("tenants")) {
  await section("tenants", async () => markdownTable(await tenantsBench(options, sitesOption(process.argv.slice(2), options.quick))));
}
if (!options.quick || options.only?.has("browser-view")) {
  await section("browser-view", async () => markdownTable(await browserViewBench(options)));
}
if (!options.quick || options.only?.has("view-cost")) {
  await section("view-cost", async () => markdownTable(await viewCostBench(options)));
}
// What the metered bench routes used, per path: the largest invocation against the limits (bench/limits.ts).
const limits = limitsTable();
if (limits) console.log(limits);
console.log(`_Total ${((Date.now() - started) / 1000).toFixed(0)} s._`);
process.exit(failed ? 1 : 0);
