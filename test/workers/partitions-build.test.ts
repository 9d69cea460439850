/**
 * A move's flip never builds a whole partition's manifest in one step: after the copy, the new
 * database's manifest is planned across steps, each reading no more rows than the step's bound and
 * few D1 queries, resumable after a killed step; the flip then lists exactly the plan one walk makes.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { buildManifest } from "../../src/manifest/build.ts";
import { listedShards } from "../../src/manifest/manifest.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { SHARD_SPAN } from "../../src/partitions/keys.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { manifestBuildOptions } from "../../src/sitemaps.ts";
import { type Counts, countingEnv } from "./support/counting-env.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };
const DATABASES = ["DB", "PART_B", "PART_C", "PART_D"] as const;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

afterEach(() => {
  vi.restoreAllMocks();
});

const envOf = (origin: string, databases: number): Env =>
  ({
    ...baseEnv,
    SITES: origin,
    SITE_DATABASES: `${origin}=${DATABASES.slice(0, databases).join(",")}`,
    MAX_URLS_PER_SHARD: "40",
    INDEXNOW_ENDPOINT: "",
    PING_URLS: "",
  }) as Env;

/** `env` with the D1 statements of every database counted into `counts`. */
function counted(env: Env, counts: Counts): Env {
  const e = { ...env } as unknown as Record<string, D1Database>;
  for (const name of DATABASES) e[name] = countingEnv({ ...env, DB: e[name]! }, counts).DB;
  return e as unknown as Env;
}

/** Every loc of every shard the index lists (duplicates kept), and the partitions listed. */
async function crawl(env: Env, origin: string): Promise<{ locs: string[]; partitions: number[] }> {
  const shards = locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));
  const locs: string[] = [];
  for (const url of shards) locs.push(...locsOf(await document(env, url)));
  const partitions = [...new Set(shards.map((u) => Math.floor((Number(/-(\d+)\.xml/.exec(u)![1]) - 1) / SHARD_SPAN)))].sort();
  return { locs, partitions };
}

describe("a move's new partition's manifest", () => {
  it("is planned across bounded, resumable steps before the flip, and is what one walk plans", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("grow-build");
    const three = envOf(origin, 3);
    const inputs = [...demoSection(origin, "products", 260), ...demoSection(origin, "blog", 100)];
    expect((await call(three, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(inputs) })).status).toBe(200);
    await regenerateAll(databaseServices(three));
    const live = validRecords(three, inputs).map((r) => r.loc);
    const moving = live.filter((loc) => partitionOf(loc, 4) === 3);
    // More than one shard of each section and several steps of 20 rows.
    expect(moving.length).toBeGreaterThan(60);

    const four = envOf(origin, 4);
    expect(await rebalanceStep(servicesFor(four, origin), origin)).toMatchObject({ state: "started" });
    const MAX_ROWS = 20;
    const steps: { state: string; rowsRead: number; d1: number }[] = [];
    let killed = false;
    for (;;) {
      const counts = { d1: 0, kv: 0 };
      const site = servicesFor(counted(four, counts), origin);
      if (!killed && steps.some((s) => s.state === "building")) {
        // A step killed after planning (its plan not saved) is redone by the next from the last saved plan.
        killed = true;
        vi.spyOn(site.layouts!, "saveBuild").mockRejectedValueOnce(new Error("killed"));
        await expect(rebalanceStep(site, origin, { maxRows: MAX_ROWS })).rejects.toThrow("killed");
        continue;
      }
      const step = await rebalanceStep(site, origin, { maxRows: MAX_ROWS });
      steps.push({ state: step.state, rowsRead: step.rowsRead, d1: counts.d1 });
      if (step.state === "flipped") break;
      // The catch-up re-reads the old partitions' writes since a minute before the start: here, the whole seed.
      expect(["copying", "building", "catching-up"]).toContain(step.state);
      // Until the flip the index lists the three old partitions, every loc once.
      const before = await crawl(four, origin);
      expect(before.partitions).toEqual([0, 1, 2]);
      expect(before.locs.length).toBe(live.length);
      expect(steps.length).toBeLessThan(80);
    }
    expect(killed).toBe(true);
    const building = steps.filter((s) => s.state === "building");
    // The plan took several steps, none reading more than its rows, each a few D1 queries.
    expect(building.length).toBeGreaterThanOrEqual(Math.floor(moving.length / MAX_ROWS));
    for (const step of building) {
      expect(step.rowsRead).toBeLessThanOrEqual(MAX_ROWS);
      expect(step.d1).toBeLessThanOrEqual(40);
    }
    // The flip's step reads the last minute of the old partitions' changes again (here: the whole seed), the flip itself, in under 100 queries.
    expect(steps.at(-1)!.d1).toBeLessThanOrEqual(100);

    // The new partition's manifest is the plan of one walk over its rows, complete and not partial.
    const part = servicesFor(four, origin).partitions![3]!;
    const manifest = (await part.manifests.load(origin))!;
    const walked = await buildManifest(part.store.reader, origin, null, { ...manifestBuildOptions(part.config, origin), now: manifest.builtAt });
    expect(manifest.shards).toEqual(walked.shards);
    expect(manifest.version).toBe(walked.version);
    expect(manifest.partial).toBeUndefined();
    expect(listedShards(manifest).reduce((n, s) => n + s.urlCount, 0)).toBe(moving.length);
    // The layout keeps no plan once the move is done.
    expect(await servicesFor(four, origin).layouts!.loadBuild()).toBeNull();

    const after = await crawl(four, origin);
    expect(after.partitions).toEqual([0, 1, 2, 3]);
    expect(after.locs.length).toBe(live.length);
    expect(new Set(after.locs)).toEqual(new Set(live));
  });
});
