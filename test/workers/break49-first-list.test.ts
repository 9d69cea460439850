/**
 * Attack on issue 49, Deliver 4 ("database identity from the first use, single-database sites
 * included: a site that lived in one database and is relisted with it not first, or not at all, is
 * refused like a reordered list ... run time ... with nothing written").
 *
 * The run-time check (src/partitions/database-list.ts) is built only for lists of two or more
 * (src/services.ts: `names.length > 1`), and for a site with nothing recorded it looks for the
 * site's former home only in DB (`home`). So a site relisted onto a single other database, or one
 * that lived in a listed database other than DB and is relisted without it, is accepted: its records
 * are no longer served and its locs are written a second time into the new database.
 *
 * And `npm start` (scripts/local-db.ts `seedIfEmpty`): it looks for the site's records only in the
 * listed bindings (`hasRecords`), so for a site that lived in DB relisted as `DB_2,DB_3` it seeds
 * the demo into DB_2 and DB_3 with `wrangler d1 execute` (`writeD1`) before any check runs, and only
 * then is refused (the manifest build reads the layout). Nothing-written is broken there already;
 * and from then on the first listed database holds rows of the site, so `checkFirstRecord`
 * (src/partitions/identity.ts: "the first listed holding it is a site grown from it") accepts
 * the list at the next start and at run time, though DB, the site's home, still holds its records.
 * The fourth case is that state (the seeded rows written into PART_B as writeD1 writes them).
 *
 * Each case is a site with records in one database, relisted without that database; a write under
 * the new list must be refused (503 database_list naming SITE_DATABASES) and write nothing. The
 * controls are the same site relisted with its database first (accepted) and second (refused).
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { countingEnv } from "./support/counting-env.ts";
import { call, freshOrigin } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };
const NAMES = ["DB", "PART_B", "PART_C", "PART_D"] as const;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, databases: string | null): Env =>
  ({ ...baseEnv, SITES: origin, SITE_DATABASES: databases === null ? "" : `${origin}=${databases}`, INDEXNOW_ENDPOINT: "", PING_URLS: "" }) as Env;

async function put(env: Env, origin: string, paths: readonly string[]) {
  const res = await call(env, `${origin}/sitemap-admin/urls`, {
    method: "PUT",
    headers: AUTH,
    body: JSON.stringify(paths.map((p) => ({ loc: origin + p }))),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Every row of the site in each bound database (loc and deleted flag). */
async function rowsOf(origin: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const name of NAMES) {
    const { results } = await baseEnv[name]
      .prepare("SELECT loc, deleted FROM urls WHERE origin = ?1 ORDER BY loc")
      .bind(origin)
      .all<{ loc: string; deleted: number }>();
    out[name] = results.map((r) => `${r.loc} ${r.deleted}`);
  }
  return out;
}

/** A site whose records live in `home` (null: unlisted, so DB), relisted as `relisted`: the write's status and what it wrote. */
async function relist(home: string | null, relisted: string, seededInto: "PART_B" | null = null) {
  const origin = freshOrigin("b49-list");
  expect((await put(envOf(origin, home), origin, ["/a", "/b", "/c"])).status).toBe(200);
  if (seededInto) {
    // What a refused `npm start` left: its demo seed, inserted straight into the listed database (scripts/local-db.ts writeD1).
    await baseEnv[seededInto]
      .prepare("INSERT INTO urls (origin, section, loc, size, updated_at) VALUES (?1, 'pages', ?2, 100, ?3), (?1, 'pages', ?4, 100, ?3)")
      .bind(origin, `${origin}/demo/1`, Date.now(), `${origin}/demo/2`)
      .run();
  }
  const before = await rowsOf(origin);
  const write = await put(envOf(origin, relisted), origin, ["/a", "/new"]);
  return { write, before, after: await rowsOf(origin) };
}

function expectRefused(r: Awaited<ReturnType<typeof relist>>) {
  expect({ status: r.write.status, error: r.write.json["error"] }, JSON.stringify(r.write.json)).toEqual({ status: 503, error: "database_list" });
  expect(String(r.write.json["message"])).toContain("SITE_DATABASES");
  expect(r.after).toEqual(r.before);
}

describe("a one-database site relisted without its database (issue 49 Deliver 4, broken)", () => {
  it("lived in DB (unlisted), relisted onto PART_B alone: refused, nothing written", async () => {
    // Observed on main: 200, "/a" written a second time (into PART_B); DB's three records no longer served.
    expectRefused(await relist(null, "PART_B"));
  });

  it("lived in PART_B (listed alone), relisted onto PART_C alone: refused, nothing written", async () => {
    expectRefused(await relist("PART_B", "PART_C"));
  });

  it("lived in PART_B (listed alone), relisted as PART_C,PART_D: refused, nothing written", async () => {
    // The issue's own defect 5 ("relisted as PART_B,PART_C: every URL 404, status ok"), with the home not DB.
    expectRefused(await relist("PART_B", "PART_C,PART_D"));
  });

  it("lived in DB, with rows a refused npm start seeded into PART_B, relisted as PART_B,PART_C: refused, nothing written", async () => {
    // Observed on main: 200; "/a" written a second time into PART_B, DB's records no longer served.
    expectRefused(await relist(null, "PART_B,PART_C", "PART_B"));
  });
});

describe("controls: the same site relisted with its database", () => {
  it("lived in PART_B, relisted as PART_B,PART_C (its database first): accepted", async () => {
    const r = await relist("PART_B", "PART_B,PART_C");
    expect(r.write.status, JSON.stringify(r.write.json)).toBe(200);
  });

  it("lived in PART_B, relisted as PART_C,PART_B (its database second): refused, nothing written", async () => {
    expectRefused(await relist("PART_B", "PART_C,PART_B"));
  });
});

describe("a site listed with one database: the check's record and cost", () => {
  it("its first write records its database; later writes in the isolate make no query on the identity tables", async () => {
    const origin = freshOrigin("b49-list-cost");
    // Listed as DB alone: countingEnv counts DB's statements.
    const env = envOf(origin, "DB");
    expect((await put(env, origin, ["/a"])).status).toBe(200);
    const id = (await baseEnv.DB.prepare("SELECT id FROM database_identity").first<{ id: string }>())!.id;
    const { results } = await baseEnv.DB.prepare("SELECT position, database_id, binding FROM partition_databases WHERE origin = ?1").bind(origin).all();
    expect(results).toEqual([{ position: 0, database_id: id, binding: "DB" }]);
    const counts = { d1: 0, kv: 0 };
    // Any statement on the identity tables fails: the write goes through only if none is made.
    const counted = countingEnv(env, counts, /database_identity|partition_databases/);
    expect((await put(counted, origin, ["/b"])).status).toBe(200);
    expect(counts.d1).toBeGreaterThan(0);
  });
});
