/**
 * A partitioned site on the background engine (src/jobs/): the cron queues one regeneration per
 * partition, each claimed in and run against its own database; a write asks every partition; a
 * database appended to the list is filled by the rebalance job, continued until its flip, then a
 * site pass of every partition. Each loc is served exactly once throughout.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { SHARD_SPAN } from "../../src/partitions/keys.ts";
import { runCron, withJobs } from "./support/jobs.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

afterEach(() => {
  vi.restoreAllMocks();
});

const envOf = (origin: string, databases: string): Env =>
  ({ ...baseEnv, SITES: origin, SITE_DATABASES: `${origin}=${databases}`, MAX_URLS_PER_SHARD: "40", INDEXNOW_ENDPOINT: "", PING_URLS: "" }) as Env;

async function crawl(env: Env, origin: string): Promise<{ locs: string[]; partitions: number[]; live: number }> {
  const shards = locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));
  const locs: string[] = [];
  let live = 0;
  for (const url of shards) {
    const res = await call(env, url);
    expect(res.status, url).toBe(200);
    // A snapshot, or the edge cache's copy of one version: never rendered from rows here.
    if (res.headers.get("X-Sitemap-Source") === "live") live++;
    locs.push(...locsOf(await res.text()));
  }
  const partitions = [...new Set(shards.map((u) => Math.floor((Number(/-(\d+)\.xml/.exec(u)![1]) - 1) / SHARD_SPAN)))].sort();
  return { locs, partitions, live };
}

describe("a partitioned site's jobs", () => {
  it("regenerate per partition from one cron trigger, and a fourth database is filled by the rebalance job", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("parts-jobs");
    const three = withJobs(envOf(origin, "DB,PART_B,PART_C"));
    const inputs = demoSection(origin, "products", 240);
    expect((await call(three.env, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(inputs) })).status).toBe(200);
    // The write asked every partition for its regeneration, each job naming its partition.
    const asked = three.queue.pending.filter((m) => m.body.kind === "regenerate").map((m) => m.body.partition);
    expect(asked.sort()).toEqual([0, 1, 2]);

    const deliveries = await runCron(three.env);
    expect(deliveries.every((d) => d.result === "acked")).toBe(true);
    const regenerated = deliveries.filter((d) => d.job.kind === "regenerate").map((d) => d.job.partition);
    expect(new Set(regenerated)).toEqual(new Set([0, 1, 2]));
    expect(deliveries.some((d) => d.job.kind === "rebalance")).toBe(true);
    const live = validRecords(three.env, inputs).map((r) => r.loc);
    const before = await crawl(three.env, origin);
    expect(before.locs.length).toBe(240);
    expect(new Set(before.locs)).toEqual(new Set(live));
    expect(before.partitions).toEqual([0, 1, 2]);
    expect(before.live).toBe(0); // every shard from its partition's snapshot

    // A fourth database: the cron's rebalance job moves, continues until the flip, then every partition's site pass.
    const four = withJobs(envOf(origin, "DB,PART_B,PART_C,PART_D"));
    const moved = await runCron(four.env, { maxWaitMs: 20_000 });
    expect(moved.every((d) => d.result === "acked")).toBe(true);
    const rebalances = moved.filter((d) => d.job.kind === "rebalance");
    expect(rebalances.length).toBeGreaterThan(1);
    const passes = moved.filter((d) => d.job.kind === "regenerate" && d.job.trigger === "rebalance").map((d) => d.job.partition);
    expect(new Set(passes)).toEqual(new Set([0, 1, 2, 3]));
    const after = await crawl(four.env, origin);
    expect(after.locs.length).toBe(240);
    expect(new Set(after.locs)).toEqual(new Set(live));
    expect(after.partitions).toEqual([0, 1, 2, 3]);
    expect(after.live).toBe(0);
  });
});

describe("a partitioned site's status", () => {
  it("shows every partition's jobs, each with its state and error, on the status endpoint and the dashboard", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const origin = freshOrigin("parts-status");
    const { env } = withJobs(envOf(origin, "DB,PART_B,PART_C"));
    const inputs = demoSection(origin, "products", 60);
    expect((await call(env, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(inputs) })).status).toBe(200);
    await runCron(env);
    // The third partition's regeneration went to the dead-letter queue (in its own database).
    await baseEnv.PART_C.prepare("UPDATE jobs SET dead_at = ?2, error = 'D1_ERROR: injected', chain = NULL WHERE kind = 'regenerate' AND origin = ?1")
      .bind(origin, Date.now())
      .run();
    const status = (await (await call(env, `${origin}/sitemap-admin/status`, { headers: AUTH })).json()) as {
      jobs: { kind: string; partition?: number; state: string; error: string | null }[];
    };
    const regenerations = status.jobs.filter((j) => j.kind === "regenerate").sort((a, b) => a.partition! - b.partition!);
    expect(regenerations.map((j) => [j.partition, j.state])).toEqual([
      [0, "idle"],
      [1, "idle"],
      [2, "dead"],
    ]);
    expect(regenerations[2]!.error).toBe("D1_ERROR: injected");
    const page = await (await call(env, `${origin}/sitemap-admin/`, { headers: AUTH })).text();
    expect(page).toMatch(/<tr data-job="regenerate" data-partition="2"><td>regenerate \(partition 3\)<\/td><td class="bad" data-figure="job-state">dead/);
  });
});
