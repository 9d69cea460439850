/**
 * Issue 50 (Deliver 5–6): nothing of a site is left in a database it left. Generated sequences of
 * what a tenant and the platform do — register on a database, write records, open a sync, stage
 * batches, commit or abort it, sign in, change DATABASE — each DATABASE change checked against a
 * model (refused while the database it leaves holds the site's records or a sync under way; once
 * accepted, that database holds nothing of the site), then the site is deleted and the purge job
 * runs through the real consumer: no row in any bound database names the origin, and a site
 * registered again at the same origin sees nothing of the old one. Then the cost: the purge and the
 * registry sweep at 10 bound databases, every invocation within the meter's limits.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { REGISTRY_TARGET } from "../../src/jobs/messages.ts";
import { boundDatabases } from "../../src/services.ts";
import { siteEnv } from "./notify-support.ts";
import { bearer, freshClient, signInForm } from "./support/admin.ts";
import { deliver, drain, withJobs } from "./support/jobs.ts";
import { siteRowsEverywhere, siteRowsIn } from "./support/site-rows.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

/** The databases a site is placed on (every bound one is checked). */
const PLACES = ["DB", "SITE_B_DB", "PART_B"] as const;
type Place = (typeof PLACES)[number];

type Step =
  | { k: "put"; n: number }
  | { k: "open" }
  | { k: "stage"; n: number }
  | { k: "commit" }
  | { k: "abort" }
  | { k: "signIn" }
  | { k: "move"; to: Place };

const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    fc.record({ k: fc.constant("put" as const), n: fc.integer({ min: 1, max: 3 }) }),
    fc.constant({ k: "open" as const }),
    fc.record({ k: fc.constant("stage" as const), n: fc.integer({ min: 1, max: 3 }) }),
    fc.constant({ k: "commit" as const }),
    fc.constant({ k: "abort" as const }),
    fc.constant({ k: "signIn" as const }),
    // Moves weigh most: the sequences are about leaving databases.
    { arbitrary: fc.record({ k: fc.constant("move" as const), to: fc.constantFrom(...PLACES) }), weight: 3 },
  ),
  { maxLength: 10 },
);

