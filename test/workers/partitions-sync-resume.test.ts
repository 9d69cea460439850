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
import { beforeAll, describe, expect, it } from "vitest";
import { partitionOf } from "../../src/partitions/home.ts";
import { PartitionedSync } from "../../src/partitions/sync.ts";
import { servicesFor } from "../../src/services.ts";
import type { RecordStore } from "../../src/store/port.ts";
import { call, freshOrigin } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const DATABASES = ["DB", "PART_B", "PART_C"] as const;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
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
    // The invocation dies as partition 2's part is moved on (after partitions 0 and 1 were).
    let failures = 1;
    const dying: RecordStore[] = stores.map((store, p) =>
      p !== 2
        ? store
        : {
            ...store,
            sync: {
              ...store.sync!,
              get: (syncId) => store.sync!.get(syncId),
              commit: async (syncId, options, now) => {
                if (options.siteGuard === "passed" && failures-- > 0) throw new Error("D1_ERROR: the invocation was killed");
                return store.sync!.commit(syncId, options, now);
              },
            },
          },
    );
    await expect(new PartitionedSync(dying, layoutOf).commit(id, { maxChunks: 10 })).rejects.toThrow("killed");
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
