/**
 * A full sync right after a move's flip (issue 49, defect 1): the old partitions still hold the
 * rows they gave away, hidden until the purge. A sync that re-sends exactly what the site serves
 * must see only served rows — its guard counts none of the hidden copies as "would delete", its
 * commit tombstones none of them, so the post-flip catch-up has no deletion to carry to the rows'
 * new homes — and every loc it re-sent is still served after that catch-up.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const JSON_TYPE = { "Content-Type": "application/json" };
const DATABASES = ["DB", "PART_B", "PART_C", "PART_D"] as const;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, count: number): Env =>
  ({
    ...baseEnv,
    SITES: origin,
    SITE_DATABASES: `${origin}=${DATABASES.slice(0, count).join(",")}`,
    MAX_URLS_PER_SHARD: "40",
    INDEXNOW_ENDPOINT: "",
    PING_URLS: "",
  }) as Env;

async function admin(env: Env, origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await call(env, `${origin}/sitemap-admin${path}`, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : JSON_TYPE) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Every loc of every shard the index lists, duplicates kept. */
async function crawl(env: Env, origin: string): Promise<string[]> {
  const shards = locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));
  const locs: string[] = [];
  for (const url of shards) locs.push(...locsOf(await document(env, url)));
  return locs;
}

/** The locs of `locs` the admin API finds. */
async function found(env: Env, origin: string, locs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const loc of locs) {
    const res = await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: AUTH });
    if (res.status === 200) out.push(loc);
  }
  return out;
}

describe("a full sync right after a flip", () => {
  it("re-sending exactly what is served deletes nothing, at maxDelete 0, and every loc is still served after the post-flip catch-up", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("sync-after-flip");
    const three = envOf(origin, 3);
    const blog = demoSection(origin, "blog", 150);
    expect((await admin(three, origin, "PUT", "/urls", [...demoSection(origin, "products", 60), ...blog])).status).toBe(200);
    const blogLocs = validRecords(three, blog).map((r) => r.loc);
    const moving = blogLocs.filter((loc) => partitionOf(loc, 4) === 3);
    expect(moving.length, "some of the section moves to the new database").toBeGreaterThan(10);

    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    let step = await rebalanceStep(site, origin);
    for (let i = 0; i < 30 && step.state !== "flipped"; i++) step = await rebalanceStep(site, origin, { maxRows: 1_000 });
    expect(step.state).toBe("flipped");
    // The moved rows are still in their old homes, hidden: the copies a sync must not see.
    const hidden = await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND section = 'blog' AND deleted = 0")
      .bind(origin)
      .first<{ n: number }>();
    expect(hidden!.n).toBeGreaterThan(blogLocs.filter((loc) => partitionOf(loc, 4) === 0).length);
    // What the move marked in each old database is what the hash gives away (migration 0024), and nothing else.
    for (const [p, name] of DATABASES.slice(0, 3).entries()) {
      const { results } = await baseEnv[name]
        .prepare("SELECT loc, moved_in FROM urls WHERE origin = ?1")
        .bind(origin)
        .all<{ loc: string; moved_in: number | null }>();
      expect(results.filter((r) => r.moved_in !== null).map((r) => r.loc)).toEqual(results.filter((r) => partitionOf(r.loc, 4) !== p).map((r) => r.loc));
      expect(new Set(results.map((r) => r.moved_in).filter((m) => m !== null))).toEqual(
        new Set(results.some((r) => partitionOf(r.loc, 4) !== p) ? [4] : []),
      );
    }

    const started = await admin(four, origin, "POST", "/syncs", { sites: [origin], section: "blog", maxDelete: 0 });
    expect(started.status).toBe(201);
    const id = started.json["id"] as string;
    expect((await admin(four, origin, "PUT", `/syncs/${id}/urls`, blog)).status).toBe(200);
    let committed = await admin(four, origin, "POST", `/syncs/${id}/commit`, { maxDelete: 0 });
    // Accepted (200 done, 202 more to commit), not refused by the guard (409).
    expect([200, 202], JSON.stringify(committed.json)).toContain(committed.status);
    for (let i = 0; i < 10 && committed.json["done"] !== true; i++) committed = await admin(four, origin, "POST", `/syncs/${id}/commit`);
    expect(committed.json).toMatchObject({ state: "committed", done: true, received: 150, deleted: 0 });

    // The catch-up a minute after the flip carries an old home's deletions over: there must be none.
    const { flippedAt } = await site.layouts!.read();
    expect(await rebalanceStep(site, origin, { now: flippedAt! + 60_000 })).toMatchObject({ state: "caught-up", copied: 0 });
    expect(await found(four, origin, blogLocs)).toEqual(blogLocs);
    await regenerateAll(databaseServices(four));
    const served = (await crawl(four, origin)).filter((loc) => loc.includes("/blog/"));
    expect(served.length).toBe(150);
    expect(new Set(served)).toEqual(new Set(blogLocs));
  });
});
