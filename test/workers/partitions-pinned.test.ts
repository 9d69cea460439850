/**
 * A crawl that straddles a move's flip: it read the index before the flip and reads the shards
 * after it. The index links each shard with its partition count (src/partitions/pinned.ts), so the
 * old partitions' shards are read as that index listed them — each loc exactly once, the moved ones
 * included — for a day after the flip; then, and for links without the count, as they are now.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { paged } from "../../src/core/source.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { shardReading } from "../../src/http/shard-reading.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { SHARD_SPAN } from "../../src/partitions/keys.ts";
import { PIN_GRACE_MS } from "../../src/partitions/pinned.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { renderShard, shardPages } from "../../src/sitemaps.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, databases: string): Env =>
  ({ ...baseEnv, SITES: origin, SITE_DATABASES: `${origin}=${databases}`, MAX_URLS_PER_SHARD: "40", INDEXNOW_ENDPOINT: "", PING_URLS: "" }) as Env;

const shardLinks = async (env: Env, origin: string): Promise<string[]> =>
  locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));

async function read(env: Env, links: readonly string[]): Promise<string[]> {
  const locs: string[] = [];
  for (const url of links) locs.push(...locsOf(await document(env, url)));
  return locs;
}

/** Three databases with 300 products, regenerated; the fourth listed; the move run to its flip. */
async function grownSite(label: string) {
  const origin = freshOrigin(label);
  const three = envOf(origin, "DB,PART_B,PART_C");
  const inputs = demoSection(origin, "products", 300);
  expect((await call(three, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(inputs) })).status).toBe(200);
  await regenerateAll(databaseServices(three));
  const live = validRecords(three, inputs).map((r) => r.loc);
  const four = envOf(origin, "DB,PART_B,PART_C,PART_D");
  const site = servicesFor(four, origin);
  const before = await shardLinks(four, origin);
  const manifestBefore = await site.manifests.load(origin);
  for (let step = 0; ; step++) {
    if ((await rebalanceStep(site, origin, { maxRows: 200 })).state === "flipped") break;
    expect(step).toBeLessThan(10);
  }
  return { origin, four, site, live, before, manifestBefore: manifestBefore!, moving: live.filter((loc) => partitionOf(loc, 4) === 3) };
}

describe("a crawl across a move's flip", () => {
  it("reads the shards of an index from before the flip as listed: each loc exactly once", async () => {
    const { origin, four, live, before, moving } = await grownSite("pin");
    expect(moving.length).toBeGreaterThan(40);
    // The index links each shard with the partition count it listed.
    expect(before.length).toBeGreaterThan(6);
    for (const link of before) expect(link).toMatch(/^https:\/\/pin-[^/]+\/sitemap-products-\d+\.xml\?partitions=3$/);

    // Read after the flip, the old index's shards still hold the moved locs: nothing missed, nothing twice.
    const old = await read(four, before);
    expect(old.length).toBe(live.length);
    expect(new Set(old)).toEqual(new Set(live));

    // The index after the flip lists the fourth database's shards, under the new count: also exactly once.
    const after = await shardLinks(four, origin);
    for (const link of after) expect(link).toMatch(/\?partitions=4$/);
    const partitions = new Set(after.map((u) => Math.floor((Number(/-(\d+)\.xml/.exec(u)![1]) - 1) / SHARD_SPAN)));
    expect([...partitions].sort()).toEqual([0, 1, 2, 3]);
    const now = await read(four, after);
    expect(now.length).toBe(live.length);
    expect(new Set(now)).toEqual(new Set(live));

    // The same shard under the two counts: the old one holds the moved locs of its range, the new one not.
    const link = before[0]!;
    const [pinned, current] = [await call(four, link), await call(four, link.replace("partitions=3", "partitions=4"))];
    const [pinnedLocs, currentLocs] = [locsOf(await pinned.text()), locsOf(await current.text())];
    expect(pinnedLocs.length).toBeGreaterThan(currentLocs.length);
    expect(pinnedLocs.filter((loc) => !currentLocs.includes(loc)).every((loc) => moving.includes(loc))).toBe(true);

    // A shard of the new database did not exist under three partitions.
    const newShard = after.find((u) => Number(/-(\d+)\.xml/.exec(u)![1]) > 3 * SHARD_SPAN)!;
    expect((await call(four, newShard.replace("partitions=4", "partitions=3"))).status).toBe(404);
  });

  it("serves old links as the shard is now once the grace is over, and links without a count always", async () => {
    const { origin, four, site, live, before, moving } = await grownSite("pin-late");
    const staying = live.filter((loc) => !moving.includes(loc));
    // Without the count: the shard as it is now (the moved locs are the fourth database's).
    const plain = await read(
      four,
      before.map((u) => u.replace(/\?.*$/, "")),
    );
    expect(new Set(plain)).toEqual(new Set(staying));
    // A count that is no layout of this site, or garbage: as now.
    expect(
      new Set(
        await read(
          four,
          before.map((u) => u.replace("partitions=3", "partitions=9")),
        ),
      ),
    ).toEqual(new Set(staying));
    expect(
      new Set(
        await read(
          four,
          before.map((u) => u.replace("partitions=3", "partitions=x")),
        ),
      ),
    ).toEqual(new Set(staying));

    // A day after the flip the old links read the shards as they are now.
    const layout = await site.layouts!.read();
    await site.layouts!.save({ ...layout, flippedAt: Date.now() - PIN_GRACE_MS - 1000 }, Date.now());
    expect(new Set(await read(four, before))).toEqual(new Set(staying));
    void origin;
  });

  it("a location whose manifest predates the flip renders its shards as that manifest listed them", async () => {
    const { origin, site, live, manifestBefore } = await grownSite("pin-stale");
    expect(manifestBefore.partitions).toBe(3);
    // That location's manifest (cached for MANIFEST_CACHE_TTL) lists three partitions' shards; the
    // live render of each, for the links it listed, holds the moved locs as before the flip.
    const locs: string[] = [];
    for (const shard of manifestBefore.shards) {
      const reading = await shardReading(site, manifestBefore, shard, 3);
      if (reading instanceof Response) throw new Error(`404 for ${shard.n}`);
      expect(reading.version).toBe(shard.version);
      locs.push(...locsOf(await new Response(renderShard(reading.services, origin, shard, paged(shardPages(reading.services, origin, shard)))).text()));
    }
    expect(locs.length).toBe(live.length);
    expect(new Set(locs)).toEqual(new Set(live));
  });
});

