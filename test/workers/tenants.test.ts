/**
 * Issue 44: registered sites served by Host with no D1 query on the hot path, each written with its
 * own token and no other's, through the Worker's entry with real D1 and KV.
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { trimRegistered } from "../../src/housekeeping/housekeeping.ts";
import { RegistryResolver } from "../../src/registry/resolve.ts";
import type { RegisteredSite } from "../../src/registry/store.ts";
import { newSiteToken, tokenHash } from "../../src/registry/token.ts";
import { registeredServices } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { bearer } from "./support/admin.ts";
import { countingEnv } from "./support/counting-env.ts";
import { drain, withJobs } from "./support/jobs.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const registered = (e: Env, settings: Record<string, string> = {}) => registeredSite(e, "t", settings);

/** A fresh env object: a fresh isolate-level registry list (the resolver is kept per env). */
const freshEnv = (): Env => ({ ...baseEnv }) as Env;

const put = (e: Env, origin: string, token: string, locs: string[]) =>
  call(e, `${origin}/sitemap-admin/urls`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(locs.map((loc) => ({ loc }))),
  });

describe("a registered site", () => {
  it("is written with its own token and serves its own URLs only; another site's token is 403 on it", async () => {
    const e = freshEnv();
    const a = await registered(e);
    const b = await registered(e);
    const mine = [`${a.site.origin}/one`, `${a.site.origin}/two`];
    expect((await put(e, a.site.origin, a.token, mine)).status).toBe(200);
    expect((await put(e, b.site.origin, b.token, [`${b.site.origin}/other`])).status).toBe(200);
    await rebuildManifest(registeredServices(e, a.site), a.site.origin);
    const index = await call(e, `${a.site.origin}/sitemap.xml`);
    expect(index.status).toBe(200);
    const shard = await call(e, `${a.site.origin}/sitemap-pages-1.xml`);
    const xml = await shard.text();
    expect(xml).toContain(`<loc>${a.site.origin}/one</loc>`);
    expect(xml).not.toContain(b.site.origin);

    // A's token on B's host: a credential of the wrong site.
    expect((await call(e, `${b.site.origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${a.token}` } })).status).toBe(403);
    expect((await put(e, b.site.origin, a.token, [`${b.site.origin}/x`])).status).toBe(403);
    // A's token writing B's loc on A's host: refused whole, nothing written.
    const mixed = await put(e, a.site.origin, a.token, [`${a.site.origin}/three`, `${b.site.origin}/mine-now`]);
    expect(mixed.status).toBe(403);
    expect((await call(e, `${a.site.origin}/sitemap-admin/urls?loc=${encodeURIComponent(`${a.site.origin}/three`)}`, { headers: bearer })).status).toBe(
      404,
    );
    // Its status is its own; the platform token reads it too.
    const status = (await (await call(e, `${a.site.origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${a.token}` } })).json()) as {
      site: string;
    };
    expect(status.site).toBe(a.site.origin);
    expect((await call(e, `${a.site.origin}/sitemap-admin/status`, { headers: bearer })).status).toBe(200);
    // A site's own dashboard links its sitemap, not the platform's page.
    const own = await (await call(e, `${a.site.origin}/sitemap-admin/`, { headers: { Authorization: `Bearer ${a.token}` } })).text();
    expect(own).toContain('<a href="/sitemap.xml">the sitemap index</a>');
    expect(own).not.toContain("/sitemap-admin/platform");
    // A made-up token is 401, as ever.
    expect((await call(e, `${a.site.origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${newSiteToken()}` } })).status).toBe(401);
  });

  it("its settings are its own: MAX_URLS_PER_SHARD of the site shards it, not the others", async () => {
    const e = freshEnv();
    const a = await registered(e, { MAX_URLS_PER_SHARD: "1" });
    expect((await put(e, a.site.origin, a.token, [`${a.site.origin}/1`, `${a.site.origin}/2`])).status).toBe(200);
    const manifest = await rebuildManifest(registeredServices(e, a.site), a.site.origin);
    expect(manifest.shards.filter((s) => s.urlCount > 0)).toHaveLength(2);
  });
});

describe("a registered site's settings", () => {
  it("a per-site variable it does not set is its default, not the deployment's value", async () => {
    const e = {
      ...freshEnv(),
      MIRROR_SITEMAPS: "https://feeds.example/sitemap.xml",
      INDEXNOW_KEY: "0123456789abcdef0123",
      MAX_URLS_PER_SHARD: "7",
    } as Env;
    // A ping endpoint on the site's own host (settings that name hosts: docs/tenants.md).
    const a = await registered(e, { PING_URLS: "{origin}/ping?sitemap={sitemap}" });
    const config = registeredServices(e, a.site).config;
    expect(config.mirror.urls).toEqual([]);
    expect(config.notify.indexNow).toBeNull();
    expect(config.maxUrlsPerShard).toBe(50_000);
    expect(config.notify.pingUrls).toEqual(["{origin}/ping?sitemap={sitemap}"]);
    expect([...config.sites]).toEqual([a.site.origin]);
  });
});

