/**
 * Hostile review of issue 50, Deliver items 1 and 2: what the generated authorization matrix
 * (test/workers/authorization-matrix.test.ts) does not reach. It reads the OpenAPI document, so it
 * sees the API routes only, skips the routes declared `public`, and builds its sessions on their own
 * hosts. Here: whether the `public` declaration is what the route does, whether every route served
 * under /sitemap-admin carries a declaration at all (the platform page is one that does not), the
 * platform page against every credential kind on a tenant's host, and the platform's token typed
 * into a tenant's sign-in form. A failing case here is a finding, not a flaky test.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../../src/admin/app.ts";
import { clearJwksCache } from "../../src/admin/auth/access.ts";
import { adminPages, pageRoutes } from "../../src/admin/dashboard/routes.ts";
import { siteEnv } from "./notify-support.ts";
import { accessKey } from "./support/access-key.ts";
import { TOKEN, bearer, signIn, signInForm } from "./support/admin.ts";
import { call } from "./support.ts";

const label = () => Math.random().toString(36).slice(2, 9);
const REFUSED = [401, 403, 404];
const TEAM = "https://team-gaps.cloudflareaccess.com";
const AUD = "aud-gaps-0123456789";
const CLIENT = "fedcba9876543210fedcba9876543210.access";

afterEach(() => {
  vi.restoreAllMocks();
  clearJwksCache();
});

/** Access's headers for a service token and for a person, signed by the team's key (its JWKS faked at the fetch boundary). */
async function accessHeaders(): Promise<{ service: Record<string, string>; person: Record<string, string> }> {
  const key = await accessKey("gaps");
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    const url = input instanceof Request ? input.url : String(input);
    return url === `${TEAM}/cdn-cgi/access/certs` ? Response.json({ keys: [key.public] }) : new Response("not found", { status: 404 });
  });
  const s = Math.floor(Date.now() / 1000);
  const base = { aud: [AUD], iss: TEAM, type: "app", iat: s, nbf: s, exp: s + 3600 };
  return {
    service: { "Cf-Access-Jwt-Assertion": await key.jwt({ ...base, sub: "", common_name: CLIENT }) },
    person: { "Cf-Access-Jwt-Assertion": await key.jwt({ ...base, sub: "person-1", email: "staff@platform.example" }) },
  };
}

/** A platform (its one SITES origin, plain http on a test port like the tenants') with tenants A and B registered through its API. */
async function deployment() {
  const platformOrigin = `http://platform-${label()}.test:8787`;
  const e = siteEnv(platformOrigin, { ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: AUD, ACCESS_SERVICE_TOKEN_IDS: CLIENT });
  const register = async () => {
    const origin = `http://${label()}.test:8787`;
    const res = await call(e, `${platformOrigin}/sitemap-admin/sites`, {
      method: "POST",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ origin }),
    });
    expect(res.status).toBe(201);
    return { origin, token: ((await res.json()) as { token: string }).token };
  };
  return { platformOrigin, e, a: await register(), b: await register() };
}

/** The route table as the OpenAPI document states it: `method path` (under /sitemap-admin) and its declaration. */
async function routeTable(e: Env, platformOrigin: string): Promise<{ method: string; path: string; access: string | undefined }[]> {
  const doc = (await (await call(e, `${platformOrigin}/sitemap-admin/openapi.json`, { headers: bearer })).json()) as {
    paths: Record<string, Record<string, { "x-access"?: string }>>;
  };
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ method, path, access: operation["x-access"] })),
  );
}

describe("item 1: a route declared public is what its declaration says", () => {
  it("answers a caller with no credential, on the platform's host and on a tenant's", async () => {
    const { platformOrigin, e, b } = await deployment();
    const publicRoutes = (await routeTable(e, platformOrigin)).filter((r) => r.access === "public");
    expect(publicRoutes.length).toBeGreaterThan(0);
    for (const route of publicRoutes) {
      for (const host of [platformOrigin, b.origin]) {
        const res = await call(e, `${host}${route.path}`, { method: route.method.toUpperCase() });
        expect(res.status, `${route.method.toUpperCase()} ${route.path} on ${host} with no credential (declared public)`).toBe(200);
      }
    }
  });
});

