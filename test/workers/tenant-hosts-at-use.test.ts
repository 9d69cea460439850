/**
 * Issue 50 item 4, at use: a registered site's settings that name hosts are judged by the URL the
 * Worker actually fetches (one builder of a ping URL for the check and the ping), and again each
 * time the site's services are wired, so a setting stored while SITE_SETTINGS_ANY_HOST was on turns
 * its feature off for that site once the deployment turns it off (the site's status names it; the
 * site itself keeps serving). Real D1 and KV; the ping endpoints and origins are a fake at the fetch
 * boundary.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { notifyAfterRegeneration } from "../../src/notify/notifier.ts";
import type { RegisteredSite } from "../../src/registry/store.ts";
import { registeredServices } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { FakeEngine, MINUTE, MemoryLog, pages, serviceAccountKey, siteEnv, upsert } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const T0 = Date.UTC(2026, 2, 1);

const send = (e: Env, url: string, method: string, body: unknown) =>
  call(e, url, { method, headers: { ...bearer, "Content-Type": "application/json" }, body: JSON.stringify(body) });

/** Registers `origin` with `settings` through the platform API of the deployment at `at`; the stored site. */
async function register(e: Env, at: string, origin: string, settings: Record<string, string>): Promise<RegisteredSite> {
  const res = await send(e, `${at}/sitemap-admin/sites`, "POST", { origin, settings });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await new D1SiteRegistry(e.DB).get(origin))!;
}

/** The pings the site's notification sends once it has records (its services wired from `e`). */
async function pingsOf(e: Env, site: RegisteredSite, at: number): Promise<string[]> {
  await upsert(siteEnv(site.origin), pages(site.origin, 2), at);
  const engine = new FakeEngine();
  await notifyAfterRegeneration([registeredServices(e, site)], { now: at + 5 * MINUTE, fetch: engine.fetch, log: new MemoryLog() });
  return engine.calls.map((c) => c.url);
}

describe("a ping URL is checked as it is sent", () => {
  it("a template naming the site by {host} or {origin} is pinged at the site's own host, filled exactly as checked", async () => {
    const at = freshOrigin("platform");
    const e = siteEnv(at);
    const origin = freshOrigin("pinged");
    const site = await register(e, at, origin, { PING_URLS: "https://{host}/hooks/ping?s={sitemap} {origin}/other?s={sitemap}" });
    const index = encodeURIComponent(`${origin}/sitemap.xml`);
    expect(await pingsOf(e, site, T0)).toEqual([`${origin}/hooks/ping?s=${index}`, `${origin}/other?s=${index}`]);
  });

  it("a template whose placeholders would put the ping on another host is refused", async () => {
    const at = freshOrigin("platform");
    const e = siteEnv(at);
    for (const template of ["https://{host}@evil.example/?s={sitemap}", "https://{sitemap}@evil.example/", "https://{host}.evil.example/?s={sitemap}"]) {
      const res = await send(e, `${at}/sitemap-admin/sites`, "POST", { origin: freshOrigin("trick"), settings: { PING_URLS: template } });
      expect(res.status, template).toBe(400);
      expect(((await res.json()) as { problems: { setting: string }[] }).problems.map((p) => p.setting)).toEqual(["PING_URLS"]);
    }
  });
});

