/**
 * Attacked and held (issue 49, Deliver 5): an index of a site over two databases, read before its
 * move, crawled after two moves within the day (2 → 3 → 4): its links carry the count 2, are pinned
 * to it after the second flip too (src/partitions/pinned.ts `isPinned`: fewer than now, within a
 * day of the last flip), and read the rows both moves left hidden in DB and PART_B: every link 200,
 * every URL once.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, document, freshOrigin, locsOf } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };
const BINDINGS = ["DB", "PART_B", "PART_C", "PART_D"];

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, count: number): Env =>
  ({
    ...baseEnv,
    SITES: origin,
    SITE_DATABASES: `${origin}=${BINDINGS.slice(0, count).join(",")}`,
    MAX_URLS_PER_SHARD: "40",
    INDEXNOW_ENDPOINT: "",
    PING_URLS: "",
  }) as Env;

const shardLinks = async (env: Env, origin: string): Promise<string[]> =>
  locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));

/** Runs the site's move over `count` databases to its flip, then (a minute later) its catch-up after the flip. */
async function grow(origin: string, count: number, now: number): Promise<void> {
  const site = servicesFor(envOf(origin, count), origin);
  for (let step = 0; ; step++) {
    if ((await rebalanceStep(site, origin, { maxRows: 500, now })).state === "flipped") break;
    expect(step).toBeLessThan(10);
  }
  for (let step = 0; ; step++) {
    const state = (await rebalanceStep(site, origin, { maxRows: 500, now: now + 61_000 })).state;
    if (state === "caught-up") break;
    expect(step, state).toBeLessThan(10);
  }
  await regenerateAll(databaseServices(envOf(origin, count)));
}

/** 90 products over DB,PART_B; the index read; 2 → 3 → 4 within the day; that index crawled. */
async function crawlAfterTwoMoves(): Promise<{ urls: number; distinct: number; statuses: number[] }> {
  const origin = freshOrigin("b49-holds-two-moves");
  const two = envOf(origin, 2);
  const put = await call(two, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(demoSection(origin, "products", 90)) });
  expect(put.status).toBe(200);
  await regenerateAll(databaseServices(two));
  const links = await shardLinks(two, origin);
  const now = Date.now();
  await grow(origin, 3, now);
  await grow(origin, 4, now + 120_000);
  const locs: string[] = [];
  const statuses: number[] = [];
  for (const link of links) {
    const res = await call(envOf(origin, 4), link);
    statuses.push(res.status);
    if (res.status === 200) locs.push(...locsOf(await res.text()));
  }
  return { urls: locs.length, distinct: new Set(locs).size, statuses: [...new Set(statuses)] };
}

describe("an index of two databases read before a move, two moves within the day (issue 49 Deliver 5)", () => {
  it("holds: every link 200, every URL once", async () => {
    expect(await crawlAfterTwoMoves()).toEqual({ urls: 90, distinct: 90, statuses: [200] });
  });
});
