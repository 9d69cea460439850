/**
 * The database list is checked (docs/capacity.md "The database list is checked"): each partition's
 * database is recorded by identity in every database of the site, and a SITE_DATABASES list that
 * reorders, repoints, replaces or drops one stops the site's writes, syncs and move steps with an
 * error naming SITE_DATABASES: no row is written anywhere, status and the dashboard name the
 * problem. A list with a database appended passes, and the record grows when a move starts onto it.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { servicesFor } from "../../src/services.ts";
import { DatabaseListError } from "../../src/store/errors.ts";
import { countingEnv } from "./support/counting-env.ts";
import { call, freshOrigin } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const JSON_TYPE = { "Content-Type": "application/json" };
const NAMES = ["DB", "PART_B", "PART_C", "PART_D"] as const;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const envOf = (origin: string, databases: string, bindings: Record<string, unknown> = {}): Env =>
  ({
    ...baseEnv,
    SITES: origin,
    SITE_DATABASES: `${origin}=${databases}`,
    MAX_URLS_PER_SHARD: "40",
    INDEXNOW_ENDPOINT: "",
    PING_URLS: "",
    ...bindings,
  }) as Env;

async function admin(env: Env, origin: string, method: string, path: string, body?: unknown) {
  const res = await call(env, `${origin}/sitemap-admin${path}`, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : JSON_TYPE) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, retryAfter: res.headers.get("Retry-After"), json: (await res.json()) as Record<string, unknown> };
}

/** Every row of the site (live and deleted) in each database, as loc → lastmod; and how many. */
async function rowsOf(origin: string): Promise<{ count: number[]; rows: Map<string, string | null>[] }> {
  const rows: Map<string, string | null>[] = [];
  for (const name of NAMES) {
    const { results } = await baseEnv[name]
      .prepare("SELECT loc, lastmod, deleted FROM urls WHERE origin = ?1")
      .bind(origin)
      .all<{ loc: string; lastmod: string | null; deleted: number }>();
    rows.push(new Map(results.map((r) => [r.loc, `${r.lastmod} ${r.deleted}`])));
  }
  return { count: rows.map((r) => r.size), rows };
}

async function recordOf(db: D1Database, origin: string) {
  const { results } = await db
    .prepare("SELECT position, database_id, binding FROM partition_databases WHERE origin = ?1 ORDER BY position")
    .bind(origin)
    .all<{ position: number; database_id: string; binding: string }>();
  return results;
}

const identityOf = async (db: D1Database): Promise<string> => (await db.prepare("SELECT id FROM database_identity").first<{ id: string }>())!.id;

/** A site over three databases with 60 records, written through the Worker (which records the databases). */
async function seeded(label: string) {
  const origin = freshOrigin(label);
  const three = envOf(origin, "DB,PART_B,PART_C");
  const inputs = demoSection(origin, "products", 60) as { loc: string }[];
  expect((await admin(three, origin, "PUT", "/urls", inputs)).status).toBe(200);
  const locs = inputs.map((r) => r.loc);
  return { origin, three, locs };
}

/** A write, a delete, a sync and a read-back under `env`: each refused with 503 naming SITE_DATABASES; what the write's answer says. */
async function expectRefused(env: Env, origin: string): Promise<string> {
  const before = await rowsOf(origin);
  // A loc the second database holds, and one the third holds, as stored.
  const [resent, deleted] = [[...before.rows[1]!.keys()][0]!, [...before.rows[2]!.keys()][0]!];
  const put = await admin(env, origin, "PUT", "/urls", [
    { loc: resent, lastmod: "2026-11-20" },
    { loc: `${origin}/new-page`, lastmod: "2026-11-20" },
  ]);
  expect(put.status).toBe(503);
  expect(put.retryAfter).toBe("300");
  expect(put.json["error"]).toBe("database_list");
  const message = put.json["message"] as string;
  expect(message).toMatch(new RegExp(`^SITE_DATABASES for ${origin.replaceAll(".", "\\.")} `));
  expect(message).toMatch(/; nothing was written$/);
  const del = await admin(env, origin, "DELETE", "/urls", [deleted]);
  expect([del.status, del.json["error"]]).toEqual([503, "database_list"]);
  const sync = await admin(env, origin, "POST", "/syncs", { sites: [origin] });
  expect([sync.status, sync.json["error"]]).toEqual([503, "database_list"]);
  const read = await admin(env, origin, "GET", `/urls?loc=${encodeURIComponent(resent)}`);
  expect([read.status, read.json["error"]]).toEqual([503, "database_list"]);
  // Not a row written, in any database: no duplicate of the re-sent loc, no new loc, no tombstone.
  expect(await rowsOf(origin)).toEqual(before);
  expect(before.rows.filter((rows) => rows.has(resent))).toHaveLength(1);
  return message;
}