describe("settings stored while SITE_SETTINGS_ANY_HOST was on, after it is turned off", () => {
  const FOREIGN = {
    MIRROR_SITEMAPS: "https://cms.elsewhere.example/sitemap.xml",
    ROBOTS_ORIGIN_URL: "https://cms.elsewhere.example/robots.txt",
    PING_URLS: "https://ping.elsewhere.example/?s={sitemap}",
  };

  it("turn only their own features off for that site, named in its status; turned on again, they are back", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const at = freshOrigin("platform");
    const allowing = siteEnv(at, { SITE_SETTINGS_ANY_HOST: "true" });
    const origin = freshOrigin("vouched");
    const site = await register(allowing, at, origin, { ...FOREIGN, MAX_URLS_PER_SHARD: "7" });
    expect(registeredServices(allowing, site).config.mirror.urls).toEqual([FOREIGN.MIRROR_SITEMAPS]);

    // A redeploy with the variable off: a new isolate, a new env object.
    const now = siteEnv(at);
    const config = registeredServices(now, site).config;
    expect(config.mirror.urls).toEqual([]);
    expect(config.notify.pingUrls).toEqual([]);
    expect(config.notify.robots.originUrl).toBe("{origin}/robots.txt");
    // The rest of its settings stand.
    expect(config.maxUrlsPerShard).toBe(7);
    expect(config.disabled.map((d) => `${d.feature} ${d.variable}`).sort()).toEqual([
      "mirrors MIRROR_SITEMAPS",
      "ping PING_URLS",
      "robots ROBOTS_ORIGIN_URL",
    ]);

    // Its status names them, not their values; its sitemap is still served.
    const status = await call(now, `${origin}/sitemap-admin/status`, { headers: bearer });
    expect(status.status).toBe(200);
    const body = (await status.json()) as { configuration: { ok: boolean; disabled: { variable: string; rule: string }[] } };
    expect(body.configuration.ok).toBe(false);
    expect(body.configuration.disabled.map((d) => d.variable).sort()).toEqual(["MIRROR_SITEMAPS", "PING_URLS", "ROBOTS_ORIGIN_URL"]);
    expect(body.configuration.disabled.every((d) => d.rule.includes("SITE_SETTINGS_ANY_HOST"))).toBe(true);
    expect(JSON.stringify(body)).not.toContain("elsewhere.example");
    await upsert(siteEnv(origin), pages(origin, 2), T0);
    await rebuildManifest(registeredServices(now, site), origin);
    expect((await call(now, `${origin}/sitemap.xml`)).status).toBe(200);

    // Nothing is fetched from the foreign hosts: robots.txt comes from the site's own origin, no ping goes out.
    const fetched: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      fetched.push(input instanceof Request ? input.url : String(input));
      return new Response("User-agent: *\nDisallow: /private\n", { status: 200 });
    });
    await (await call(now, `${origin}/robots.txt`)).text();
    expect(fetched).toEqual([`${origin}/robots.txt`]);
    expect(await pingsOf(now, site, T0)).toEqual([]);

    // The deployment allowing them again (another redeploy): the same stored settings are in use.
    const again = siteEnv(at, { SITE_SETTINGS_ANY_HOST: "true" });
    fetched.length = 0;
    await (await call(again, `${origin}/robots.txt`)).text();
    expect(fetched).toEqual([FOREIGN.ROBOTS_ORIGIN_URL]);
    expect(await pingsOf(again, site, T0 + 60 * MINUTE)).toEqual([`https://ping.elsewhere.example/?s=${encodeURIComponent(`${origin}/sitemap.xml`)}`]);
  });

  it("a GSC_PROPERTY a rule no longer allows turns Search Console off for that site alone", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const { pem } = await serviceAccountKey();
    const account = JSON.stringify({ type: "service_account", client_email: "sa@platform.example", private_key: pem });
    const e = siteEnv(freshOrigin("platform"), { GSC_SERVICE_ACCOUNT: account });
    const registry = new D1SiteRegistry(e.DB);
    const stored = async (property: string): Promise<RegisteredSite> => {
      const now = Date.now();
      const origin = freshOrigin("gsc");
      const site = { origin, settings: { GSC_PROPERTY: property }, tokenHash: origin, createdAt: now, updatedAt: now, deletedAt: null };
      expect(await registry.create(site)).toBe(true);
      return site;
    };
    // Its own domain property: Search Console on.
    const own = registeredServices(e, await stored("sc-domain:{host}")).config;
    expect(own.notify.searchConsole?.property).toBe("sc-domain:{host}");
    expect(own.disabled).toEqual([]);
    // Stored under an older rule (the API refuses it now): a domain property above the site's own domain.
    const above = registeredServices(e, await stored("sc-domain:example")).config;
    expect(above.notify.searchConsole).toBeNull();
    expect(above.disabled).toEqual([{ feature: "search-console", variable: "GSC_PROPERTY", rule: expect.stringContaining("registrable domain") }]);
  });
});