describe("registering on a KV deployment", () => {
  it("is refused: registered sites keep their records and manifests in D1 (what the purge removes)", async () => {
    const e = { ...freshEnv(), URL_SOURCE: "kv" } as Env;
    const res = await call(e, "http://localhost:8787/sitemap-admin/sites", {
      method: "POST",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ origin: "https://kv-tenant.test" }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: "not_supported" });
    expect(await new D1SiteRegistry(e.DB).get("https://kv-tenant.test")).toBeNull();
  });
});

describe("a site's token", () => {
  it("rotated through the platform API: the old token is refused at once, the new one works", async () => {
    const e = freshEnv();
    const a = await registered(e);
    const status = (token: string) => call(e, `${a.site.origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${token}` } });
    expect((await status(a.token)).status).toBe(200);
    const rotated = await call(e, `http://localhost:8787/sitemap-admin/sites/${new URL(a.site.origin).host}/token`, { method: "POST", headers: bearer });
    expect(rotated.status).toBe(200);
    const { token } = (await rotated.json()) as { token: string };
    expect((await status(a.token)).status).toBe(401);
    expect((await status(token)).status).toBe(200);
  });
});

describe("deleting a registered site", () => {
  it("404 at once for its sitemaps; the purge is queued and removes its records", async () => {
    const { env: e, queue } = withJobs(freshEnv());
    const a = await registered(e);
    expect((await put(e, a.site.origin, a.token, [`${a.site.origin}/one`])).status).toBe(200);
    await rebuildManifest(registeredServices(e, a.site), a.site.origin);
    expect((await call(e, `${a.site.origin}/sitemap.xml`)).status).toBe(200);
    const deleted = await call(e, `http://localhost:8787/sitemap-admin/sites/${new URL(a.site.origin).host}`, { method: "DELETE", headers: bearer });
    expect(deleted.status).toBe(202);
    expect((await call(e, `${a.site.origin}/sitemap.xml`)).status).toBe(404);
    expect(queue.sent.map((m) => m.body.kind)).toContain("site-purge");
    // The purge waits out the TTL and the lease before it deletes: run it as if that time had passed.
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 10 * 60_000);
    await drain(e, queue);
    const left = await e.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1").bind(a.site.origin).first<{ n: number }>();
    expect(left!.n).toBe(0);
    expect(await new D1SiteRegistry(e.DB).get(a.site.origin)).toBeNull();
  });
});

describe("a registered site's litter", () => {
  it("tombstones the regeneration published are trimmed, page by page, as the configured sites' are", async () => {
    const e = freshEnv();
    const a = await registered(e);
    const b = await registered(e);
    const now = Date.now();
    const locs = (site: RegisteredSite) => Array.from({ length: 6 }, (_, i) => `${site.origin}/p${i}`);
    for (const { site, token } of [a, b]) {
      expect((await put(e, site.origin, token, locs(site))).status).toBe(200);
      const gone = await call(e, `${site.origin}/sitemap-admin/urls`, {
        method: "DELETE",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify(locs(site).slice(0, 2)),
      });
      expect(gone.status).toBe(200);
    }
    const units = [registeredServices(e, a.site), registeredServices(e, b.site)];
    // Past the settle window, so that the runs read the deletions.
    vi.spyOn(Date, "now").mockReturnValue(now + 5 * 60_000);
    await regenerateAll(units);
    const deadRows = async () =>
      (await e.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin IN (?1, ?2) AND deleted = 1")
        .bind(a.site.origin, b.site.origin)
        .first<{ n: number }>())!.n;
    expect(await deadRows()).toBe(4);
    // The first run sees each site's cursor; one MANIFEST_CACHE_TTL and a minute later, the tombstones go.
    expect(await trimRegistered([units], { now: now + 6 * 60_000, maxStatements: 100 })).toMatchObject({ tombstones: 0, held: 2 });
    const second = await trimRegistered([units], { now: now + 9 * 60_000, maxStatements: 100 });
    expect(second).toMatchObject({ tombstones: 4, moreLeft: false });
    expect(second.statements).toBeLessThanOrEqual(100);
    expect(await deadRows()).toBe(0);
    const live = await e.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin IN (?1, ?2) AND deleted = 0")
      .bind(a.site.origin, b.site.origin)
      .first<{ n: number }>();
    expect(live!.n).toBe(8);
  });
});

