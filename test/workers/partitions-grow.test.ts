/**
 * A partitioned site grows: a database appended to its SITE_DATABASES list is filled by a move in
 * bounded, resumable steps; before, during and after the move every crawl of the index and its
 * shards sees each live loc exactly once, and no write is lost.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { SHARD_SPAN } from "../../src/partitions/keys.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, databases: string): Env =>
  ({ ...baseEnv, SITES: origin, SITE_DATABASES: `${origin}=${databases}`, MAX_URLS_PER_SHARD: "40", INDEXNOW_ENDPOINT: "", PING_URLS: "" }) as Env;

const put = (env: Env, origin: string, records: unknown[]) =>
  call(env, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(records) });

/** Every loc of every shard the index lists (duplicates kept), and the partitions listed. */
async function crawl(env: Env, origin: string): Promise<{ locs: string[]; partitions: number[] }> {
  const shards = locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));
  const locs: string[] = [];
  for (const url of shards) locs.push(...locsOf(await document(env, url)));
  const partitions = [...new Set(shards.map((u) => Math.floor((Number(/-(\d+)\.xml/.exec(u)![1]) - 1) / SHARD_SPAN)))].sort();
  return { locs, partitions };
}

async function expectOnce(env: Env, origin: string, live: readonly string[], when: string): Promise<number[]> {
  const seen = await crawl(env, origin);
  expect(seen.locs.length, when).toBe(live.length);
  expect(new Set(seen.locs), when).toEqual(new Set(live));
  return seen.partitions;
}

const rows = async (db: D1Database, origin: string): Promise<number> =>
  (await db.prepare("SELECT count(*) AS n FROM urls WHERE origin = ?1 AND deleted = 0").bind(origin).first<{ n: number }>())!.n;

describe("adding a database to a partitioned site", () => {
  it("moves a quarter of the records onto it in resumable steps, each loc served exactly once throughout", async () => {
    const origin = freshOrigin("grow");
    const three = envOf(origin, "DB,PART_B,PART_C");
    const inputs = demoSection(origin, "products", 300);
    expect((await put(three, origin, inputs)).status).toBe(200);
    await regenerateAll(databaseServices(three));
    const live = validRecords(three, inputs).map((r) => r.loc);
    expect(await expectOnce(three, origin, live, "three databases")).toEqual([0, 1, 2]);

    // The fourth database is listed: nothing moves by itself, the new one is not served yet.
    const four = envOf(origin, "DB,PART_B,PART_C,PART_D");
    const site = servicesFor(four, origin);
    expect(await expectOnce(four, origin, live, "listed, not moved")).toEqual([0, 1, 2]);
    const moving = live.filter((loc) => partitionOf(loc, 4) === 3);
    const staying = live.filter((loc) => partitionOf(loc, 4) !== 3);
    expect(moving.length).toBeGreaterThan(40);
    expect(live.filter((loc) => partitionOf(loc, 3) !== partitionOf(loc, 4) && partitionOf(loc, 4) !== 3)).toEqual([]);

    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "started", settled: 3, target: 4 });
    const status = await call(four, `${origin}/sitemap-admin/status`, { headers: AUTH });
    expect(((await status.json()) as { partitions: unknown }).partitions).toMatchObject({ configured: 4, settled: 3, move: { target: 4 } });
    // While the move runs, writes go through, those to a loc on the move too (forwarded to its new home).
    const during = await put(four, origin, [
      { loc: moving[0], lastmod: "2026-11-02" },
      { loc: staying[0], lastmod: "2026-11-02" },
    ]);
    expect(during.status).toBe(200);
    expect(await during.json()).toMatchObject({ updated: 2 });
    expect((await put(four, origin, [{ loc: staying[1], lastmod: "2026-11-02" }])).status).toBe(200);

    // A step killed mid-copy (the new database fails once) resumes from the saved cursor.
    const copy = site.partitions![3]!.store.copy!;
    const killed = vi.spyOn(copy, "put").mockRejectedValueOnce(new Error("killed"));
    await expect(rebalanceStep(site, origin, { maxRows: 120 })).rejects.toThrow("killed");
    killed.mockRestore();
    let steps = 0;
    for (;;) {
      const step = await rebalanceStep(site, origin, { maxRows: 120 });
      steps++;
      await expectOnce(four, origin, live, `after step ${steps} (${step.state})`);
      if (step.state === "flipped") break;
      // The copy, then the new database's manifest planned in steps of the same bound, then the catch-up.
      expect(["copying", "building", "catching-up"]).toContain(step.state);
      // The database being filled holds copies, and its change feed (what notification announces) stays silent.
      const feed = await site.partitions![3]!.store.changes.changes(origin, { stamp: 0, key: 0, moveSeq: 0 }, 1000);
      expect(await rows(baseEnv.PART_D, origin)).toBeGreaterThan(0);
      expect(feed.rows).toEqual([]);
      expect(steps).toBeLessThan(10);
    }
    expect(steps).toBeGreaterThan(1);

    // After the flip: the new database serves its quarter, the old ones leave it out, writes reach it.
    expect(await rows(baseEnv.PART_D, origin)).toBe(moving.length);
    expect(await expectOnce(four, origin, live, "flipped")).toEqual([0, 1, 2, 3]);
    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "settled", settled: 4, target: 4 });
    const written = await call(four, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(moving[0]!)}`, { headers: AUTH });
    expect(await written.json(), "the write made during the move is the one served").toMatchObject({ lastmod: "2026-11-02" });
    const resent = await put(four, origin, [{ loc: moving[0], lastmod: "2026-11-03" }]);
    expect(resent.status).toBe(200);
    expect(await resent.json()).toMatchObject({ updated: 1, inserted: 0 });
    const found = await call(four, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(moving[0]!)}`, { headers: AUTH });
    expect(await found.json()).toMatchObject({ lastmod: "2026-11-03" });

    const deleted = moving.slice(1, 4);
    expect((await call(four, `${origin}/sitemap-admin/urls`, { method: "DELETE", headers: AUTH, body: JSON.stringify(deleted) })).status).toBe(200);
    const remaining = live.filter((loc) => !deleted.includes(loc));
    // Snapshots are published by the regeneration (the move ran a site pass of every partition): the deletes show after it.
    await regenerateAll(databaseServices(four));
    await expectOnce(four, origin, remaining, "regenerated after the move");
  });

  it("a database appended before the site's first request is still filled by a move, never taken for a share", async () => {
    const origin = freshOrigin("grow-early");
    const three = envOf(origin, "DB,PART_B,PART_C");
    const records = validRecords(three, demoSection(origin, "pages", 90));
    // Seeded as npm start does: straight into each record's home database, no request made.
    const dbs = [baseEnv.DB, baseEnv.PART_B, baseEnv.PART_C];
    for (const [p, db] of dbs.entries()) await new D1RecordWriter(db).upsert(records.filter((r) => partitionOf(r.loc, 3) === p));
    const four = envOf(origin, "DB,PART_B,PART_C,PART_D");
    const site = servicesFor(four, origin);
    expect(await site.layouts!.read()).toMatchObject({ settled: 3, target: 3 });
    await expectOnce(
      four,
      origin,
      records.map((r) => r.loc),
      "before the move",
    );
    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "started", target: 4 });
  });
});
