/**
 * Issue 50 item 4: a registered site's settings that name hosts (MIRROR_SITEMAPS, ROBOTS_ORIGIN_URL,
 * PING_URLS) are held to its own domain unless SITE_SETTINGS_ANY_HOST allows otherwise, and
 * GSC_PROPERTY (read and written with the platform's one service account) only names a property
 * the site belongs to — refused at the platform API, on registration and on update, naming the
 * setting and never its value. Cases are derived from HOST_SETTINGS, so a new host setting is covered.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { HOST_SETTINGS } from "../../src/registry/hosts.ts";
import { siteEnv } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

interface ApiError {
  error: string;
  problems?: { setting: string; rule: string }[];
}

let labels = 0;
const uniqueHost = (): string => `shop${++labels}${Math.random().toString(36).slice(2, 7)}.example`;

function deployment(vars: Record<string, string> = {}): { at: string; env: Env } {
  const at = freshOrigin("platform");
  return { at, env: siteEnv(at, vars) };
}

const send = (e: Env, url: string, method: string, body: unknown) =>
  call(e, url, { method, headers: { ...bearer, "Content-Type": "application/json" }, body: JSON.stringify(body) });

/** A value of `setting` naming `url` (a ping URL template needs its placeholder). */
const settingValue = (setting: (typeof HOST_SETTINGS)[number], url: string): string => (setting === "PING_URLS" ? `${url}?sitemap={sitemap}` : url);

/** Hosts a site at `https://www.<domain>` may name (its registrable domain `<domain>` and under it, siblings too), and hosts it may not. */
const hostsFor = (domain: string) => ({
  own: [`www.${domain}`, domain, `cms.${domain}`, `a.b.${domain}`, `blog.${domain}`],
  foreign: [`evil-${domain}`, `${domain}.evil.test`, "other.example", "127.0.0.1", `x${domain}`],
});