describe("a site's first move, from one database to two", () => {
  it("its links carry no query until the flip, change once then, and an index read before the flip still reads each loc once", async () => {
    const origin = freshOrigin("first-move");
    const one = envOf(origin, "DB");
    const inputs = demoSection(origin, "products", 200);
    expect((await call(one, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(inputs) })).status).toBe(200);
    await regenerateAll(databaseServices(one));
    const live = validRecords(one, inputs).map((r) => r.loc);
    const unpartitioned = await shardLinks(one, origin);
    for (const link of unpartitioned) expect(link).not.toContain("?");

    // A second database listed: the site is partitioned under one partition; its links are unchanged.
    const two = envOf(origin, "DB,PART_B");
    const site = servicesFor(two, origin);
    await regenerateAll(databaseServices(two));
    const before = await shardLinks(two, origin);
    expect(before).toEqual(unpartitioned);
    for (let step = 0; ; step++) {
      if ((await rebalanceStep(site, origin, { maxRows: 100 })).state === "flipped") break;
      expect(step).toBeLessThan(10);
    }
    expect(live.filter((loc) => partitionOf(loc, 2) === 1).length).toBeGreaterThan(40);

    // Read after the flip, the links without a query still hold the moved half: each loc once.
    const old = await read(two, before);
    expect(old.length).toBe(live.length);
    expect(new Set(old)).toEqual(new Set(live));
    // The index after the flip: links with the new count, once.
    const after = await shardLinks(two, origin);
    for (const link of after) expect(link).toMatch(/\?partitions=2$/);
    const now = await read(two, after);
    expect(now.length).toBe(live.length);
    expect(new Set(now)).toEqual(new Set(live));

    // A link without a query is read as one partition listed it for a day after the flip from one, then as the shard is now.
    const manifest = (await site.manifests.load(origin))!;
    const first = manifest.shards.find((s) => s.urlCount > 0)!;
    const within = await shardReading(site, manifest, first, null);
    expect(within).toMatchObject({ snapshot: false });
    expect((within as { services: unknown }).services).not.toBe(site);
    const later = await shardReading(site, manifest, first, null, Date.now() + PIN_GRACE_MS + 1);
    expect(later).toMatchObject({ snapshot: true, version: first.version });
    expect((later as { services: unknown }).services).toBe(site);
  });
});