describe("the platform's view of its sites", () => {
  it("a page of 20 sites with their health fits one invocation; the platform page lists them worst first; a site token gets 403 (404 on a tenant's host)", async () => {
    const e = freshEnv();
    const prefix = `hv${Math.random().toString(36).slice(2, 7)}`;
    const made: { site: RegisteredSite; token: string }[] = [];
    for (let i = 0; i < 21; i++) {
      const token = newSiteToken();
      const now = Date.now();
      const site: RegisteredSite = {
        origin: `https://${prefix}-${String(i).padStart(2, "0")}.test`,
        settings: {},
        tokenHash: await tokenHash(token),
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      };
      expect(await new D1SiteRegistry(e.DB).create(site)).toBe(true);
      made.push({ site, token });
    }
    // One site whose setting no longer reads (written around the API's validation): a red problem.
    await e.DB.prepare("UPDATE registry_sites SET settings = ?2, updated_at = updated_at + 1 WHERE origin = ?1")
      .bind(made[5]!.site.origin, JSON.stringify({ MAX_URLS_PER_SHARD: "0" }))
      .run();
    const counts = { d1: 0, kv: 0 };
    const list = await call(countingEnv(e, counts), `http://localhost:8787/sitemap-admin/sites?health=true&contains=${prefix}`, { headers: bearer });
    expect(list.status).toBe(200);
    // Each site's status read, 20 of them, well inside the invocation's 1,000 queries (the entry's meter enforces it too).
    console.info(`sites?health=true, 20 sites: ${counts.d1} D1 queries, ${counts.kv} KV operations`);
    expect(counts.d1).toBeLessThanOrEqual(800);
    const body = (await list.json()) as {
      sites: { origin: string; health: { red: number; amber: number; problems: { level: string; topic: string }[] } }[];
      next: string | null;
    };
    expect(body.sites).toHaveLength(20);
    expect(body.next).not.toBeNull();
    const broken = body.sites.find((x) => x.origin === made[5]!.site.origin)!;
    expect(broken.health.red).toBe(1);
    expect(broken.health.problems[0]).toMatchObject({ level: "red", topic: "configuration" });
    // An empty site has published nothing yet: amber, not red.
    expect(body.sites.find((x) => x.origin === made[0]!.site.origin)!.health.red).toBe(0);
    expect((await call(e, `http://localhost:8787/sitemap-admin/sites?health=true&limit=50`, { headers: bearer })).status).toBe(400);

    const pageRes = await call(e, `http://localhost:8787/sitemap-admin/platform`, { headers: bearer });
    expect(pageRes.status).toBe(200);
    expect(pageRes.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    const html = await pageRes.text();
    expect(html).toContain("Registered sites");
    expect(html).toContain("next page");
    // A site's token: 403 on the platform's host; on its own host (a tenant's) the platform page does not exist.
    expect((await call(e, `http://localhost:8787/sitemap-admin/platform`, { headers: { Authorization: `Bearer ${made[1]!.token}` } })).status).toBe(403);
    expect((await call(e, `${made[1]!.site.origin}/sitemap-admin/platform`, { headers: { Authorization: `Bearer ${made[1]!.token}` } })).status).toBe(404);
    expect((await call(e, `${made[1]!.site.origin}/sitemap-admin/platform`, { headers: bearer })).status).toBe(404);
  });
});

describe("resolving a host", () => {
  it("2,000 requests for random unknown hosts read the registry once, not per request", async () => {
    const e = freshEnv();
    await registered(e);
    let registryQueries = 0;
    const db = e.DB;
    const counted = {
      ...e,
      DB: new Proxy(db, {
        get(t, name) {
          if (name === "prepare") {
            return (sql: string) => {
              if (sql.includes("registry_sites")) registryQueries++;
              return t.prepare(sql);
            };
          }
          const v = Reflect.get(t, name, t) as unknown;
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
        },
      }),
    } as Env;
    for (let i = 0; i < 2000; i++) {
      const res = await call(counted, `https://random-${i}-${Math.random().toString(36).slice(2)}.example/sitemap.xml`);
      expect(res.status).toBe(404);
    }
    expect(registryQueries).toBeLessThanOrEqual(1);
  });

  it("a new site serves once the list is older than the TTL; a listed site is read once; a deleted one is gone at once here", async () => {
    const e = freshEnv();
    const registry = new D1SiteRegistry(e.DB);
    const resolver = new RegistryResolver(registry, 60_000);
    const t0 = Date.now();
    const background: Promise<unknown>[] = [];
    const later = (p: Promise<unknown>) => background.push(p);
    expect(await resolver.resolve("https://nobody.test", t0, later)).toBeNull();
    const a = await registered(e);
    // Within the TTL the isolate's list does not have it yet…
    expect(await resolver.resolve(a.site.origin, t0 + 1_000, later)).toBeNull();
    // …once the list is older than the TTL, a host not on it reads the list again.
    expect((await resolver.resolve(a.site.origin, t0 + 61_000, later))?.origin).toBe(a.site.origin);
    const get = vi.spyOn(registry, "get");
    expect((await resolver.resolve(a.site.origin, t0 + 62_000, later))?.origin).toBe(a.site.origin);
    expect(get).not.toHaveBeenCalled();
    resolver.forget(a.site.origin);
    expect(await resolver.resolve(a.site.origin, t0 + 63_000, later)).toBeNull();
    await Promise.all(background);
  });
});
