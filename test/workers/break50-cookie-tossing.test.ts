/**
 * Hostile review of issue 50, Deliver item 2 (the platform's sessions on its own hosts, a site's on
 * its own), in the layout the earlier review took as usual for a platform: tenants on hosts under
 * the platform's own domain (`acme.platform.example`). The session cookie is
 * `__Secure-sitemap_admin_session` (src/admin/auth/session.ts). A `__Secure-` cookie may carry a
 * `Domain` attribute, so any script on a tenant's pages may set one for the whole registrable domain
 * (`Domain=platform.example; Path=/sitemap-admin/dashboard; Secure`), and browsers send it to the
 * platform's host and to every other tenant's, before their own (RFC 6265 5.4: a longer path
 * first). The Worker reads the first: the platform's admin (or another tenant) reads as signed out
 * there, and signing in again sets a cookie the tossed one still shadows. A `__Host-` cookie cannot
 * be set with `Domain`, so no sibling host could shadow it. A failing case here is a finding, not a
 * flaky test.
 */
import { describe, expect, it } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { bearer, signIn } from "./support/admin.ts";
import { call } from "./support.ts";

const label = () => Math.random().toString(36).slice(2, 9);
const signedIn = (page: string) => page.includes('name="csrf"');

describe("a cookie a tenant's page sets for the platform's registrable domain", () => {
  it("does not sign the platform's admin out of the platform's dashboard", async () => {
    const domain = `platform-${label()}.example`;
    const platformOrigin = `https://${domain}`;
    const e = siteEnv(platformOrigin);
    const tenant = `https://acme-${label()}.${domain}`;
    const res = await call(e, `${platformOrigin}/sitemap-admin/sites`, {
      method: "POST",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ origin: tenant }),
    });
    expect(res.status).toBe(201);

    const platformCookie = await signIn(e, platformOrigin);
    const name = platformCookie.slice(0, platformCookie.indexOf("="));
    const dashboard = `${platformOrigin}/sitemap-admin/dashboard`;
    // Control: the platform's own cookie alone signs its admin in.
    expect(signedIn(await (await call(e, dashboard, { headers: { Cookie: platformCookie } })).text())).toBe(true);

    // The tenant's script: document.cookie = `${name}=…; Domain=${domain}; Path=/sitemap-admin/dashboard; Secure`.
    // A browser takes it unless the name is `__Host-`-prefixed, then sends it first to the platform's host.
    const tossedAccepted = !name.startsWith("__Host-");
    const tossed = `${name}=${"A".repeat(43)}`;
    const cookie = tossedAccepted ? `${tossed}; ${platformCookie}` : platformCookie;
    const page = await (await call(e, dashboard, { headers: { Cookie: cookie } })).text();
    expect({ cookieName: name, signedIn: signedIn(page) }).toMatchObject({ signedIn: true });
  });
});