const json = (method: string, body: unknown, headers: Record<string, string>): RequestInit => ({
  method,
  headers: { ...headers, "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

let labels = 0;

describe("a site that left a database", () => {
  it("leaves nothing there, nor anywhere once deleted and purged; a site registered again at its origin sees nothing of it", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const platform = freshOrigin("platform");
    const { env: e, queue } = withJobs(siteEnv(platform));
    const register = async (origin: string, place: Place): Promise<string> => {
      const res = await call(e, `${platform}/sitemap-admin/sites`, json("POST", { origin, settings: { DATABASE: place } }, bearer));
      expect(res.status).toBe(201);
      return ((await res.json()) as { token: string }).token;
    };

    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PLACES), steps, async (first, program) => {
        const origin = `https://left-${++labels}-${Math.random().toString(36).slice(2, 8)}.test`;
        const host = new URL(origin).host;
        const asSite = { Authorization: `Bearer ${await register(origin, first)}` };
        // The model: where the site is, where it wrote records, its open sync (and whether it received a batch).
        let at: Place = first;
        const recordsIn = new Set<Place>();
        let open: { id: string; staged: boolean } | null = null;
        const locs: string[] = [];
        const syncIds: string[] = [];
        const fresh = (n: number) => Array.from({ length: n }, () => `${origin}/p/${locs.push(`${origin}/p/${locs.length}`) - 1}`);

        for (const step of program) {
          if (step.k === "put") {
            expect(
              (
                await call(
                  e,
                  `${origin}/sitemap-admin/urls`,
                  json(
                    "PUT",
                    fresh(step.n).map((loc) => ({ loc })),
                    asSite,
                  ),
                )
              ).status,
            ).toBe(200);
            recordsIn.add(at);
          } else if (step.k === "open" && open === null) {
            const res = await call(e, `${origin}/sitemap-admin/syncs`, json("POST", { sites: [origin], maxDelete: 1 }, asSite));
            expect(res.status).toBe(201);
            open = { id: ((await res.json()) as { id: string }).id, staged: false };
            syncIds.push(open.id);
          } else if (step.k === "stage" && open !== null) {
            const batch = fresh(step.n).map((loc) => ({ loc }));
            expect((await call(e, `${origin}/sitemap-admin/syncs/${open.id}/urls`, json("PUT", batch, asSite))).status).toBe(200);
            open.staged = true;
            recordsIn.add(at);
          } else if (step.k === "commit" && open !== null) {
            const res = await call(e, `${origin}/sitemap-admin/syncs/${open.id}/commit`, json("POST", { maxDelete: 1 }, asSite));
            // A sync that received nothing deletes nothing (422 empty_sync): it is aborted instead.
            if (open.staged) expect(res.status).toBe(200);
            else {
              expect(res.status).toBe(422);
              expect((await call(e, `${origin}/sitemap-admin/syncs/${open.id}`, { method: "DELETE", headers: asSite })).status).toBe(200);
            }
            open = null;
          } else if (step.k === "abort" && open !== null) {
            expect((await call(e, `${origin}/sitemap-admin/syncs/${open.id}`, { method: "DELETE", headers: asSite })).status).toBe(200);
            open = null;
          } else if (step.k === "signIn") {
            const res = await call(e, `${origin}/sitemap-admin/sign-in`, signInForm(asSite.Authorization.slice(7), freshClient(), { Origin: origin }));
            expect(res.status).toBe(303);
          } else if (step.k === "move") {
            const res = await call(e, `${platform}/sitemap-admin/sites/${host}`, json("PATCH", { settings: { DATABASE: step.to } }, bearer));
            const refused = step.to !== at && (recordsIn.has(at) || open !== null);
            expect(res.status, `${at} → ${step.to}`).toBe(refused ? 409 : 200);
            if (refused) expect(((await res.json()) as { error: string }).error).toBe("database_in_use");
            else if (step.to !== at) {
              // The database it left holds nothing of it (its registry row lives in DB whatever its DATABASE).
              const { [`${at}.registry_sites`]: _registry, ...left } = await siteRowsIn(e, at, origin, syncIds);
              expect(left, `left behind in ${at}`).toEqual({});
              at = step.to;
            }
          }
        }

        // Deleted, settled (an hour ago), purged by the job through the real consumer.
        expect((await call(e, `${platform}/sitemap-admin/sites/${host}`, { method: "DELETE", headers: bearer })).status).toBe(202);
        await e.DB.prepare("UPDATE registry_sites SET deleted_at = deleted_at - 3600000 WHERE origin = ?1").bind(origin).run();
        await deliver(e, { kind: "site-purge", origin: REGISTRY_TARGET, trigger: "test", step: 0 });
        await drain(e, queue, { maxWaitMs: 0 });
        expect(await siteRowsEverywhere(e, origin, syncIds)).toEqual({});
        expect((await e.SNAPSHOTS.list({ prefix: `s1/${origin}/` })).keys).toEqual([]);

        // Registered again, on any database: nothing of the old site, by the API or in any table but its new registry row.
        const again = { Authorization: `Bearer ${await register(origin, PLACES[labels % PLACES.length]!)}` };
        for (const loc of locs) {
          expect((await call(e, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: again })).status, loc).toBe(404);
        }
        for (const id of syncIds) expect((await call(e, `${origin}/sitemap-admin/syncs/${id}`, { headers: again })).status, id).toBe(404);
        expect(await siteRowsEverywhere(e, origin, syncIds)).toEqual({ "DB.registry_sites": 1 });
      }),
      { numRuns: 8 },
    );
  });
});

