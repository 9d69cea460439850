/**
 * Issue 50: no way across tenants, checked over the route table. Every route of the admin's OpenAPI
 * document (read at run time, so a route added to src/admin/routes.ts is called here without anyone
 * listing it) is called with every credential kind a tenant could hold against another tenant:
 * none, a wrong token, site A's token on B's host, A's session cookie on B's host, and A's token on
 * A's own host naming B's resources (B's sync by id, B's host, B's locs and origin in the body or
 * query). Each is refused (401, 403 or 404; a body naming B's locs may also be 422), and afterwards
 * B's sync is still open with what it had received, B's records are all there and B's token and
 * settings are unchanged.
 */
import { describe, expect, it } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { bearer, signInForm } from "./support/admin.ts";
import { call, freshOrigin } from "./support.ts";

interface Route {
  method: string;
  path: string;
  /** Who may call it: the route's one declaration (src/admin/routes.ts `x-access`), carried by the OpenAPI document. */
  access: string | undefined;
}

const label = () => Math.random().toString(36).slice(2, 9);
const REFUSED = [401, 403, 404];

/** A body for a route, naming B's resources wherever a body can name something. */
function bodyFor(route: Route, b: string): unknown {
  if (route.path === "/urls" || route.path.endsWith("/urls")) return [{ loc: `${b}/one` }, { loc: `${b}/new` }];
  if (route.path === "/syncs") return { sites: [b], maxDelete: 1 };
  if (route.path.endsWith("/commit")) return { maxDelete: 1 };
  if (route.path === "/sites") return { origin: `https://${label()}.example` };
  if (route.path === "/sites/{host}" && route.method === "patch") return { settings: { FEED_SIZE: "5" } };
  return undefined;
}

