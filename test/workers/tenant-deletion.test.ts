/**
 * Issue 50 items 5–6 (defects 5 and 6 of its "Why"): deleting a registered site is complete and
 * prompt, and every D1 database the deployment binds is housekept. An isolate whose list of sites is
 * stale takes no write and runs no job for a site deleted elsewhere once the list is MANIFEST_CACHE_TTL
 * old; the purge leaves no robots.txt key in KV; a DATABASE change is refused while the site holds
 * records; a database holding only registered sites has its expired syncs and old crawler rows trimmed.
 * (test/workers/database-left.test.ts: nothing is left in a database a site left.)
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { loadConfig } from "../../src/config.ts";
import { REGISTRY_TARGET } from "../../src/jobs/messages.ts";
import { bearer } from "./support/admin.ts";
import { deliver, drain, runCron, withJobs } from "./support/jobs.ts";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

afterEach(() => vi.restoreAllMocks());
beforeAll(async () => {
  await applyD1Migrations(baseEnv.SITE_B_DB, baseEnv.TEST_MIGRATIONS);
});

const registered = (e: Env, settings: Record<string, string> = {}) => registeredSite(e, "life", settings);

/** A fresh env object: a fresh isolate-level list of registered sites (the resolver is kept per env). */
const freshEnv = (): Env => ({ ...baseEnv }) as Env;

const put = (e: Env, origin: string, token: string, locs: string[]) =>
  call(e, `${origin}/sitemap-admin/urls`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(locs.map((loc) => ({ loc }))),
  });

const count = async (db: D1Database, sql: string, ...params: unknown[]): Promise<number> =>
  (await db
    .prepare(sql)
    .bind(...params)
    .first<number>("n")) ?? 0;

describe("a site deleted while another isolate's list still has it", () => {
  it("takes no write and runs no job there once the list is MANIFEST_CACHE_TTL old", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const isolate = freshEnv();
    const { site, token } = await registered(isolate);
    expect((await put(isolate, site.origin, token, [`${site.origin}/a`])).status).toBe(200);
    // Deleted through another isolate: this one's list still has it.
    expect(await new D1SiteRegistry(isolate.DB).markDeleted(site.origin, Date.now())).toBe(true);
    const ttlMs = loadConfig(isolate).cache.manifestTtl * 1000;
    const later = Date.now() + ttlMs + 1_000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    const write = await put(isolate, site.origin, token, [`${site.origin}/orphan`]);
    expect(write.status).toBe(404);
    expect(await count(isolate.DB, "SELECT COUNT(*) AS n FROM urls WHERE loc = ?1", `${site.origin}/orphan`)).toBe(0);

    // A job of the site delivered to that isolate finds no site.
    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void logged.push(String(line)));
    const { env: jobs } = withJobs(isolate);
    await deliver(jobs, { kind: "regenerate", origin: site.origin, trigger: "test", step: 0 });
    expect(logged.some((l) => l.includes(site.origin) && l.includes("no such site"))).toBe(true);
    expect(await count(isolate.DB, "SELECT COUNT(*) AS n FROM regen_runs WHERE origin = ?1", site.origin)).toBe(0);
  });
});

describe("the purge", () => {
  it("removes the site's robots.txt last good copy and loop mark from KV, and no other site's", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const e = freshEnv();
    const gone = await registered(e);
    const kept = await registered(e);
    for (const { site } of [gone, kept]) {
      await e.SNAPSHOTS.put(`robots/1/${site.origin}`, "User-agent: *\nDisallow: /old-tenant\n", { metadata: { digest: "d", fetchedAt: 1 } });
      await e.SNAPSHOTS.put(`robots-loop/1/${site.origin}`, String(Date.now()));
    }
    expect(await new D1SiteRegistry(e.DB).markDeleted(gone.site.origin, Date.now() - 3_600_000)).toBe(true);
    const { env: jobs, queue } = withJobs(e);
    await deliver(jobs, { kind: "site-purge", origin: REGISTRY_TARGET, trigger: "test", step: 0 });
    await drain(jobs, queue);
    expect(await new D1SiteRegistry(e.DB).get(gone.site.origin)).toBeNull();
    expect(await e.SNAPSHOTS.get(`robots/1/${gone.site.origin}`)).toBeNull();
    expect(await e.SNAPSHOTS.get(`robots-loop/1/${gone.site.origin}`)).toBeNull();
    expect(await e.SNAPSHOTS.get(`robots/1/${kept.site.origin}`)).not.toBeNull();
    expect(await e.SNAPSHOTS.get(`robots-loop/1/${kept.site.origin}`)).not.toBeNull();
  });
});

