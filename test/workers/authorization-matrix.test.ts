/**
 * Issue 50: no way across tenants, checked over the route table. Every route of the admin's OpenAPI
 * document (read at run time, so a route added to src/admin/routes.ts is called here without anyone
 * listing it) is called with every credential kind a tenant could hold against another tenant:
 * none, a wrong token, site A's token on B's host, A's session cookie on B's host, and A's token on
 * A's own host naming B's resources (B's sync by id, B's host, B's locs and origin in the body or
 * query). Each is refused (401, 403 or 404, never a 422 that reads B's things as merely invalid), and afterwards
 * B's sync is still open with what it had received, B's records are all there and B's token and
 * settings are unchanged. The platform's own credentials too, as each route declares them: the
 * ADMIN_TOKEN and an Access service token reach the platform routes on the platform's host only
 * (each call on a site registered for it), and name nothing of B's through a site route there; a
 * session signed in with the ADMIN_TOKEN on the platform's host reads its status there and nothing
 * else, and on B's host is no one. The admin's pages (src/admin/dashboard/routes.ts `pageRoutes`)
 * too: each declares who may call it, and every credential of A's is refused the non-public ones on B's host.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearJwksCache } from "../../src/admin/auth/access.ts";
import { pageRoutes } from "../../src/admin/dashboard/routes.ts";
import { siteEnv } from "./notify-support.ts";
import { accessKey } from "./support/access-key.ts";
import { bearer, signIn, signInForm } from "./support/admin.ts";
import { call } from "./support.ts";

interface Route {
  method: string;
  path: string;
  /** Who may call it: the route's one declaration (src/admin/routes.ts `x-access`), carried by the OpenAPI document. */
  access: string | undefined;
}

const label = () => Math.random().toString(36).slice(2, 9);
const REFUSED = [401, 403, 404];
/**
 * The platform's credential on its own host naming B's locs: it may write every site, so this is no
 * authorization refusal but a record outside the host's sites (422, as for any unconfigured origin).
 * A tenant's credential naming B's things is refused 401/403/404 only.
 */
const PLATFORM_NAMING_B = [...REFUSED, 422];

/** The deployment's Cloudflare Access application, and the Client ID of the service token it lets write. */
const TEAM = "https://team-matrix.cloudflareaccess.com";
const AUD = "aud-matrix-0123456789";
const CLIENT = "0123456789abcdef0123456789abcdef.access";

/** Access's headers for its service token (a JWT signed by the team's key, whose JWKS the Worker fetches: faked here). */
async function accessServiceToken(): Promise<Record<string, string>> {
  const key = await accessKey("matrix");
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    const url = input instanceof Request ? input.url : String(input);
    return url === `${TEAM}/cdn-cgi/access/certs` ? Response.json({ keys: [key.public] }) : new Response("not found", { status: 404 });
  });
  const s = Math.floor(Date.now() / 1000);
  return { "Cf-Access-Jwt-Assertion": await key.jwt({ aud: [AUD], iss: TEAM, type: "app", iat: s, nbf: s, exp: s + 3600, sub: "", common_name: CLIENT }) };
}

/**
 * What a credential's call of a route must answer: the statuses allowed; `allowed`, a success, its
 * `{host}` a site registered for this call alone (it may rotate its token or delete it); null: not called.
 */
type Outcome = readonly number[] | "allowed" | null;