describe("at 10 bound databases", () => {
  /** The second name of each of the test's five databases: ten bindings, each wrapped by the meter as its own. */
  const ALIASES: Record<string, string> = { DB_6: "DB", DB_7: "SITE_B_DB", DB_8: "PART_B", DB_9: "PART_C", DB_10: "PART_D" };
  const tenDatabases = (e: Env): Env => {
    const raw = e as unknown as Record<string, unknown>;
    return { ...e, ...Object.fromEntries(Object.entries(ALIASES).map(([alias, name]) => [alias, raw[name]])) } as Env;
  };

  it("the purge and the registry sweep's housekeeping walk them all, each invocation within the meter's limits", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const platform = freshOrigin("platform");
    const { env: e, queue } = withJobs(tenDatabases(siteEnv(platform)));
    expect(boundDatabases(e)).toHaveLength(10);
    const origin = `https://ten-${Math.random().toString(36).slice(2, 8)}.test`;
    const res = await call(e, `${platform}/sitemap-admin/sites`, json("POST", { origin, settings: { DATABASE: "PART_C" } }, bearer));
    expect(res.status).toBe(201);
    const asSite = { Authorization: `Bearer ${((await res.json()) as { token: string }).token}` };
    const locs = Array.from({ length: 50 }, (_, i) => ({ loc: `${origin}/r/${i}` }));
    expect((await call(e, `${origin}/sitemap-admin/urls`, json("PUT", locs, asSite))).status).toBe(200);
    // What sites left in the others (as a DATABASE change raced by an isolate on the old settings would): records, jobs, crawler rows.
    for (const name of ["DB", "SITE_B_DB", "PART_B", "PART_D"]) {
      const db = (e as unknown as Record<string, D1Database>)[name]!;
      await db.batch([
        db.prepare("INSERT INTO urls (origin, section, loc, size, updated_at) VALUES (?1, 'pages', ?1 || '/' || ?2, 100, 1)").bind(origin, name),
        db.prepare("INSERT OR IGNORE INTO jobs (kind, origin, due_at) VALUES ('notify', ?1, 1)").bind(origin),
        db.prepare("INSERT INTO crawler_counts (origin, crawler, verified, slot, period, requests) VALUES (?1, 'googlebot', 1, 'h1', 1, 1)").bind(origin),
      ]);
    }

    // The registry sweep's first step plans one housekeeping sweep per binding, each in its own invocation; a
    // database's two names share its jobs table, so the second finds the first's chain live and starts none.
    const swept = await deliver(e, { kind: "registry-sweep", origin: REGISTRY_TARGET, trigger: "test", step: 0 });
    expect(swept.retryMessages).toEqual([]);
    const sweeps = (await drain(e, queue, { maxWaitMs: 0 })).filter((d) => d.job.kind === "sync-sweep");
    expect(sweeps.map((d) => d.result)).not.toContain("retried");
    const database = (binding: string | undefined): string => ALIASES[binding!] ?? binding!;
    expect(sweeps.map((d) => database(d.job.database)).sort()).toEqual(["DB", "PART_B", "PART_C", "PART_D", "SITE_B_DB"]);

    expect((await call(e, `${platform}/sitemap-admin/sites/${new URL(origin).host}`, { method: "DELETE", headers: bearer })).status).toBe(202);
    await e.DB.prepare("UPDATE registry_sites SET deleted_at = deleted_at - 3600000 WHERE origin = ?1").bind(origin).run();
    await deliver(e, { kind: "site-purge", origin: REGISTRY_TARGET, trigger: "test", step: 0 });
    const purged = await drain(e, queue, { maxWaitMs: 0 });
    // Every step acknowledged: none refused by the meter (1,000 service calls an invocation) and retried.
    expect(purged.filter((d) => d.job.kind === "site-purge").map((d) => d.result)).not.toContain("retried");
    expect(await siteRowsEverywhere(e, origin)).toEqual({});
  });
});
