/**
 * What a move leaves behind: the rows the old partitions gave away stay hidden in them for a day
 * (shards of an index read before the flip render from them: partitions-pinned.test.ts), then the
 * rebalance job removes them in bounded, resumable steps (src/partitions/purge.ts). Throughout,
 * every crawl has each loc exactly once; after it, each database holds only its own rows.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { PIN_GRACE_MS } from "../../src/partitions/pinned.ts";
import { type RebalanceStep, rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import type { Services } from "../../src/services-type.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };
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

/** Rows of the site in each database, tombstones and hidden rows included. */
const rowsIn = async (origin: string): Promise<number[]> =>
  Promise.all(
    DATABASES.map(
      async (name) => (await baseEnv[name].prepare("SELECT count(*) AS n FROM urls WHERE origin = ?1").bind(origin).first<{ n: number }>())!.n,
    ),
  );

async function expectOnce(env: Env, origin: string, live: readonly string[], when: string): Promise<void> {
  const links = locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));
  const locs: string[] = [];
  for (const url of links) locs.push(...locsOf(await document(env, url)));
  expect(locs.length, when).toBe(live.length);
  expect(new Set(locs), when).toEqual(new Set(live));
}

/** Steps of the site's move until its flip. */
async function moveToFlip(site: Services, origin: string): Promise<void> {
  for (let step = 0; ; step++) {
    if ((await rebalanceStep(site, origin, { maxRows: 200 })).state === "flipped") return;
    expect(step).toBeLessThan(40);
  }
}

describe("the rows a move leaves behind", () => {
  it("stay hidden for a day, then are removed in resumable steps, each loc served once throughout", async () => {
    const origin = freshOrigin("purge");
    const three = envOf(origin, 3);
    const inputs = demoSection(origin, "products", 300);
    expect((await call(three, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(inputs) })).status).toBe(200);
    const live = validRecords(three, inputs).map((r) => r.loc);
    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    await moveToFlip(site, origin);
    await regenerateAll(databaseServices(four));
    const moved = live.filter((loc) => partitionOf(loc, 4) === 3).length;
    expect(await rowsIn(origin)).toEqual([0, 1, 2, 3].map((p) => live.filter((loc) => partitionOf(loc, p < 3 ? 3 : 4) === p).length));

    // Within the day nothing is removed: an index read before the flip still needs those rows.
    const { flippedAt } = await site.layouts!.read();
    // A minute after the flip, the catch-up reads the old partitions' changes once more (none here).
    expect(await rebalanceStep(site, origin, { now: flippedAt! + 1000 })).toMatchObject({ state: "settled", rowsRead: 0 });
    expect(await rebalanceStep(site, origin, { now: flippedAt! + 60_000 })).toMatchObject({ state: "caught-up", copied: 0 });
    expect(await rebalanceStep(site, origin, { now: flippedAt! + PIN_GRACE_MS - 1000 })).toMatchObject({ state: "settled", removed: 0 });
    const status = await call(four, `${origin}/sitemap-admin/status`, { headers: AUTH });
    expect(((await status.json()) as { partitions: { leftBehind: unknown } }).partitions.leftBehind).toMatchObject({
      purgeFrom: new Date(flippedAt! + PIN_GRACE_MS).toISOString(),
      purging: null,
    });

    // Then: 50 rows read a step (a page is read whole); a step killed in its delete resumes from the saved cursor.
    const later = flippedAt! + PIN_GRACE_MS;
    const purge = site.partitions![1]!.store.purge!;
    const killed = vi.spyOn(purge, "purge").mockRejectedValueOnce(new Error("killed"));
    const steps: RebalanceStep[] = [];
    let failures = 0;
    for (let i = 0; i < 40; i++) {
      const step = await rebalanceStep(site, origin, { maxRows: 50, now: later }).catch((err: Error) => {
        expect(err.message).toBe("killed");
        failures++;
        return null;
      });
      await expectOnce(four, origin, live, `purge step ${i}`);
      if (!step) continue;
      steps.push(step);
      if (step.state === "purged") break;
      expect(step.state).toBe("purging");
    }
    killed.mockRestore();
    expect(failures).toBe(1);
    expect(steps.at(-1)!.state).toBe("purged");
    expect(steps.length).toBeGreaterThan(2);
    expect(steps.reduce((n, s) => n + s.removed, 0)).toBe(moved);
    // Each database now holds exactly the rows whose home it is: the three old ones gave up `moved` rows.
    expect(await rowsIn(origin)).toEqual([0, 1, 2, 3].map((p) => live.filter((loc) => partitionOf(loc, 4) === p).length));
    const layout = await site.layouts!.read();
    expect(layout).toMatchObject({ purgeCursor: null, purgedAt: later });
    expect(await rebalanceStep(site, origin, { now: later + 1000 })).toMatchObject({ state: "settled" });
    const after = await call(four, `${origin}/sitemap-admin/status`, { headers: AUTH });
    expect(((await after.json()) as { partitions: { leftBehind: unknown } }).partitions.leftBehind).toBeNull();

    // Nothing hidden: the partitions serve without filtering, and regeneration still lists every loc once.
    await regenerateAll(databaseServices(four));
    await expectOnce(four, origin, live, "purged and regenerated");
  });

  it("a second move before the purge copies no row left behind, and one purge then removes what both left", async () => {
    const origin = freshOrigin("purge-twice");
    const two = envOf(origin, 2);
    const inputs = demoSection(origin, "pages", 240);
    expect((await call(two, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(inputs) })).status).toBe(200);
    const live = validRecords(two, inputs).map((r) => r.loc);
    // Two → three, rows left behind; a moved loc changed after the flip (its hidden copy is now stale).
    const threeSite = servicesFor(envOf(origin, 3), origin);
    await moveToFlip(threeSite, origin);
    const toThird = live.find((loc) => partitionOf(loc, 3) === 2 && partitionOf(loc, 4) === 3)!;
    expect(
      (
        await call(envOf(origin, 3), `${origin}/sitemap-admin/urls`, {
          method: "PUT",
          headers: AUTH,
          body: JSON.stringify([{ loc: toThird, lastmod: "2026-11-20" }]),
        })
      ).status,
    ).toBe(200);
    // Three → four before any purge: it waits for the first move's last catch-up, a minute after its flip…
    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    const first = await site.layouts!.read();
    expect(await rebalanceStep(site, origin, { now: first.flippedAt! + 1000 })).toMatchObject({ state: "waiting", target: 3 });
    expect(await rebalanceStep(site, origin, { now: first.flippedAt! + 60_000 })).toMatchObject({ state: "caught-up" });
    // …then the copy takes each loc from the partition that serves it.
    await moveToFlip(site, origin);
    await regenerateAll(databaseServices(four));
    await expectOnce(four, origin, live, "after two moves");
    const found = await call(four, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(toThird)}`, { headers: AUTH });
    expect(await found.json()).toMatchObject({ lastmod: "2026-11-20" });

    const { flippedAt } = await site.layouts!.read();
    let last: RebalanceStep | null = null;
    for (let i = 0; i < 10 && last?.state !== "purged"; i++) last = await rebalanceStep(site, origin, { now: flippedAt! + PIN_GRACE_MS });
    expect(last!.state).toBe("purged");
    expect(await rowsIn(origin)).toEqual([0, 1, 2, 3].map((p) => live.filter((loc) => partitionOf(loc, 4) === p).length));
    await expectOnce(four, origin, live, "purged");
  });
});
