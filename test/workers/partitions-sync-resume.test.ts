/**
 * A partitioned site's full sync committed over several calls (src/partitions/sync.ts): the site's
 * guard is checked once, by probes that move no part on, and a commit stopped after moving some
 * parts on is finished by the next call. Before, a part holding nothing in scope went committing on
 * the probe and recorded the probe's share (−1) as its guard: the next call checked the site at −1
 * ("would delete 0 of the 1 records … allows -100%", a mirror's first pass during a move), and a
 * refused commit could no longer be aborted, leaving a part committing that held the move's flip.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Fetcher } from "../../src/mirror/fetch.ts";
import { runMirror } from "../../src/mirror/run.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { PartitionedSync } from "../../src/partitions/sync.ts";
import { servicesFor } from "../../src/services.ts";
import type { RecordStore, RecordSync } from "../../src/store/port.ts";
import { call, freshOrigin } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const DATABASES = ["DB", "PART_B", "PART_C"] as const;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

function newSite(label: string): { origin: string; env: Env } {
  const origin = freshOrigin(label);
  const env = { ...baseEnv, SITES: origin, SITE_DATABASES: `${origin}=${DATABASES.join(",")}`, INDEXNOW_ENDPOINT: "", PING_URLS: "" } as Env;
  return { origin, env };
}

async function admin(env: Env, origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await call(env, `${origin}/sitemap-admin${path}`, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** A loc of the site whose home among the three partitions is `home`. */
function locAt(origin: string, home: number, tag: string): string {
  for (let i = 0; ; i++) {
    const loc = `${origin}/${tag}-${i}`;
    if (partitionOf(loc, DATABASES.length) === home) return loc;
  }
}

/** Each database's state of the sync's part, in partition order. */
async function partStates(id: string): Promise<string[]> {
  const parts = id.split(".");
  return Promise.all(
    DATABASES.map(
      async (name, p) => (await baseEnv[name].prepare("SELECT state FROM syncs WHERE id = ?1").bind(parts[p]).first<{ state: string }>())!.state,
    ),
  );
}

/**
 * A site whose records live in partitions 1 and 2 only (partition 0 holds nothing in scope), and an
 * open sync (guard 0.5) that received partition 1's record: committing deletes partition 2's, 1 of 2.
 */
async function syncOverTwoOfThree(label: string): Promise<{ origin: string; env: Env; id: string }> {
  const { origin, env } = newSite(label);
  const kept = { loc: locAt(origin, 1, "kept"), lastmod: "2026-01-02" };
  const gone = { loc: locAt(origin, 2, "gone"), lastmod: "2026-01-02" };
  expect((await admin(env, origin, "PUT", "/urls", [kept, gone])).status).toBe(200);
  const started = await admin(env, origin, "POST", "/syncs", { sites: [origin], maxDelete: 0.5 });
  expect(started.status).toBe(201);
  const id = started.json["id"] as string;
  expect((await admin(env, origin, "PUT", `/syncs/${id}/urls`, [kept])).status).toBe(200);
  return { origin, env, id };
}

