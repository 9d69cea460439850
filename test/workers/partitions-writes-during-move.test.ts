/**
 * Writes during a move (issue move-safe, item 2; docs/capacity.md "Writes during a move"): every
 * write is accepted while a database appended to the site is filled — a new loc, a re-sent loc, a
 * deleted loc, a sync's batches and its commit — and after the flip the site serves each loc once,
 * with its last acknowledged value, no deleted loc back. What reached an old partition only (a
 * write killed between its two databases) is brought over by the catch-up before the flip.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import type { Services } from "../../src/services-type.ts";
import { gate, gatedCopy } from "./support/gated-copy.ts";
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

/** The lastmod the admin API answers for each loc (null: 404; "none": a record without one). */
async function lastmods(env: Env, origin: string, locs: readonly string[]): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const loc of locs) {
    const res = await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: AUTH });
    out.set(loc, res.status === 404 ? null : (((await res.json()) as { lastmod?: string | null }).lastmod ?? "none"));
  }
  return out;
}

describe("writes during a move", () => {
  it("are all accepted, and after the flip each loc is served once with its last acknowledged value", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("move-writes");
    const three = envOf(origin, 3);
    const inputs = demoSection(origin, "products", 180);
    expect((await admin(three, origin, "PUT", "/urls", inputs)).status).toBe(200);
    await regenerateAll(databaseServices(three));
    const live = validRecords(three, inputs).map((r) => r.loc);
    const moving = live.filter((loc) => partitionOf(loc, 4) === 3);
    const staying = live.filter((loc) => partitionOf(loc, 4) !== 3);
    expect(moving.length).toBeGreaterThan(30);

    // What the site must serve after the flip: loc → lastmod; deleted locs are absent.
    const expected = new Map(await lastmods(three, origin, live));
    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "started", target: 4 });
    const deleted = new Set<string>();
    let fresh = 0;
    const newLoc = (): string => `${origin}/products/new-during-move-${fresh++}`;

    // A copy step held after reading its page; meanwhile a loc of that page is deleted and another re-sent.
    const held = gatedCopy(site, 3);
    const stepA = rebalanceStep(held.site, origin, { maxRows: 60 });
    await held.entered;
    const [raceDeleted, raceResent] = moving;
    expect((await admin(four, origin, "DELETE", "/urls", [raceDeleted])).status).toBe(200);
    expect((await admin(four, origin, "PUT", "/urls", [{ loc: raceResent, lastmod: "2026-11-26" }])).status).toBe(200);
    deleted.add(raceDeleted!);
    expected.delete(raceDeleted!);
    expected.set(raceResent!, "2026-11-26");
    // Both writes reached the new home at once (forward.ts), the deletion as a tombstone.
    const inNew = async (loc: string) =>
      baseEnv.PART_D.prepare("SELECT lastmod, deleted FROM urls WHERE loc = ?1").bind(loc).first<{ lastmod: string | null; deleted: number }>();
    expect(await inNew(raceResent!)).toMatchObject({ lastmod: "2026-11-26", deleted: 0 });
    expect(await inNew(raceDeleted!)).toMatchObject({ deleted: 1 });
    held.open();
    expect((await stepA).state).toBe("copying");
    expect(await inNew(raceResent!), "the held page wrote nothing over the newer row").toMatchObject({ lastmod: "2026-11-26", deleted: 0 });
    expect(await inNew(raceDeleted!)).toMatchObject({ deleted: 1 });

    // Each step of the move is crossed by writes: a new loc, a re-sent moving loc, a deleted one.
    let second = 0;
    let steps = 0;
    for (;;) {
      const tick = `2026-11-27T00:00:${String(second++).padStart(2, "0")}Z`;
      const added = newLoc();
      const resent = moving[2 + (steps % (moving.length - 10))]!;
      const gone = staying.length > steps ? moving[moving.length - 1 - steps]! : null;
      const written = await admin(four, origin, "PUT", "/urls", [
        { loc: added, lastmod: tick },
        { loc: resent, lastmod: tick },
      ]);
      expect(written.status, `write during step ${steps}`).toBe(200);
      expected.set(added, tick);
      expected.set(resent, tick);
      if (gone && !deleted.has(gone) && gone !== resent) {
        expect((await admin(four, origin, "DELETE", "/urls", [gone])).status).toBe(200);
        deleted.add(gone);
        expected.delete(gone);
      }
      const step = await rebalanceStep(site, origin, { maxRows: 60 });
      steps++;
      if (step.state === "flipped") break;
      expect(["copying", "building", "catching-up"]).toContain(step.state);
      expect(steps).toBeLessThan(60);
    }

    // After the flip: the admin answers each loc's last acknowledged value, deleted ones are gone…
    const answered = await lastmods(four, origin, [...expected.keys(), ...deleted]);
    for (const [loc, lastmod] of expected) expect(answered.get(loc), loc).toBe(lastmod);
    for (const loc of deleted) expect(answered.get(loc), loc).toBeNull();
    // …and a crawl after the site pass reads every live loc exactly once.
    await regenerateAll(databaseServices(four));
    const served = await crawl(four, origin);
    expect(served.length).toBe(expected.size);
    expect(new Set(served)).toEqual(new Set(expected.keys()));
  });

  it("a write between the catch-up and the switch reaches the new home by its forward", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("move-switch");
    const three = envOf(origin, 3);
    const inputs = demoSection(origin, "products", 90);
    expect((await admin(three, origin, "PUT", "/urls", inputs)).status).toBe(200);
    const live = validRecords(three, inputs);
    const index = live.findIndex((r) => partitionOf(r.loc, 4) === 3);
    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "started" });
    // The flip takes each old partition's regeneration lease after the catch-up: the first is held at a gate.
    const leaseGate = gate();
    const first = site.partitions![0]!;
    const regen = first.regen!;
    const acquire = async (...args: Parameters<typeof regen.acquire>) => {
      await leaseGate.pass();
      return regen.acquire(...args);
    };
    const heldRegen = new Proxy(regen, {
      get: (target, key) => {
        if (key === "acquire") return acquire;
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const held: Services = { ...site, partitions: [{ ...first, regen: heldRegen }, ...site.partitions!.slice(1)] };
    const flipping = (async () => {
      for (let i = 0; i < 40; i++) {
        const step = await rebalanceStep(held, origin, { maxRows: 1_000 });
        if (step.state === "flipped") return step.state;
      }
      return "not flipped";
    })();
    await leaseGate.entered;
    expect((await admin(four, origin, "PUT", "/urls", [{ ...inputs[index]!, lastmod: "2026-11-23" }])).status).toBe(200);
    leaseGate.open();
    expect(await flipping).toBe("flipped");
    expect((await lastmods(four, origin, [live[index]!.loc])).get(live[index]!.loc)).toBe("2026-11-23");
  });

  it("brings over by its catch-up what reached an old partition only, before the flip and a minute after it", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("move-catch-up");
    const three = envOf(origin, 3);
    const inputs = demoSection(origin, "products", 200);
    expect((await admin(three, origin, "PUT", "/urls", inputs)).status).toBe(200);
    const live = validRecords(three, inputs);
    // Locs the copy reads first (partition 0, the first walked), moving to the new partition.
    const moving = live.filter((r) => partitionOf(r.loc, 4) === 3 && partitionOf(r.loc, 3) === 0);
    expect(moving.length).toBeGreaterThan(3);
    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "started" });
    // The copy walks past partition 0…
    let step = await rebalanceStep(site, origin, { maxRows: 30 });
    for (let i = 0; i < 20 && (await site.layouts!.read()).cursor!.partition < 1; i++) step = await rebalanceStep(site, origin, { maxRows: 30 });
    expect(step.state).toBe("copying");
    // …and only then do writes reach it alone (a sync's commit deleting, a write killed before its forward).
    const [changed, removed, lateRemoved] = moving;
    await new D1RecordWriter(baseEnv.DB).upsert([{ ...changed!, lastmod: "2026-11-25" }], Date.now() + 1);
    await new D1RecordWriter(baseEnv.DB).delete([removed!.loc], Date.now() + 1);
    for (let i = 0; i < 40 && step.state !== "flipped"; i++) step = await rebalanceStep(site, origin, { maxRows: 1_000 });
    expect(step.state).toBe("flipped");
    const after = await lastmods(four, origin, [changed!.loc, removed!.loc]);
    expect(after.get(changed!.loc)).toBe("2026-11-25");
    expect(after.get(removed!.loc), "removed before the flip").toBeNull();

    // A write that read the layout before the flip deletes in the old partition after it: a minute later it reaches the new home.
    await new D1RecordWriter(baseEnv.DB).delete([lateRemoved!.loc], Date.now() + 1);
    expect((await lastmods(four, origin, [lateRemoved!.loc])).get(lateRemoved!.loc), "still served until the catch-up").toBe(
      lateRemoved!.lastmod ?? "none",
    );
    const { flippedAt } = await site.layouts!.read();
    expect(await rebalanceStep(site, origin, { now: flippedAt! + 60_000 })).toMatchObject({ state: "caught-up", copied: 1 });
    expect((await lastmods(four, origin, [lateRemoved!.loc])).get(lateRemoved!.loc), "removed after the flip").toBeNull();
    expect((await site.layouts!.read()).catchUp).toBeNull();
  });

  it("a sync opened before the move and committed during it deletes exactly what it answers; one spanning a flip is refused before deleting", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("move-sync");
    const three = envOf(origin, 3);
    const blog = demoSection(origin, "blog", 150);
    expect((await admin(three, origin, "PUT", "/urls", [...demoSection(origin, "products", 60), ...blog])).status).toBe(200);
    const started = await admin(three, origin, "POST", "/syncs", { sites: [origin], section: "blog" });
    expect(started.status).toBe(201);
    const id = started.json["id"] as string;
    // It drops 30 records, all of partition 0: the other parts have nothing to delete, so they stay
    // open while partition 0's commit deletes (the site's sync then reads as open, not committing).
    const homes = validRecords(three, blog).map((r) => partitionOf(r.loc, 3));
    const dropped = new Set(homes.flatMap((home, i) => (home === 0 ? [i] : [])).slice(0, 30));
    expect(dropped.size).toBe(30);
    const kept = blog.filter((_, i) => !dropped.has(i));
    expect((await admin(three, origin, "PUT", `/syncs/${id}/urls`, kept.slice(0, 50))).status).toBe(200);

    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "started" });
    expect((await rebalanceStep(site, origin, { maxRows: 100 })).state).toBe("copying");
    // The rest of the sync's input arrives during the move, one record re-sent with a new lastmod.
    const changedLoc = validRecords(four, kept)[60]!.loc;
    const late = kept.slice(50).map((r, i) => (i === 10 ? { ...r, lastmod: "2026-11-24" } : r));
    expect((await admin(four, origin, "PUT", `/syncs/${id}/urls`, late)).status).toBe(200);
    // A second sync started during the move is accepted too.
    const other = await admin(four, origin, "POST", "/syncs", { sites: [origin], section: "products" });
    expect(other.status).toBe(201);

    // Its commit begins (nothing deleted yet): the flip waits while it is committing.
    const sync = site.store.sync!;
    // 30 of 150 in scope (20%), all in one partition: the site's share, not that partition's.
    await sync.commit(id, { maxDelete: 0.25, maxChunks: 0 });
    expect((await baseEnv.DB.prepare("SELECT state FROM syncs WHERE id = ?1").bind(id.split(".")[0]).first<{ state: string }>())!.state).toBe(
      "committing",
    );
    let step = await rebalanceStep(site, origin, { maxRows: 1_000 });
    for (let i = 0; i < 20 && step.state !== "waiting"; i++) step = await rebalanceStep(site, origin, { maxRows: 1_000 });
    expect(step.state).toBe("waiting");
    expect(step.waitingFor).toMatch(/^a sync's commit \(part .+\) to end$/);
    const status = await admin(four, origin, "GET", "/status");
    expect((status.json["partitions"] as { move: unknown }).move).toMatchObject({ target: 4, copying: null, building: null, catchingUp: true });
    let committed = await admin(four, origin, "POST", `/syncs/${id}/commit`);
    for (let i = 0; i < 10 && committed.json["done"] !== true; i++) committed = await admin(four, origin, "POST", `/syncs/${id}/commit`);
    expect(committed.json).toMatchObject({ state: "committed", done: true, received: 120, deleted: 30 });
    for (let i = 0; i < 20 && step.state !== "flipped"; i++) step = await rebalanceStep(site, origin, { maxRows: 1_000 });
    expect(step.state).toBe("flipped");

    // After the flip the section is what the commit answered: the 120 it received, the re-sent one as sent.
    await regenerateAll(databaseServices(four));
    const blogLocs = new Set(validRecords(four, kept).map((r) => r.loc));
    const served = (await crawl(four, origin)).filter((loc) => loc.includes("/blog/"));
    expect(served.length).toBe(120);
    expect(new Set(served)).toEqual(blogLocs);
    expect((await lastmods(four, origin, [changedLoc])).get(changedLoc)).toBe("2026-11-24");

    // The sync started during the move spans the old partitions only: after the flip it is refused, nothing deleted.
    const otherId = other.json["id"] as string;
    const batch = await admin(four, origin, "PUT", `/syncs/${otherId}/urls`, demoSection(origin, "products", 10));
    expect(batch.status).toBe(409);
    expect(String(batch.json["message"] ?? batch.json["error"])).toMatch(/flipped|start a new sync/);
    const refused = await admin(four, origin, "POST", `/syncs/${otherId}/commit`, { maxDelete: 1 });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.json)).toMatch(/nothing was deleted: start a new sync/);
    expect((await crawl(four, origin)).filter((loc) => loc.includes("/products/")).length).toBe(60);
  });
});
