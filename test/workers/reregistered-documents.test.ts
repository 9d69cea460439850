/**
 * A registered site deleted, purged, and a new tenant registered at the same origin: the documents the
 * first one had cached at this location (the manifest's copy, the index and shards in the Cache API)
 * and its ETags must not answer for the second. Content versions alone cannot tell them apart: a
 * shard's version is its rows' keys and change stamps, and the new tenant's database (another D1
 * binding) hands out the same keys, written at the same millisecond here. So every cache key and ETag
 * names the registration (src/documents/cache-keys.ts); and the purge empties the tiered Workers
 * Cache of the site's documents by their Cache-Tag.
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { JOB_LEASE_MS } from "../../src/jobs/budget.ts";
import { siteEnv } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { drain, withJobs } from "./support/jobs.ts";
import { call } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const label = () => Math.random().toString(36).slice(2, 9);
const TTL_S = 60;
/** Both tenants' records are written at this instant: equal change stamps. */
const STAMP = Date.UTC(2026, 5, 1, 12);

describe("a new tenant at a deleted tenant's origin", () => {
  it("is served its own index and shards, never the old tenant's cached ones, and no 304 for the old tenant's ETag", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const platformOrigin = `http://platform-${label()}.test:8787`;
    const e = siteEnv(platformOrigin, { MANIFEST_CACHE_TTL: String(TTL_S) });
    const { env: jobs, queue } = withJobs(e);
    const origin = `http://${label()}.test:8787`;
    const host = new URL(origin).host;

    const register = async (settings: Record<string, string>): Promise<string> => {
      const res = await call(jobs, `${platformOrigin}/sitemap-admin/sites`, {
        method: "POST",
        headers: { ...bearer, "Content-Type": "application/json" },
        body: JSON.stringify({ origin, settings }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { token: string }).token;
    };
    const write = async (token: string, paths: string[]) => {
      const now = vi.spyOn(Date, "now").mockReturnValue(STAMP);
      const res = await call(jobs, `${origin}/sitemap-admin/urls`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify(paths.map((p) => ({ loc: `${origin}${p}` }))),
      });
      now.mockRestore();
      expect(res.status).toBe(200);
    };
    const read = async (path: string, headers: Record<string, string> = {}) => {
      const res = await call(jobs, `${origin}${path}`, { headers });
      return { status: res.status, etag: res.headers.get("ETag"), body: await res.text() };
    };
    const shardPathIn = (index: string): string => new URL(/<loc>([^<]+)<\/loc>/.exec(index)![1]!).pathname;

    // The first tenant, in DB: its index and shard served (and so cached at this location), twice.
    await write(await register({}), ["/old-a", "/old-b", "/old-c"]);
    const oldKeys = (await e.DB.prepare("SELECT id FROM urls WHERE origin = ?1 ORDER BY id").bind(origin).all<{ id: number }>()).results.map((r) => r.id);
    const oldIndex = await read("/sitemap.xml");
    expect(oldIndex.status).toBe(200);
    const shardPath = shardPathIn(oldIndex.body);
    const oldShard = await read(shardPath);
    expect(oldShard.body).toContain("/old-a");
    expect((await read(shardPath)).body).toContain("/old-a");

    // Deleted, and purged as soon as it may be.
    expect((await call(jobs, `${platformOrigin}/sitemap-admin/sites/${host}`, { method: "DELETE", headers: bearer })).status).toBe(202);
    await e.DB.prepare("UPDATE registry_sites SET deleted_at = ?2 WHERE origin = ?1")
      .bind(origin, Date.now() - 2 * TTL_S * 1000 - JOB_LEASE_MS - 1000)
      .run();
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // KV takes one write a second per key (the robots.txt copy)
    // The tiered Workers Cache (not emulated locally): the purge empties it of every document of the site, by its Cache-Tag.
    const purged: string[] = [];
    const cache = { purge: async ({ tags }: { tags: string[] }) => purged.push(...tags) };
    await drain(jobs, queue, { cache });
    expect(await new D1SiteRegistry(e.DB).get(origin)).toBeNull();
    expect(purged).toEqual([`sitemaps/${host}`]);

    // The new tenant, in another database whose keys go on from where the first tenant's began.
    const other = baseEnv.SITE_B_DB;
    await other
      .prepare("INSERT INTO urls (id, origin, section, loc, size, updated_at) VALUES (?1, 'https://filler.test', 'pages', 'https://filler.test/x', 1, 0)")
      .bind(oldKeys[0]! - 1)
      .run();
    await other.prepare("DELETE FROM urls WHERE origin = 'https://filler.test'").run();
    await write(await register({ DATABASE: "SITE_B_DB" }), ["/new-x", "/new-y", "/new-z"]);
    const newKeys = (await other.prepare("SELECT id FROM urls WHERE origin = ?1 ORDER BY id").bind(origin).all<{ id: number }>()).results.map((r) => r.id);
    expect(newKeys).toEqual(oldKeys);

    const newIndex = await read("/sitemap.xml");
    expect(newIndex.status).toBe(200);
    expect(shardPathIn(newIndex.body)).toBe(shardPath);
    const newShard = await read(shardPath);
    expect(newShard.body).toContain("/new-x");
    expect(newShard.body).not.toContain("/old-a");
    expect(newShard.etag).not.toBe(oldShard.etag);
    // A crawler or shared cache revalidating with the old tenant's validator gets the new bytes, not a 304.
    const revalidated = await read(shardPath, { "If-None-Match": oldShard.etag! });
    expect(revalidated.status).toBe(200);
    expect(revalidated.body).toContain("/new-x");
  });
});
