/**
 * Hostile review of issue 50, Deliver item 4, where the registrable-domain rule meets the platform's
 * own hosts. A platform that gives tenants hosts under its own domain (`acme.platform.example`, the
 * usual SaaS layout) makes each tenant's registrable domain the platform's: by the rule a tenant then
 * owns the host SITES serves, so it may have the Worker mirror and ping the platform's own site and,
 * with the platform's one service account, read the Search Console property that holds the platform
 * and every other tenant under it. The variables win for the sites they name: a host SITES serves is
 * the platform's, never a tenant's. A failing case here is a finding, not a flaky test.
 */
import { describe, expect, it } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { call } from "./support.ts";

const label = () => Math.random().toString(36).slice(2, 9);

describe("item 4: a tenant under the platform's domain", () => {
  const platformDomain = `platform-${label()}.example`;
  const platformOrigin = `https://${platformDomain}`;
  const e = siteEnv(platformOrigin);
  const cases: [string, Record<string, string>][] = [
    ["GSC_PROPERTY of the platform's domain", { GSC_PROPERTY: `sc-domain:${platformDomain}` }],
    ["GSC_PROPERTY of the platform's own origin", { GSC_PROPERTY: `${platformOrigin}/` }],
    ["MIRROR_SITEMAPS on the platform's host", { MIRROR_SITEMAPS: `${platformOrigin}/sitemap.xml` }],
    ["ROBOTS_ORIGIN_URL on the platform's host", { ROBOTS_ORIGIN_URL: `${platformOrigin}/robots.txt` }],
    ["PING_URLS on the platform's host", { PING_URLS: `${platformOrigin}/ping?sitemap={sitemap}` }],
  ];
  it.each(cases)("is refused %s", async (_name, settings) => {
    const origin = `https://${label()}.${platformDomain}`;
    const res = await call(e, `${platformOrigin}/sitemap-admin/sites`, {
      method: "POST",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ origin, settings }),
    });
    expect(res.status, await res.clone().text()).toBe(400);
    expect(await e.DB.prepare("SELECT origin FROM registry_sites WHERE origin = ?1").bind(origin).first()).toBeNull();
  });

  it("held: its own host's settings are taken (the refusals above are about the platform's host, not the layout)", async () => {
    const origin = `https://${label()}.${platformDomain}`;
    const res = await call(e, `${platformOrigin}/sitemap-admin/sites`, {
      method: "POST",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ origin, settings: { GSC_PROPERTY: `${origin}/`, MIRROR_SITEMAPS: `${origin}/cms-sitemap.xml` } }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  });
});
