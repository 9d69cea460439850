/**
 * A site that lived in one database, then listed over several (issue 49, defect 5): the list is
 * checked from the first use, not only once two databases are recorded. Lists are generated over
 * the bound databases and judged against the reference rule: a site that holds records in DB (its
 * home while unlisted) is served only by a list that names DB first; any list serves a site with
 * no records yet. A refused list answers 503 naming SITE_DATABASES and writes nothing anywhere.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
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

/** Every row of the site in each bound database (loc and deleted flag), in order. */
async function rowsOf(origin: string): Promise<string[][]> {
  const out: string[][] = [];
  for (const name of NAMES) {
    const { results } = await baseEnv[name]
      .prepare("SELECT loc, deleted FROM urls WHERE origin = ?1 ORDER BY loc")
      .bind(origin)
      .all<{ loc: string; deleted: number }>();
    out.push(results.map((r) => `${r.loc} ${r.deleted}`));
  }
  return out;
}

/** A list of two to four distinct bindings, in any order. */
const lists = fc
  .shuffledSubarray([...NAMES], { minLength: 2, maxLength: 4 })
  .chain((names) => fc.shuffledSubarray(names, { minLength: names.length, maxLength: names.length }));

describe("a one-database site relisted over several databases", () => {
  it("is refused, nothing written, unless its database stays first (generated lists, reference rule)", async () => {
    await fc.assert(
      fc.asyncProperty(lists, fc.boolean(), fc.boolean(), async (list, hasRecords, listedAlone) => {
        const origin = freshOrigin("first-list");
        // Its life in DB: unlisted, or listed as DB alone.
        if (hasRecords) expect((await put(envOf(origin, listedAlone ? "DB" : null), origin, ["/a", "/b", "/c"])).status).toBe(200);
        const before = await rowsOf(origin);
        const relisted = envOf(origin, list.join(","));
        const accepted = !hasRecords || list[0] === "DB";
        const write = await put(relisted, origin, ["/a", "/new"]);
        if (accepted) {
          expect(write.status, JSON.stringify(write.json)).toBe(200);
          return;
        }
        expect(write.status).toBe(503);
        expect(write.json["error"]).toBe("database_list");
        const message = write.json["message"] as string;
        expect(message).toContain(`SITE_DATABASES for ${origin} lists ${list[0]} first`);
        expect(message).toContain(list.includes("DB") ? "DB's" : "not listed");
        expect(await rowsOf(origin)).toEqual(before);
        // Status names it; the sitemap is not served from the wrong database.
        const status = await call(relisted, `${origin}/sitemap-admin/status`, { headers: AUTH });
        const body = (await status.json()) as { partitions?: { databases?: { ok: boolean; problem: string | null } } };
        expect(body.partitions?.databases?.ok).toBe(false);
        expect(body.partitions?.databases?.problem).toContain("SITE_DATABASES");
      }),
      {
        numRuns: 12,
        seed: 4905,
        // The cases: DB relisted second, and left out (from unlisted and from listed alone).
        examples: [
          [["PART_B", "DB"], true, false],
          [["PART_B", "PART_C"], true, true],
          [["PART_B", "DB"], false, false],
        ],
      },
    );
  });
});
