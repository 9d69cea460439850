/**
 * Tenants under one registrable domain (`a.<d>.test` and `b.<d>.test`): each owns the domain's hosts by
 * the registrable-domain rule, but a host another site has (registered, or served by SITES) is never
 * a tenant's own. Refused when settings are written (registration and PATCH), and at use: a setting
 * stored before the other tenant registered its host turns its feature off once the isolate lists
 * that tenant (its status names it; robots.txt comes from the site's own origin). Real D1; origins
 * are a fake at the fetch boundary.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const label = () => Math.random().toString(36).slice(2, 9);

const send = (e: Env, url: string, method: string, body: unknown) =>
  call(e, url, { method, headers: { ...bearer, "Content-Type": "application/json" }, body: JSON.stringify(body) });

/** Settings naming `host` in every way a setting names a host. */
const naming = (host: string): Record<string, string> => ({
  MIRROR_SITEMAPS: `http://${host}:8787/sitemap.xml`,
  ROBOTS_ORIGIN_URL: `http://${host}:8787/robots.txt`,
  PING_URLS: `http://${host}:8787/ping?s={sitemap}`,
});

async function refusedSettings(res: Response): Promise<string[]> {
  expect(res.status, await res.clone().text()).toBe(400);
  return ((await res.json()) as { problems: { setting: string }[] }).problems.map((p) => p.setting).sort();
}

describe("a host another tenant under the same registrable domain has", () => {
  it("is refused in settings at registration and at PATCH; the tenant's other hosts of that domain are not", async () => {
    const platform = freshOrigin("platform");
    const e = siteEnv(platform);
    const domain = `d${label()}.test`;
    const b = `http://b.${domain}:8787`;
    expect((await send(e, `${platform}/sitemap-admin/sites`, "POST", { origin: b })).status).toBe(201);

    const a = `http://a.${domain}:8787`;
    const refused = await send(e, `${platform}/sitemap-admin/sites`, "POST", { origin: a, settings: naming(`b.${domain}`) });
    expect(await refusedSettings(refused)).toEqual(["MIRROR_SITEMAPS", "PING_URLS", "ROBOTS_ORIGIN_URL"]);
    const property = await send(e, `${platform}/sitemap-admin/sites`, "POST", { origin: a, settings: { GSC_PROPERTY: `sc-domain:${domain}` } });
    expect(await refusedSettings(property)).toEqual(["GSC_PROPERTY"]);

    // Its own host and a sibling no site has stay its own; so does sc-domain: of its own host.
    const own = { ...naming(`cms.${domain}`), ROBOTS_ORIGIN_URL: `${a}/robots.txt`, GSC_PROPERTY: `sc-domain:a.${domain}` };
    expect((await send(e, `${platform}/sitemap-admin/sites`, "POST", { origin: a, settings: own })).status).toBe(201);
    const patched = await send(e, `${platform}/sitemap-admin/sites/a.${domain}:8787`, "PATCH", { settings: { MIRROR_SITEMAPS: `${b}/sitemap.xml` } });
    expect(await refusedSettings(patched)).toEqual(["MIRROR_SITEMAPS"]);
  });

  it("turns the feature off at use once that tenant registers it, and robots.txt is fetched from the site's own origin", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const fetched: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      fetched.push(input instanceof Request ? input.url : String(input));
      return new Response("User-agent: *\nDisallow: /private\n", { status: 200 });
    });
    const platform = freshOrigin("platform");
    const e = siteEnv(platform);
    const domain = `d${label()}.test`;
    const a = `http://a.${domain}:8787`;
    // Stored while no site had b.<domain>: a sibling of its own then.
    expect((await send(e, `${platform}/sitemap-admin/sites`, "POST", { origin: a, settings: naming(`b.${domain}`) })).status).toBe(201);
    await (await call(e, `${a}/robots.txt`)).text();
    expect(fetched).toEqual([`http://b.${domain}:8787/robots.txt`]);
    const disabled = async (): Promise<string[]> => {
      const status = (await (await call(e, `${a}/sitemap-admin/status`, { headers: bearer })).json()) as {
        configuration: { disabled: { variable: string }[] };
      };
      return status.configuration.disabled.map((d) => d.variable).sort();
    };
    expect(await disabled()).toEqual([]);

    // Another tenant registers b.<domain> (in this isolate: its list has it at once; every other within MANIFEST_CACHE_TTL).
    expect((await send(e, `${platform}/sitemap-admin/sites`, "POST", { origin: `http://b.${domain}:8787` })).status).toBe(201);
    expect(await disabled()).toEqual(["MIRROR_SITEMAPS", "PING_URLS", "ROBOTS_ORIGIN_URL"]);
    fetched.length = 0;
    await (await call(e, `${a}/robots.txt`)).text();
    expect(fetched).toEqual([`${a}/robots.txt`]);
  });
});
