/**
 * Issue 50: no way across tenants, checked over the route table. Every route of the admin's OpenAPI
 * document (read at run time, so a route added to src/admin/routes.ts is called here without anyone
 * listing it) and every page beside it (src/admin/dashboard/routes.ts `pageRoutes`) is called with every
 * credential kind, on every host it could be sent to: none, a wrong token, the platform token and an
 * Access service token (on the platform's host and on B's), A's token (on A's, B's and the platform's
 * host, naming B's resources on its own: B's sync by id, B's host, B's locs and origin in the body or
 * query), and every session there can be, generated: each token with a sign-in form (the platform's,
 * A's, B's) typed into each host's form, which must make one only for the host's own credential, each
 * session made then sent to each host. What each must get follows from the route's declaration and who
 * holds the credential (`expected`): a tenant's credential against another tenant is refused (401, 403
 * or 404, never a 422 that reads B's things as merely invalid); the platform credential reaches the
 * platform routes on the platform's host only (each call on a site registered for it); a session reads
 * what a browser may read on its own host only, a platform route only on the platform's. Afterwards B's
 * sync is still open with what it had received, B's records are all there and B's token and settings
 * are unchanged.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearJwksCache } from "../../src/admin/auth/access.ts";
import { BROWSER_READABLE } from "../../src/admin/auth/paths.ts";
import { pageRoutes } from "../../src/admin/dashboard/routes.ts";
import { siteEnv } from "./notify-support.ts";
import { accessKey } from "./support/access-key.ts";
import { TOKEN, bearer, signInForm } from "./support/admin.ts";
import { call } from "./support.ts";

interface Route {
  method: string;
  path: string;
  /** Who may call it: the route's one declaration (src/admin/routes.ts `x-access`, carried by the OpenAPI document; a page's in `pageRoutes`). */
  access: string | undefined;
  /** A page beside the API (src/admin/dashboard/routes.ts), not an API route. */
  page: boolean;
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

/** The hosts a credential is sent to: the platform's (its SITES origin), tenant A's and tenant B's. */
type HostName = "platform" | "A" | "B";
const HOST_NAMES: readonly HostName[] = ["platform", "A", "B"];

/** Who holds a credential: no one, the platform (its token, its Access service token), a site (its token), or a browser session signed in at a host's form. */
type Holder = { kind: "nobody" } | { kind: "platform" } | { kind: "site"; of: HostName } | { kind: "session"; signedAt: HostName };

interface Credential {
  name: string;
  /** The host it is sent to. */
  at: HostName;
  headers: Record<string, string>;
  holder: Holder;
}

/**
 * What a credential sent to a host must get from a route, from the route's declaration and the rules of
 * docs/tenants.md "Tokens": the platform credential reaches the platform routes on the platform's host only
 * (404 on a tenant's), reads any site's routes and, on its own host, names nothing of B's; a site's token is its
 * own site's on its own host, where the platform routes do not exist, and no one's elsewhere; a session is its
 * host's only, reads only what a browser may read (BROWSER_READABLE), and a platform route only on the platform's
 * host. null: not called (a write that would change B, or a site's own business on its own host).
 */