afterEach(() => {
  vi.restoreAllMocks();
  clearJwksCache();
});

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
    // Plain http like the tenants' (local hosts): a session cookie has the same name on both, so sending it across means something.
    const platformOrigin = `http://platform-${label()}.test:8787`;
    const e = siteEnv(platformOrigin, { ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: AUD, ACCESS_SERVICE_TOKEN_IDS: CLIENT });
    const service = await accessServiceToken();
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
    // The platform's browser session on the platform's host (the ADMIN_TOKEN at its sign-in form).
    const platformCookie = await signIn(e, platformOrigin);

    // The route table, as the OpenAPI document derived from src/admin/routes.ts states it.
    const doc = (await (await call(e, `${platformOrigin}/sitemap-admin/openapi.json`, { headers: bearer })).json()) as {
      paths: Record<string, Record<string, { "x-access"?: string }>>;
    };
    // The document names each path as served (under /sitemap-admin); a route here is its path below that, as the calls add it back.
    const paths = Object.keys(doc.paths);
    expect(paths.filter((path) => !path.startsWith("/sitemap-admin/"))).toEqual([]);
    const routes: Route[] = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ method, path: path.slice("/sitemap-admin".length), access: operation["x-access"] })),
    );
    expect(routes.length).toBeGreaterThanOrEqual(17);
    // A route added without its declaration fails here.
    for (const route of routes) expect(["public", "site", "platform"], `${route.method} ${route.path} declares no x-access`).toContain(route.access);

    // The platform's own credentials (the ADMIN_TOKEN, an Access service token), whose declared reach is every site's
    // routes and, on the platform's hosts only, the platform routes: on a tenant's host those do not exist (404), and
    // its site routes read (their writes would change B: not called). On the platform's host the platform routes are
    // theirs, and a site route there is the platform's own site, naming nothing of B's.
    const platformCredentials = [
      { name: "the platform token", headers: bearer },
      { name: "the platform's Access service token", headers: service },
    ];
    const credentials: { name: string; host: string; headers: Record<string, string>; outcome?: (r: Route) => Outcome }[] = [
      ...platformCredentials.map(({ name, headers }) => ({
        name: `${name} on B's host`,
        host: b.origin,
        headers,
        outcome: (r: Route): Outcome => (r.access === "platform" ? [404] : r.method === "get" ? "allowed" : null),
      })),
      ...platformCredentials.map(({ name, headers }) => ({
        name: `${name} on the platform's host`,
        host: platformOrigin,
        headers,
        outcome: (r: Route): Outcome => (r.access === "platform" ? "allowed" : namesAResource(r) ? PLATFORM_NAMING_B : null),
      })),
      // A session carries no platform credential: the platform's reads its status (browser-readable) and nothing else; on B's host it is no one.
      {
        name: "the platform's session on the platform's host",
        host: platformOrigin,
        headers: { Cookie: platformCookie, Origin: platformOrigin },
        outcome: (r) => (r.access === "site" && r.method === "get" && r.path === "/status" ? [200] : [403]),
      },
      { name: "the platform's session on B's host", host: b.origin, headers: { Cookie: platformCookie, Origin: b.origin }, outcome: () => REFUSED },
      { name: "no credential on B's host", host: b.origin, headers: {} },
      { name: "a wrong token on B's host", host: b.origin, headers: { Authorization: "Bearer esk_wrong0123456789abcdefghijklmnopqrstuvwxyzABCD" } },
      { name: "A's token on B's host", host: b.origin, headers: { Authorization: `Bearer ${a.token}` } },
      { name: "A's session on B's host", host: b.origin, headers: { Cookie: aCookie, Origin: b.origin } },
      { name: "A's session on A's host naming B's resources", host: a.origin, headers: { Cookie: aCookie, Origin: a.origin } },
      { name: "A's token on A's host naming B's resources", host: a.origin, headers: { Authorization: `Bearer ${a.token}` } },
    ];
    const outcomes: string[] = [];
    for (const route of routes) {
      // A public route answers anyone, on any host, with no credential (and holds no site's data).
      if (route.access === "public") {
        for (const host of [platformOrigin, b.origin]) {
          const res = await call(e, `${host}/sitemap-admin${route.path}`, { method: route.method.toUpperCase() });
          expect(res.status, `${route.method.toUpperCase()} ${route.path} on ${host} with no credential (declared public)`).toBeLessThan(300);
          outcomes.push(`${route.method.toUpperCase()} ${route.path} · no credential: ${res.status}`);
        }
        continue;
      }
      for (const cred of credentials) {
        if (cred.outcome) {
          const outcome = cred.outcome(route);
          if (outcome === null) continue;
          // Allowed: on a site of its own, so that B is untouched and a DELETE or a token rotation harms no other call.
          const host = outcome === "allowed" && route.path.includes("{host}") ? new URL((await register()).origin).host : bHost;
          const res = await call(e, `${cred.host}/sitemap-admin${pathFor(route, bSync, host, b.origin)}`, request(route, cred.headers, b.origin));
          outcomes.push(`${route.method.toUpperCase()} ${route.path} · ${cred.name}: ${res.status}`);
          const message = `${route.method.toUpperCase()} ${route.path} with ${cred.name} answered ${res.status}`;
          if (outcome === "allowed") expect(res.status, message).toBeLessThan(300);
          else expect(outcome, message).toContain(res.status);
          continue;
        }
        const onOwnHost = cred.host === a.origin;
        // A site route naming nothing (A's own status, A's own regeneration) is A's own business on A's host.
        if (onOwnHost && route.access === "site" && !namesAResource(route)) continue;
        const res = await call(e, `${cred.host}/sitemap-admin${pathFor(route, bSync, bHost, b.origin)}`, request(route, cred.headers, b.origin));
        // A platform route does not exist on a tenant's host (404) whoever calls; a site route refuses what is not the caller's.
        const allowed = route.access === "platform" && onOwnHost && "Authorization" in cred.headers ? [404] : REFUSED;
        outcomes.push(`${route.method.toUpperCase()} ${route.path} · ${cred.name}: ${res.status}`);
        expect(allowed, `${route.method.toUpperCase()} ${route.path} with ${cred.name} answered ${res.status}`).toContain(res.status);
      }
    }
    // The pages beside the API (src/admin/dashboard/routes.ts `pageRoutes`, their declarations): each declares one of
    // the three; a public page answers a reader with no credential on either host, and any other refuses A's credentials on B's host.
    for (const page of pageRoutes) {
      expect(["public", "site", "platform"], `${page.method} ${page.path} declares no access`).toContain(page.access);
      const path = page.path === "/" ? "" : page.path.replace("/:root{/?}", "/");
      if (page.access === "public") {
        if (page.method !== "GET") continue; // the sign-in and sign-out forms: test/workers/break50c-matrix-gaps.test.ts, admin-auth.test.ts
        for (const host of [platformOrigin, b.origin]) {
          const res = await call(e, `${host}/sitemap-admin${path}`);
          expect(res.status, `GET ${page.path} on ${host} with no credential (declared public)`).toBeLessThan(400);
          outcomes.push(`GET ${page.path} · no credential: ${res.status}`);
        }
        continue;
      }
      for (const cred of credentials.filter((c) => c.outcome === undefined && c.host === b.origin)) {
        const res = await call(e, `${cred.host}/sitemap-admin${path}`, { method: page.method, headers: cred.headers });
        outcomes.push(`${page.method} ${page.path} · ${cred.name}: ${res.status}`);
        expect(REFUSED, `${page.method} ${page.path} with ${cred.name} answered ${res.status}`).toContain(res.status);
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