describe("settings that name hosts", () => {
  for (const setting of HOST_SETTINGS) {
    it(`${setting}: its own domain's hosts are accepted, any other refused (400 naming it, not its value)`, async () => {
      const { at, env: e } = deployment();
      const domain = uniqueHost();
      const origin = `https://www.${domain}`;
      const hosts = hostsFor(domain);
      for (const host of hosts.foreign) {
        const url = `https://${host}/path.xml`;
        const res = await send(e, `${at}/sitemap-admin/sites`, "POST", { origin, settings: { [setting]: settingValue(setting, url) } });
        expect(res.status, host).toBe(400);
        const body = (await res.json()) as ApiError;
        expect(body.error).toBe("invalid_settings");
        expect(body.problems?.map((p) => p.setting)).toEqual([setting]);
        expect(JSON.stringify(body)).not.toContain(host === "127.0.0.1" ? "127.0.0.1/" : `${host}/`);
      }
      const created = await send(e, `${at}/sitemap-admin/sites`, "POST", {
        origin,
        settings: { [setting]: settingValue(setting, `https://${hosts.own[0]}/one.xml`) },
      });
      expect(created.status, await created.clone().text()).toBe(201);
      for (const host of hosts.own) {
        const res = await send(e, `${at}/sitemap-admin/sites/www.${domain}`, "PATCH", {
          settings: { [setting]: settingValue(setting, `https://${host}/x.xml`) },
        });
        expect(res.status, host).toBe(200);
      }
      // The update path refuses a foreign host the same way, and keeps the settings there were.
      const refused = await send(e, `${at}/sitemap-admin/sites/www.${domain}`, "PATCH", {
        settings: { [setting]: settingValue(setting, `https://${hosts.foreign[0]}/x.xml`) },
      });
      expect(refused.status).toBe(400);
      const kept = (await (await call(e, `${at}/sitemap-admin/sites/www.${domain}`, { headers: bearer })).json()) as { settings: Record<string, string> };
      expect(kept.settings[setting]).toContain(hosts.own.at(-1)!);
    });
  }

  it("ROBOTS_ORIGIN_URL's {origin} and {host} are the site's own", async () => {
    const { at, env: e } = deployment();
    for (const template of ["{origin}/robots.txt", "https://{host}/robots.txt", "none"]) {
      const res = await send(e, `${at}/sitemap-admin/sites`, "POST", { origin: `https://${uniqueHost()}`, settings: { ROBOTS_ORIGIN_URL: template } });
      expect(res.status, template).toBe(201);
    }
  });

  it("own is the registrable domain of the public suffix list: never a whole suffix, nor a private suffix's other tenants", async () => {
    const { at, env: e } = deployment();
    const tld = `t${Math.random().toString(36).slice(2, 8)}`;
    const cases: [origin: string, url: string, ok: boolean][] = [
      // `www.` is a label like any other: a site at www.<tld> owns its own subtree, not the TLD.
      [`https://www.${tld}`, `https://evil.${tld}/s.xml`, false],
      [`https://www.${tld}`, `https://cms.www.${tld}/s.xml`, true],
      // Private suffixes: one tenant per label.
      [`https://${tld}.github.io`, `https://other.github.io/s.xml`, false],
      [`https://www.${tld}.co.uk`, `https://cms.${tld}.co.uk/s.xml`, true],
      [`https://www.${tld}.co.uk`, `https://cms.co.uk/s.xml`, false],
    ];
    for (const [origin, url, ok] of cases) {
      const res = await send(e, `${at}/sitemap-admin/sites`, "POST", { origin, settings: { MIRROR_SITEMAPS: url } });
      expect(res.status, `${origin} ${url}`).toBe(ok ? 201 : 400);
    }
    // Nor is the TLD a domain property of a site at www.<tld> (`sc-domain:net` for https://www.net).
    const wholeTld = await send(e, `${at}/sitemap-admin/sites`, "POST", {
      origin: `https://www.n${tld}`,
      settings: { GSC_PROPERTY: `sc-domain:n${tld}` },
    });
    expect(wholeTld.status).toBe(400);
    const own = await send(e, `${at}/sitemap-admin/sites`, "POST", { origin: `https://www.n${tld}`, settings: { GSC_PROPERTY: `sc-domain:www.n${tld}` } });
    expect(own.status).toBe(201);
  });

  it("SITE_SETTINGS_ANY_HOST=true lets them name any host", async () => {
    const { at, env: e } = deployment({ SITE_SETTINGS_ANY_HOST: "true" });
    const settings = Object.fromEntries(HOST_SETTINGS.map((s) => [s, settingValue(s, "https://cms.other.example/sitemap.xml")]));
    const res = await send(e, `${at}/sitemap-admin/sites`, "POST", { origin: `https://${uniqueHost()}`, settings });
    expect(res.status, await res.clone().text()).toBe(201);
  });
});

describe("GSC_PROPERTY (the platform's one service account)", () => {
  const cases = (domain: string): [property: string, ok: boolean][] => [
    ["{origin}/", true],
    [`https://www.${domain}/`, true],
    [`sc-domain:${domain}`, true],
    [`sc-domain:www.${domain}`, true],
    ["sc-domain:{host}", true],
    [`https://${domain}/`, false],
    [`https://www.${domain}/blog/`, false],
    [`http://www.${domain}/`, false],
    ["sc-domain:example", false],
    ["sc-domain:other.example", false],
    ["https://other.example/", false],
  ];

  for (const anyHost of ["false", "true"]) {
    it(`only a property the site's origin belongs to (SITE_SETTINGS_ANY_HOST=${anyHost})`, async () => {
      const { at, env: e } = deployment({ SITE_SETTINGS_ANY_HOST: anyHost });
      for (const [property, ok] of cases("tenant.example")) {
        const domain = uniqueHost();
        const res = await send(e, `${at}/sitemap-admin/sites`, "POST", {
          origin: `https://www.${domain}`,
          settings: { GSC_PROPERTY: property.replaceAll("tenant.example", domain) },
        });
        expect(res.status, property).toBe(ok ? 201 : 400);
        if (!ok) expect(((await res.json()) as ApiError).problems?.map((p) => p.setting)).toEqual(["GSC_PROPERTY"]);
      }
    });
  }
});