function request(route: Route, headers: Record<string, string>, b: string): RequestInit {
  const body = route.method === "get" || route.method === "head" ? undefined : bodyFor(route, b);
  return {
    method: route.method.toUpperCase(),
    headers: { ...headers, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

/** The route's path with B's resources in it (and a query naming B's loc where a GET reads one). */
const pathFor = (route: Route, bSync: string, bHost: string, b: string): string =>
  route.path.replace("{id}", bSync).replace("{host}", bHost) +
  (route.path === "/urls" && route.method === "get" ? `?loc=${encodeURIComponent(`${b}/one`)}` : "");

/** Whether a route, called on A's own host, can name another site's resource at all (a path parameter, a body or a query). */
const namesAResource = (route: Route): boolean =>
  route.path.includes("{") || route.path.includes("urls") || route.path === "/syncs" || route.path === "/sites";

describe("the authorization matrix, derived from the route table", () => {
  it("refuses every route to every credential a tenant holds against another tenant, and B is untouched", async () => {
    const platformOrigin = freshOrigin("authz");
    const e = siteEnv(platformOrigin);
    const register = async (): Promise<{ origin: string; token: string }> => {
      const origin = `http://${label()}.test:8787`;
      const res = await call(e, `${platformOrigin}/sitemap-admin/sites`, {
        method: "POST",
        headers: { ...bearer, "Content-Type": "application/json" },
        body: JSON.stringify({ origin }),
      });
      expect(res.status).toBe(201);
      return { origin, token: ((await res.json()) as { token: string }).token };
    };
    const a = await register();
    const b = await register();
    const asB = { Authorization: `Bearer ${b.token}` };
    const json = (headers: Record<string, string>, method: string, body: unknown): RequestInit => ({
      method,
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const bLocs = ["one", "two", "three"].map((p) => `${b.origin}/${p}`);
    expect(
      (
        await call(
          e,
          `${b.origin}/sitemap-admin/urls`,
          json(
            asB,
            "PUT",
            bLocs.map((loc) => ({ loc })),
          ),
        )
      ).status,
    ).toBe(200);
    const started = await call(e, `${b.origin}/sitemap-admin/syncs`, json(asB, "POST", { sites: [b.origin], maxDelete: 1 }));
    expect(started.status).toBe(201);
    const bSync = ((await started.json()) as { id: string }).id;
    expect((await call(e, `${b.origin}/sitemap-admin/syncs/${bSync}/urls`, json(asB, "PUT", [{ loc: bLocs[0] }]))).status).toBe(200);
    const bHost = new URL(b.origin).host;
    const bSiteBefore = await (await call(e, `${platformOrigin}/sitemap-admin/sites/${bHost}`, { headers: bearer })).text();

    // A's browser session on A's own host (its own token at its own sign-in form).
    const signedIn = await call(e, `${a.origin}/sitemap-admin/sign-in`, signInForm(a.token, "198.51.100.77", { Origin: a.origin }));
    expect(signedIn.status).toBe(303);
    const aCookie = signedIn.headers.get("Set-Cookie")!.split(";")[0]!;

    // The route table, as the OpenAPI document derived from src/admin/routes.ts states it.
    const doc = (await (await call(e, `${platformOrigin}/sitemap-admin/openapi.json`, { headers: bearer })).json()) as {
      paths: Record<string, Record<string, { "x-access"?: string }>>;
    };
    const routes: Route[] = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ method, path, access: operation["x-access"] })),
    );
    expect(routes.length).toBeGreaterThanOrEqual(17);
    // A route added without its declaration fails here.
    for (const route of routes) expect(["public", "site", "platform"], `${route.method} ${route.path} declares no x-access`).toContain(route.access);

    // `onlyPlatformRoutes`: the platform's own credential, whose declared reach is every site's routes and, on the
    // platform's hosts only, the platform routes: on a tenant's host those do not exist (404).
    const credentials: { name: string; host: string; headers: Record<string, string>; onlyPlatformRoutes?: true }[] = [
      { name: "the platform token on B's host", host: b.origin, headers: bearer, onlyPlatformRoutes: true },
      { name: "no credential on B's host", host: b.origin, headers: {} },
      { name: "a wrong token on B's host", host: b.origin, headers: { Authorization: "Bearer esk_wrong0123456789abcdefghijklmnopqrstuvwxyzABCD" } },
      { name: "A's token on B's host", host: b.origin, headers: { Authorization: `Bearer ${a.token}` } },
      { name: "A's session on B's host", host: b.origin, headers: { Cookie: aCookie, Origin: b.origin } },
      { name: "A's session on A's host naming B's resources", host: a.origin, headers: { Cookie: aCookie, Origin: a.origin } },
      { name: "A's token on A's host naming B's resources", host: a.origin, headers: { Authorization: `Bearer ${a.token}` } },
    ];
    const outcomes: string[] = [];
    for (const route of routes) {
      if (route.access === "public") continue;
      for (const cred of credentials) {
        if (cred.onlyPlatformRoutes && route.access !== "platform") continue;
        const onOwnHost = cred.host === a.origin;
        // A site route naming nothing (A's own status, A's own regeneration) is A's own business on A's host.
        if (onOwnHost && route.access === "site" && !namesAResource(route)) continue;
        const res = await call(e, `${cred.host}/sitemap-admin${pathFor(route, bSync, bHost, b.origin)}`, request(route, cred.headers, b.origin));
        // A platform route does not exist on a tenant's host (404) whoever calls; a site route refuses what is not the caller's.
        const allowed =
          route.access === "platform" && (cred.onlyPlatformRoutes || (onOwnHost && "Authorization" in cred.headers))
            ? [404]
            : onOwnHost && route.path === "/urls" && route.method === "delete"
              ? [...REFUSED, 422]
              : REFUSED;
        outcomes.push(`${route.method.toUpperCase()} ${route.path} · ${cred.name}: ${res.status}`);
        expect(allowed, `${route.method.toUpperCase()} ${route.path} with ${cred.name} answered ${res.status}`).toContain(res.status);
      }
    }
    expect(outcomes.length).toBeGreaterThan(60);

    // B is as it was: its sync open with the one record it received, its records there, its site unchanged.
    const sync = (await (await call(e, `${b.origin}/sitemap-admin/syncs/${bSync}`, { headers: asB })).json()) as { state: string; received: number };
    expect(sync).toMatchObject({ state: "open", received: 1 });
    for (const loc of bLocs) {
      expect((await call(e, `${b.origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: asB })).status, loc).toBe(200);
    }
    expect((await call(e, `${b.origin}/sitemap-admin/urls?loc=${encodeURIComponent(`${b.origin}/new`)}`, { headers: asB })).status).toBe(404);
    expect(await (await call(e, `${platformOrigin}/sitemap-admin/sites/${bHost}`, { headers: bearer })).text()).toBe(bSiteBefore);
    expect((await call(e, `${b.origin}/sitemap-admin/status`, { headers: asB })).status).toBe(200);
  });
});