/** The stores, partition `dies`'s sync dying (once) as its part is moved on: an invocation killed after the parts before it were. */
function dyingAt(stores: readonly RecordStore[], dies: number): RecordStore[] {
  let failures = 1;
  return stores.map((store, p) => {
    if (p !== dies) return store;
    const inner = store.sync!;
    const sync = new Proxy(inner, {
      get(target, key) {
        if (key === "commit")
          return async (...[syncId, options, now]: Parameters<RecordSync["commit"]>) => {
            if (options.siteGuard === "passed" && failures-- > 0) throw new Error("D1_ERROR: the invocation was killed");
            return target.commit(syncId, options, now);
          };
        const value = Reflect.get(target, key) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { ...store, sync };
  });
}

describe("a partitioned sync committed over several calls", () => {
  it("keeps the site's guard from call to call: a part with nothing in scope takes no probe's share", async () => {
    const { origin, env, id } = await syncOverTwoOfThree("sync-resume");
    const calls: Record<string, unknown>[] = [];
    // No maxDelete given: each call holds the sync's own guard (0.5), as a mirror's commit does.
    for (let i = 0; i < 5; i++) {
      const answer = await admin(env, origin, "POST", `/syncs/${id}/commit`);
      expect(answer.status, JSON.stringify(answer.json)).toBeLessThan(300);
      calls.push(answer.json);
      if (answer.json["done"] === true) break;
    }
    // One part per call: three calls, the guard checked by the first alone.
    expect(calls.length).toBe(3);
    expect(calls.at(-1)).toMatchObject({ state: "committed", done: true, deleted: 1, maxDelete: 0.5 });
    expect(calls.slice(0, -1).map((c) => c["state"])).toEqual(["committing", "committing"]);
    expect(await partStates(id)).toEqual(["committed", "committed", "committed"]);
    expect((await admin(env, origin, "GET", `/urls?loc=${encodeURIComponent(locAt(origin, 2, "gone"))}`)).status).toBe(404);
  });

  it("a refused commit moves no part on: the sync stays open and can be aborted", async () => {
    const { origin, env, id } = await syncOverTwoOfThree("sync-refused");
    const refused = await admin(env, origin, "POST", `/syncs/${id}/commit`, { maxDelete: 0.2 });
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ error: "delete_guard", wouldDelete: 1, inScope: 2, maxDelete: 0.2 });
    expect(await partStates(id)).toEqual(["open", "open", "open"]);
    const aborted = await admin(env, origin, "DELETE", `/syncs/${id}`);
    expect(aborted.status).toBe(200);
    expect(await partStates(id)).toEqual(["aborted", "aborted", "aborted"]);
  });

  it("a commit stopped after moving some parts on is finished by the next call, with no second guard", async () => {
    const { origin, env, id } = await syncOverTwoOfThree("sync-stopped");
    const services = await servicesFor(env, origin);
    const stores = services.partitions!.map((s) => s.store);
    const layoutOf = () => services.layouts!.read();
    await expect(new PartitionedSync(dyingAt(stores, 2), layoutOf).commit(id, { maxChunks: 10 })).rejects.toThrow("killed");
    expect(await partStates(id)).toEqual(["committing", "committing", "open"]);
    // Half moved on is committing as a whole: no batch, no abort, and the retry goes on.
    const sync = new PartitionedSync(stores, layoutOf);
    expect((await sync.get(id))!.state).toBe("committing");
    expect((await admin(env, origin, "DELETE", `/syncs/${id}`)).status).toBe(409);
    // A retry that would be refused by a guard checked again (0 allowed, 1 would go) finishes the commit passed at 0.5.
    let done = false;
    for (let i = 0; i < 5 && !done; i++) done = (await sync.commit(id, { maxDelete: 0, maxChunks: 10 })).done;
    expect(done).toBe(true);
    expect(await sync.get(id)).toMatchObject({ state: "committed", deleted: 1, maxDelete: 0.5 });
    expect(await partStates(id)).toEqual(["committed", "committed", "committed"]);
  });
});

/** Each database's state of the mirror's sync parts (source `mirror:url`), in partition order. */
async function mirrorParts(url: string): Promise<string[][]> {
  return Promise.all(
    DATABASES.map(async (name) =>
      (
        await baseEnv[name].prepare("SELECT state FROM syncs WHERE json_extract(scope, '$.source') = ?1").bind(`mirror:${url}`).all<{ state: string }>()
      ).results.map((r) => r.state),
    ),
  );
}

describe("a mirror's pass over a partitioned site whose move is under way", () => {
  it("commits its first pass, and one killed while moving its parts on is finished by the next run: the move's flip waits, then goes", async () => {
    const origin = freshOrigin("mirror-resume");
    const url = `${origin}/cms/sitemap.xml`;
    const env = (count: number) =>
      ({
        ...baseEnv,
        SITES: origin,
        SITE_DATABASES: `${origin}=${[...DATABASES, "PART_D"].slice(0, count).join(",")}`,
        MIRROR_SITEMAPS: url,
        INDEXNOW_ENDPOINT: "",
        PING_URLS: "",
      }) as Env;
    // The site's own records in its three databases; the mirror's one record homed in partition 1 (partition 0 holds none of it).
    const own = Array.from({ length: 30 }, (_, i) => ({ loc: `${origin}/own/${i}`, lastmod: "2026-02-01" }));
    expect((await admin(env(3), origin, "PUT", "/urls", own)).status).toBe(200);
    const mirrored = locAt(origin, 1, "m");
    const body = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${mirrored}</loc><lastmod>2026-04-01</lastmod></url></urlset>`;
    const fetch: Fetcher = async (input) =>
      input === url ? new Response(body, { headers: { "Content-Type": "application/xml" } }) : new Response("", { status: 404 });
    // A fourth database appended: its move begins.
    const site = servicesFor(env(4), origin);
    expect((await rebalanceStep(site, origin, { maxRows: 10 })).state).toBe("started");
    const deps = { config: site.config, state: site.mirrors!, fetch };
    const budget = () => ({ requests: 100, records: 100 });
    const layoutOf = () => site.layouts!.read();
    const stores = site.partitions!.map((s) => s.store);

    // The pass's job is killed as it moves the sync's last part on: the error is thrown on (and logged), the step retried.
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const dying = new PartitionedSync(dyingAt(stores, 2), layoutOf);
    await expect(runMirror({ ...deps, sync: dying }, url, budget())).rejects.toThrow("killed");
    expect(await mirrorParts(url)).toEqual([["committing"], ["committing"], ["open"]]);
    // Meanwhile the move reaches its flip and waits for that commit.
    let step = await rebalanceStep(site, origin, { maxRows: 10 });
    for (let i = 0; i < 30 && step.state !== "waiting"; i++) step = await rebalanceStep(site, origin, { maxRows: 10 });
    expect(step.state).toBe("waiting");
    expect(step.waitingFor).toContain("a sync's commit");

    // The retry (or the next run) finishes the commit, part after part: no guard refusal, nothing left committing.
    const outcomes: string[] = [];
    for (let i = 0; i < 5 && outcomes.at(-1) !== "synced"; i++) outcomes.push(await runMirror({ ...deps, sync: site.store.sync! }, url, budget()));
    expect(outcomes.at(-1)).toBe("synced");
    expect((await site.mirrors!.load(url))?.error ?? null).toBeNull();
    expect(await mirrorParts(url)).toEqual([["committed"], ["committed"], ["committed"]]);
    expect((await admin(env(4), origin, "GET", `/urls?loc=${encodeURIComponent(mirrored)}`)).status).toBe(200);

    // And the move goes on to its flip.
    for (let i = 0; i < 30 && step.state !== "flipped"; i++) step = await rebalanceStep(site, origin, { maxRows: 10 });
    expect(step.state).toBe("flipped");
  });
});