function expected(holder: Holder, at: HostName, route: Route): Outcome {
  switch (holder.kind) {
    case "nobody":
      return REFUSED;
    case "platform":
      if (route.access === "platform") return at === "platform" ? "allowed" : [404];
      if (at === "platform") return namesAResource(route) ? PLATFORM_NAMING_B : route.page ? "allowed" : null;
      return at === "B" && route.method === "get" ? "allowed" : null;
    case "site":
      if (holder.of !== at) return REFUSED;
      if (route.access === "platform") return [404];
      return namesAResource(route) ? REFUSED : null;
    case "session": {
      if (holder.signedAt !== at) return REFUSED;
      const readable = route.method === "get" && BROWSER_READABLE.includes(`/sitemap-admin${route.path}`);
      return readable && (route.access === "site" || at === "platform") ? "allowed" : REFUSED;
    }
  }
}

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

    const hosts: Record<HostName, string> = { platform: platformOrigin, A: a.origin, B: b.origin };

    // Sessions, generated: every token with a sign-in form (the platform's, A's, B's) typed into every host's form. The
    // form makes a session only for the host's own credential (the platform token on the platform's host, a site's own
    // token on its host); any session made elsewhere would be a way across, so its row fails here. Each session made
    // is then a credential on every host.
    const outcomes: string[] = [];
    const signers: { name: string; token: string; own: HostName }[] = [
      { name: "the platform token", token: TOKEN, own: "platform" },
      { name: "A's token", token: a.token, own: "A" },
      { name: "B's token", token: b.token, own: "B" },
    ];
    const sessions: { name: string; signedAt: HostName; cookie: string }[] = [];
    let client = 0;
    for (const signer of signers) {
      for (const at of HOST_NAMES) {
        const res = await call(e, `${hosts[at]}/sitemap-admin/sign-in`, signInForm(signer.token, `198.51.100.${++client}`, { Origin: hosts[at] }));
        const row = `POST /sign-in · ${signer.name} at ${at}'s form: ${res.status}`;
        outcomes.push(row);
        if (signer.own === at) expect(res.status, row).toBe(303);
        else expect(res.headers.get("Set-Cookie"), `${row} made a session`).toBeNull();
        const cookie = res.status === 303 ? res.headers.get("Set-Cookie")?.split(";")[0] : undefined;
        if (cookie) sessions.push({ name: `the session of ${signer.name} signed in at ${at}`, signedAt: at, cookie });
      }
    }
    expect(sessions.map((x) => x.signedAt).sort()).toEqual(["A", "B", "platform"]);

    // The route table, as the OpenAPI document derived from src/admin/routes.ts states it.
    const doc = (await (await call(e, `${platformOrigin}/sitemap-admin/openapi.json`, { headers: bearer })).json()) as {
      paths: Record<string, Record<string, { "x-access"?: string }>>;
    };
    // The document names each path as served (under /sitemap-admin); a route here is its path below that, as the calls add it back.
    const paths = Object.keys(doc.paths);
    expect(paths.filter((path) => !path.startsWith("/sitemap-admin/"))).toEqual([]);
    const apiRoutes: Route[] = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method,
        path: path.slice("/sitemap-admin".length),
        access: operation["x-access"],
        page: false,
      })),
    );
    expect(apiRoutes.length).toBeGreaterThanOrEqual(17);
    // The pages beside the API (src/admin/dashboard/routes.ts `pageRoutes`, their declarations), in the same table; the
    // sign-in form is called above, the sign-out form ends a session (test/workers/admin-auth.test.ts).
    const pages: Route[] = pageRoutes
      .filter((page) => page.method === "GET")
      .map((page) => ({ method: "get", path: page.path === "/" ? "" : page.path.replace("/:root{/?}", "/"), access: page.access, page: true }));
    expect(pages.map((page) => page.path)).toContain("/platform");
    const routes = [...apiRoutes, ...pages];
    // A route added without its declaration fails here.
    for (const route of routes) expect(["public", "site", "platform"], `${route.method} ${route.path} declares no access`).toContain(route.access);
    for (const page of pageRoutes) expect(["public", "site", "platform"], `${page.method} ${page.path} declares no access`).toContain(page.access);

    // Every credential kind, each on the hosts it could be sent to, with who holds it: its outcome on a route follows
    // from that and the route's declaration (`expected`), never from a list of routes.
    const credentials: Credential[] = [
      { name: "the platform token", at: "platform", headers: bearer, holder: { kind: "platform" } },
      { name: "the platform token", at: "B", headers: bearer, holder: { kind: "platform" } },
      { name: "the platform's Access service token", at: "platform", headers: service, holder: { kind: "platform" } },
      { name: "the platform's Access service token", at: "B", headers: service, holder: { kind: "platform" } },
      { name: "no credential", at: "B", headers: {}, holder: { kind: "nobody" } },
      {
        name: "a wrong token",
        at: "B",
        headers: { Authorization: "Bearer esk_wrong0123456789abcdefghijklmnopqrstuvwxyzABCD" },
        holder: { kind: "nobody" },
      },
      ...HOST_NAMES.map(
        (at): Credential => ({ name: "A's token", at, headers: { Authorization: `Bearer ${a.token}` }, holder: { kind: "site", of: "A" } }),
      ),
      ...sessions.flatMap((x) =>
        HOST_NAMES.map(
          (at): Credential => ({ name: x.name, at, headers: { Cookie: x.cookie, Origin: hosts[at] }, holder: { kind: "session", signedAt: x.signedAt } }),
        ),
      ),
    ];
    for (const route of routes) {
      const name = `${route.method.toUpperCase()} ${route.path || "(base)"}`;
      // A public route answers anyone, on any host, with no credential (and holds no site's data).
      if (route.access === "public") {
        for (const host of [platformOrigin, b.origin]) {
          const res = await call(e, `${host}/sitemap-admin${route.path}`, { method: route.method.toUpperCase() });
          expect(res.status, `${name} on ${host} with no credential (declared public)`).toBeLessThan(400);
          outcomes.push(`${name} · no credential: ${res.status}`);
        }
        continue;
      }
      for (const cred of credentials) {
        const outcome = expected(cred.holder, cred.at, route);
        if (outcome === null) continue;
        // Allowed: on a site of its own, so that B is untouched and a DELETE or a token rotation harms no other call.
        const host = outcome === "allowed" && route.path.includes("{host}") ? new URL((await register()).origin).host : bHost;
        const res = await call(e, `${hosts[cred.at]}/sitemap-admin${pathFor(route, bSync, host, b.origin)}`, request(route, cred.headers, b.origin));
        const row = `${name} · ${cred.name} on ${cred.at}'s host: ${res.status}`;
        outcomes.push(row);
        if (outcome === "allowed") expect(res.status, row).toBeLessThan(300);
        else expect(outcome, row).toContain(res.status);
      }
    }
    expect(outcomes.length).toBeGreaterThan(200);

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