describe("a DATABASE change", () => {
  const patch = (e: Env, origin: string, settings: Record<string, string>) =>
    call(e, `http://localhost:8787/sitemap-admin/sites/${new URL(origin).host}`, {
      method: "PATCH",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ settings }),
    });

  it("is refused (409) while the site holds records, which stay where they are; allowed for a site holding none", async () => {
    const e = freshEnv();
    const full = await registered(e);
    expect((await put(e, full.site.origin, full.token, [`${full.site.origin}/kept`])).status).toBe(200);
    const refused = await patch(e, full.site.origin, { DATABASE: "SITE_B_DB" });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: string }).error).toBe("database_in_use");
    expect((await new D1SiteRegistry(e.DB).get(full.site.origin))?.settings).toEqual({});
    expect(await count(e.DB, "SELECT COUNT(*) AS n FROM urls WHERE origin = ?1", full.site.origin)).toBe(1);
    // Other settings change as before.
    expect((await patch(e, full.site.origin, { DEFAULT_SECTION: "docs" })).status).toBe(200);

    const empty = await registered(e);
    expect((await patch(e, empty.site.origin, { DATABASE: "SITE_B_DB" })).status).toBe(200);
  });
});

describe("a DATABASE change of a site without records", () => {
  it("is refused while snapshots its regeneration registered for collection are there (only those rows name their KV keys)", async () => {
    const e = freshEnv();
    const { site } = await registered(e);
    await e.DB.prepare("INSERT INTO snapshot_gc (key, origin, since) VALUES (?1, ?2, ?3)")
      .bind(`s1/_parts/${"a".repeat(32)}/`, site.origin, Date.now())
      .run();
    const res = await call(e, `http://localhost:8787/sitemap-admin/sites/${new URL(site.origin).host}`, {
      method: "PATCH",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ settings: { DATABASE: "SITE_B_DB" } }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: "database_in_use", message: expect.stringContaining("snapshots") });
    expect(await count(e.DB, "SELECT COUNT(*) AS n FROM snapshot_gc WHERE origin = ?1", site.origin)).toBe(1);
    expect((await new D1SiteRegistry(e.DB).get(site.origin))?.settings).toEqual({});
  });
});

describe("housekeeping of a database holding only registered sites", () => {
  it("the cron's registry sweep plans its sync sweep: expired syncs and old crawler rows are trimmed there", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const e = freshEnv();
    const { site } = await registered(e, { DATABASE: "SITE_B_DB" });
    const db = baseEnv.SITE_B_DB;
    const longAgo = Date.now() - 60 * 86400_000;
    await db.batch([
      db
        .prepare(
          "INSERT INTO syncs (id, scope, state, max_delete, started_at, expires_at) VALUES (?1, json_object('sites', json_array(?2), 'section', NULL, 'source', NULL), 'open', 1, ?3, ?3)",
        )
        .bind(`${site.origin}#old`, site.origin, longAgo),
      db
        .prepare(
          "INSERT INTO crawler_fetches (origin, crawler, document, minute, ok, at, path, status) VALUES (?1, 'googlebot', 'index', ?2, 1, ?3, '/sitemap.xml', 200)",
        )
        .bind(site.origin, Math.floor(longAgo / 60_000), longAgo),
    ]);
    const deliveries = await runCron(e);
    // Named by its binding (every bound database is swept, a site on it or not), never by a SITES site: none is there.
    const sweeps = deliveries.filter((d) => d.job.kind === "sync-sweep" && d.result === "acked").map((d) => [d.job.origin, d.job.database]);
    expect(sweeps).toContainEqual([REGISTRY_TARGET, "SITE_B_DB"]);
    expect(await count(db, "SELECT COUNT(*) AS n FROM crawler_fetches WHERE origin = ?1", site.origin)).toBe(0);
    expect(await count(db, "SELECT COUNT(*) AS n FROM syncs WHERE id = ?1 AND state = 'open'", `${site.origin}#old`)).toBe(0);
  });
});