describe("item 1: every route served under /sitemap-admin carries its declaration", () => {
  it("the pages beside the API (dashboard, platform page, sign-in) are in the declared route table too", async () => {
    const { platformOrigin, e } = await deployment();
    // The pages are HTML, not in the OpenAPI document: their declarations are src/admin/dashboard/routes.ts `pageRoutes`.
    const spelled = (method: string, path: string) => `${method.toLowerCase()} /sitemap-admin${path === "/" ? "" : path.replace(/:(\w+)/g, "{$1}")}`;
    const declared = new Set([
      ...(await routeTable(e, platformOrigin)).filter((r) => r.access !== undefined).map((r) => `${r.method} ${r.path}`),
      ...pageRoutes.filter((r) => ["public", "site", "platform"].includes(r.access)).map((r) => spelled(r.method, r.path)),
    ]);
    const served = [...admin.routes, ...adminPages.routes].filter((r) => r.method !== "ALL").map((r) => spelled(r.method, r.path));
    expect(served).toContain("get /sitemap-admin/platform");
    expect([...new Set(served)].filter((route) => !declared.has(route))).toEqual([]);
  });
});

describe("item 2: the platform page exists on the platform's hosts only, for the platform's credential", () => {
  it("every credential kind on a tenant's host is refused it; the platform's session on its own host reads it", async () => {
    const { platformOrigin, e, a, b } = await deployment();
    const { service, person } = await accessHeaders();
    const platformCookie = await signIn(e, platformOrigin);
    const bSignedIn = await call(e, `${b.origin}/sitemap-admin/sign-in`, signInForm(b.token, "198.51.100.61", { Origin: b.origin }));
    expect(bSignedIn.status).toBe(303);
    const bCookie = bSignedIn.headers.get("Set-Cookie")!.split(";")[0]!;
    const onB: [string, Record<string, string>][] = [
      ["no credential", {}],
      ["the platform token", bearer],
      ["the platform's Access service token", service],
      ["a person's Access JWT", person],
      ["the platform's session replayed", { Cookie: platformCookie }],
      ["A's token", { Authorization: `Bearer ${a.token}` }],
      ["B's own token", { Authorization: `Bearer ${b.token}` }],
      ["B's own session", { Cookie: bCookie }],
    ];
    const bHost = new URL(b.origin).host;
    for (const path of ["/sitemap-admin/platform", "/sitemap-admin/platform/", "/sitemap-admin/%70latform", "/sitemap-admin//platform"]) {
      for (const [name, headers] of onB) {
        const res = await call(e, `${b.origin}${path}`, { headers });
        const body = await res.text();
        expect(REFUSED, `GET ${path} on B's host with ${name}: ${res.status}`).toContain(res.status);
        expect(body, `GET ${path} on B's host with ${name}`).not.toContain(new URL(a.origin).host);
      }
    }
    // A tenant's token on the platform's host reads no page of tenants either.
    expect(REFUSED).toContain((await call(e, `${platformOrigin}/sitemap-admin/platform`, { headers: { Authorization: `Bearer ${a.token}` } })).status);
    // The page is there for the platform: its session on its own host lists B.
    const own = await call(e, `${platformOrigin}/sitemap-admin/platform`, { headers: { Cookie: platformCookie } });
    expect(own.status).toBe(200);
    expect(await own.text()).toContain(bHost);
  });
});

describe("item 2: the platform's token typed into a tenant's sign-in form", () => {
  it("makes no session there, from any spelling of the form's path, and B's own token still does", async () => {
    const { e, b } = await deployment();
    for (const path of ["/sitemap-admin/sign-in", "/sitemap-admin/%73ign-in", "/sitemap-admin/sign-in?next=/sitemap-admin/platform"]) {
      for (const token of [TOKEN, ` ${TOKEN} `, `Bearer ${TOKEN}`]) {
        const res = await call(e, `${b.origin}${path}`, signInForm(token, `198.51.100.${Math.floor(Math.random() * 200) + 20}`, { Origin: b.origin }));
        expect(res.status, `${path} with ${JSON.stringify(token.replace(TOKEN, "ADMIN_TOKEN"))}`).not.toBe(303);
        expect(res.headers.get("Set-Cookie"), path).toBeNull();
      }
    }
    const own = await call(e, `${b.origin}/sitemap-admin/sign-in`, signInForm(b.token, "198.51.100.250", { Origin: b.origin }));
    expect(own.status).toBe(303);
  });
});