/** `partitions.databases` of the site's status (which must answer 200). */
async function databasesStatus(env: Env, origin: string) {
  const status = await admin(env, origin, "GET", "/status");
  expect(status.status).toBe(200);
  return (status.json["partitions"] as { databases: { ok: boolean; problem: string | null; recorded: number; listed: unknown[] } }).databases;
}

describe("the database list is checked", () => {
  it("records each partition's database by identity, in every database of the site, at the site's first use", async () => {
    const { origin, three } = await seeded("dbs-record");
    const ids = [await identityOf(baseEnv.DB), await identityOf(baseEnv.PART_B), await identityOf(baseEnv.PART_C)];
    expect(new Set(ids).size).toBe(3);
    const expected = ["DB", "PART_B", "PART_C"].map((binding, position) => ({ position, database_id: ids[position], binding }));
    for (const db of [baseEnv.DB, baseEnv.PART_B, baseEnv.PART_C]) expect(await recordOf(db, origin)).toEqual(expected);
    expect(await recordOf(baseEnv.PART_D, origin)).toEqual([]);
    expect(await databasesStatus(three, origin)).toEqual({
      ok: true,
      problem: null,
      recorded: 3,
      listed: ["DB", "PART_B", "PART_C"].map((binding, i) => ({ binding, id: ids[i] })),
    });
  });

  it("a request pays no query for the check once its isolate has checked", async () => {
    const { origin, three, locs } = await seeded("dbs-cost");
    const counts = { d1: 0, kv: 0 };
    // Any statement on the identity tables fails: the write goes through only if none is made.
    const env = countingEnv(three, counts, /database_identity|partition_databases/);
    const put = await admin(env, origin, "PUT", "/urls", [{ loc: locs.find((loc) => partitionOf(loc, 3) === 0), lastmod: "2026-11-21" }]);
    expect(put.status).toBe(200);
    expect(counts.d1).toBeGreaterThan(0);
  });

  it("a reordered list: writes, deletes, syncs and reads refused naming SITE_DATABASES, no row written; status and the dashboard name it", async () => {
    const { origin, three, locs } = await seeded("dbs-reorder");
    const swapped = envOf(origin, "DB,PART_C,PART_B");
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const message = await expectRefused(swapped, origin);
    expect(message).toContain(
      "lists PART_C second, but the database recorded second is PART_B's (" +
        (await identityOf(baseEnv.PART_B)) +
        "), listed third: the list was reordered; restore the order DB,PART_B,PART_C (append new databases at the end)",
    );
    const databases = await databasesStatus(swapped, origin);
    expect(databases).toMatchObject({ ok: false, recorded: 3 });
    expect(databases.problem).toContain("SITE_DATABASES for");
    expect(databases.problem).toContain("the list was reordered");
    const page = await (await call(swapped, `${origin}/sitemap-admin/`, { headers: AUTH })).text();
    expect(page).toContain('data-figure="database-list"');
    expect(page).toContain("the list was reordered; restore the order DB,PART_B,PART_C");
    // The public gets a 503 that names nothing of the deployment; the log names the list.
    const index = await call(swapped, `${origin}/sitemap.xml`);
    expect(index.status).toBe(503);
    expect(index.headers.get("Retry-After")).toBe("300");
    expect(await index.text()).not.toContain("SITE_DATABASES");
    expect(log.mock.calls.flat().join(" ")).toContain("SITE_DATABASES");

    // The first database swapped for another: every database holds the record, so it is caught too.
    const firstSwapped = await expectRefused(envOf(origin, "PART_B,DB,PART_C"), origin);
    expect(firstSwapped).toContain("lists PART_B first, but the database recorded first is DB's");
    // The recorded order works as before.
    expect((await admin(three, origin, "PUT", "/urls", [{ loc: locs[0], lastmod: "2026-11-22" }])).status).toBe(200);
  });

  it("a dropped or replaced database: writes and move steps refused, status names it", async () => {
    const { origin } = await seeded("dbs-drop");
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const dropped = envOf(origin, "DB,PART_B");
    expect(await expectRefused(dropped, origin)).toContain(
      `no longer lists the database recorded as the site's third partition, PART_C's (${await identityOf(baseEnv.PART_C)}): its records would no longer be served`,
    );
    expect((await databasesStatus(dropped, origin)).problem).toContain("Removing a database from a site is not supported");
    await expect(rebalanceStep(servicesFor(dropped, origin), origin)).rejects.toThrow(DatabaseListError);

    const replaced = envOf(origin, "DB,PART_B,PART_D");
    expect(await expectRefused(replaced, origin)).toContain("lists PART_D third, a database not recorded for the site");
    await expect(rebalanceStep(servicesFor(replaced, origin), origin)).rejects.toThrow(/SITE_DATABASES/);
  });

  it("a binding pointed at another database is refused once the isolate checks again (a new deployment checks at once)", async () => {
    const { origin } = await seeded("dbs-repoint");
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    // The same names, PART_B now bound to another database: within this isolate, after its check's minute.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 61_000);
    const repointed = envOf(origin, "DB,PART_B,PART_C", { PART_B: baseEnv.PART_D });
    expect(await expectRefused(repointed, origin)).toContain("lists PART_B, but PART_B is now another database");
  });

  it("a sync opened before the list changed deletes nothing under the new list", async () => {
    const { origin, three, locs } = await seeded("dbs-sync");
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const started = await admin(three, origin, "POST", "/syncs", { sites: [origin], maxDelete: 1 });
    expect(started.status).toBe(201);
    const id = started.json["id"] as string;
    expect(
      (
        await admin(
          three,
          origin,
          "PUT",
          `/syncs/${id}/urls`,
          locs.slice(0, 30).map((loc) => ({ loc })),
        )
      ).status,
    ).toBe(200);
    const before = await rowsOf(origin);
    const commit = await admin(envOf(origin, "DB,PART_C,PART_B"), origin, "POST", `/syncs/${id}/commit`);
    expect([commit.status, commit.json["error"]]).toEqual([503, "database_list"]);
    expect(await rowsOf(origin)).toEqual(before);
    const aborted = await admin(envOf(origin, "DB,PART_C,PART_B"), origin, "DELETE", `/syncs/${id}`);
    expect(aborted.status).toBe(503);
    // Under the recorded list the sync is still open and commits.
    expect((await admin(three, origin, "GET", `/syncs/${id}`)).json["state"]).toBe("open");
  });

  it("an appended database passes, is recorded when a move starts onto it, and the move reaches its flip", async () => {
    const { origin, locs } = await seeded("dbs-append");
    const four = envOf(origin, "DB,PART_B,PART_C,PART_D");
    const staying = locs.find((loc) => partitionOf(loc, 4) !== 3)!;
    expect((await admin(four, origin, "PUT", "/urls", [{ loc: staying, lastmod: "2026-11-23" }])).status).toBe(200);
    expect(await databasesStatus(four, origin)).toMatchObject({ ok: true, problem: null, recorded: 3 });
    expect(await recordOf(baseEnv.PART_D, origin)).toEqual([]);

    const site = servicesFor(four, origin);
    expect(await rebalanceStep(site, origin)).toMatchObject({ state: "started", target: 4 });
    let step = await rebalanceStep(site, origin);
    // The step after the start read the layout first: the appended database is recorded, in every database, before any copy.
    const record = await recordOf(baseEnv.PART_D, origin);
    expect(record.map((r) => r.binding)).toEqual(["DB", "PART_B", "PART_C", "PART_D"]);
    expect(record[3]!.database_id).toBe(await identityOf(baseEnv.PART_D));
    expect(await recordOf(baseEnv.DB, origin)).toEqual(record);
    for (let i = 0; step.state !== "flipped"; i++) {
      expect(i).toBeLessThan(20);
      step = await rebalanceStep(site, origin);
    }
    expect(await databasesStatus(four, origin)).toMatchObject({ ok: true, recorded: 4 });
    const moved = locs.find((loc) => partitionOf(loc, 4) === 3)!;
    expect((await admin(four, origin, "PUT", "/urls", [{ loc: moved, lastmod: "2026-11-24" }])).json).toMatchObject({ updated: 1 });

    // From now on the fourth is a partition like the others: dropping or moving it is refused.
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const put = await admin(envOf(origin, "DB,PART_B,PART_D,PART_C"), origin, "PUT", "/urls", [{ loc: moved, lastmod: "2026-11-25" }]);
    expect([put.status, put.json["error"]]).toEqual([503, "database_list"]);
    expect((await admin(envOf(origin, "DB,PART_B,PART_C"), origin, "PUT", "/urls", [{ loc: staying }])).status).toBe(503);
  });
});
