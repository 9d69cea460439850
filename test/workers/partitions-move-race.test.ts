/**
 * Two steps of one move at once (a step overtaken while its page write was slow, and another that
 * ran on to the flip): the overtaken one can neither save its older layout back nor write an older
 * value over a newer one (issue move-safe, item 1). The layout is saved by compare-and-set on its
 * version, checked before every page; the copy inserts only where the new partition holds no row.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { LayoutChangedError } from "../../src/partitions/layout.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { gatedCopy } from "./support/gated-copy.ts";
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

describe("two steps of one move at once", () => {
  it("the overtaken step stops: no older layout saved back, no older value written, no deleted loc back", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("move-race");
    const three = envOf(origin, "DB,PART_B,PART_C");
    const inputs = demoSection(origin, "products", 200);
    expect((await put(three, origin, inputs)).status).toBe(200);
    await regenerateAll(databaseServices(three));
    const live = validRecords(three, inputs).map((r) => r.loc);
    const moving = live.filter((loc) => partitionOf(loc, 4) === 3);
    expect(moving.length).toBeGreaterThan(10);

    const four = envOf(origin, "DB,PART_B,PART_C,PART_D");
    const site = servicesFor(four, origin);
    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "started" });

    // Step A copies its first page and is held in the page write (slow D1, a paused isolate)…
    const a = gatedCopy(site, 3);
    const stepA = rebalanceStep(a.site, origin, { maxRows: 1_000_000 });
    await a.entered;
    // …while step B, a delivery that took over, runs the move to its flip.
    let state = "";
    for (let i = 0; i < 50 && state !== "flipped"; i++) state = (await rebalanceStep(site, origin)).state;
    expect(state).toBe("flipped");
    const flipped = await site.layouts!.read();
    expect(flipped).toMatchObject({ settled: 4, target: 4 });

    // After the flip: one moved loc re-sent with a newer lastmod, another deleted.
    const [resent, deleted] = moving;
    expect((await put(four, origin, [{ loc: resent, lastmod: "2026-11-27T10:00:00Z", section: "products" }])).status).toBe(200);
    const gone = await call(four, `${origin}/sitemap-admin/urls`, { method: "DELETE", headers: AUTH, body: JSON.stringify([deleted]) });
    expect(gone.status).toBe(200);

    // Step A wakes up: its page write inserts nothing over what is there, and it stops at the layout's version.
    a.open();
    await expect(stepA).rejects.toBeInstanceOf(LayoutChangedError);
    expect(await site.layouts!.read()).toMatchObject({ settled: 4, target: 4, version: flipped.version });

    // Writes to moved locs go to their new home; the re-sent loc keeps its newer lastmod, the deleted one stays deleted.
    const found = (await (await call(four, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(resent!)}`, { headers: AUTH })).json()) as {
      lastmod: string;
    };
    expect(found.lastmod).toBe("2026-11-27T10:00:00Z");
    expect((await call(four, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(deleted!)}`, { headers: AUTH })).status).toBe(404);
    await regenerateAll(databaseServices(four));
    const shards = locsOf(await document(four, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));
    const served: string[] = [];
    for (const url of shards) served.push(...locsOf(await document(four, url)));
    expect(served.length).toBe(live.length - 1);
    expect(new Set(served)).toEqual(new Set(live.filter((l) => l !== deleted)));
  });
});
