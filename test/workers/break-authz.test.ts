/**
 * Hostile review of issue 50 "isolation" (Deliver items 1, 2, 3, 9): other orders, other
 * credentials and other paths than the project's own tests use. Each case states the claim it
 * attacks; a failing case here is a finding, not a flaky test.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_OPEN_SYNCS_PER_SITE } from "../../src/admin/syncs.ts";
import { siteEnv } from "./notify-support.ts";
import { TOKEN, auditOf, bearer, signInForm } from "./support/admin.ts";
import { registeredSite } from "./support/registered.ts";
import { call, freshOrigin } from "./support.ts";

let n = 0;
const label = (name: string): string => `${name}${++n}${Math.random().toString(36).slice(2, 7)}`;

/** A deployment whose one configured site (SITES) is the platform's host. */
function platform(): { platformOrigin: string; env: Env } {
  const platformOrigin = freshOrigin("platform");
  return { platformOrigin, env: siteEnv(platformOrigin) };
}

async function registerThroughApi(e: Env, platformOrigin: string): Promise<{ origin: string; token: string }> {
  const origin = `http://${label("tenant")}.test:8787`;
  const res = await call(e, `${platformOrigin}/sitemap-admin/sites`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...bearer },
    body: JSON.stringify({ origin }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return { origin, token: ((await res.json()) as { token: string }).token };
}

const registeredInDb = (e: Env) => registeredSite(e, label("race"));

const registryRow = (e: Env, origin: string) => e.DB.prepare("SELECT origin FROM registry_sites WHERE origin = ?1").bind(origin).first();

describe("item 2: rotating a site's token ends its sessions", () => {
  it("sign-in, rotation, then reuse of the cookie in the same deployment (same isolate, same env) is 401", async () => {
    const { platformOrigin, env: e } = platform();
    const { origin, token } = await registerThroughApi(e, platformOrigin);
    const client = "198.51.100.77";
    const own = await call(e, `${origin}/sitemap-admin/sign-in`, signInForm(token, client, { Origin: origin }));
    expect(own.status).toBe(303);
    const cookie = own.headers.get("Set-Cookie")!.split(";")[0]!;
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(200);

    const rotated = await call(e, `${platformOrigin}/sitemap-admin/sites/${new URL(origin).host}/token`, { method: "POST", headers: bearer });
    expect(rotated.status).toBe(200);
    // The same env: the isolate that served the rotation serves the stolen cookie next.
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(401);
    expect((await call(e, `${origin}/sitemap-admin/`, { headers: { Cookie: cookie } })).status).not.toBe(200);
  });

  it("the old token itself is refused at once after rotation (bearer), and at the sign-in form", async () => {
    const { platformOrigin, env: e } = platform();
    const { origin, token } = await registerThroughApi(e, platformOrigin);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await call(e, `${platformOrigin}/sitemap-admin/sites/${new URL(origin).host}/token`, { method: "POST", headers: bearer })).status).toBe(200);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401);
    const again = await call(e, `${origin}/sitemap-admin/sign-in`, signInForm(token, "198.51.100.78", { Origin: origin }));
    expect(again.status).not.toBe(303);
    expect(again.headers.get("Set-Cookie")).toBeNull();
  });
});

describe("item 2: the platform API does not exist on a tenant's host, whatever the path's spelling", () => {
  const variants = [
    "/sitemap-admin/sites",
    "/sitemap-admin/sites/",
    "//sitemap-admin/sites",
    "/sitemap-admin//sites",
    "/sitemap-admin/%73ites",
    "/sitemap-admin/%2573ites",
    "/%73itemap-admin/sites",
    "/sitemap-admin/Sites",
    "/sitemap-admin/sites?x=1",
    "/sitemap-admin/sites;x",
    "/sitemap-admin/x/../sites",
    "/sitemap-admin/sites%2F",
  ];
  it.each(variants)("POST %s with the platform bearer on a tenant's host registers nothing and is 404", async (path) => {
    const { platformOrigin, env: e } = platform();
    const { origin } = await registerThroughApi(e, platformOrigin);
    const victim = `http://${label("victim")}.test:8787`;
    const res = await call(e, `${origin}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...bearer },
      body: JSON.stringify({ origin: victim }),
    });
    expect(res.status, await res.clone().text()).toBe(404);
    expect(await registryRow(e, victim)).toBeNull();
  });

  it.each(["GET", "HEAD", "OPTIONS"])(
    "%s on the encoded, trailing-slash and plain sites path with the platform bearer on a tenant's host list nothing",
    async (method) => {
      const { platformOrigin, env: e } = platform();
      const { origin } = await registerThroughApi(e, platformOrigin);
      for (const path of ["/sitemap-admin/%73ites", "/sitemap-admin/sites/", "/sitemap-admin/sites"]) {
        const res = await call(e, `${origin}${path}`, { method, headers: bearer });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.text()).not.toContain(origin.replace("http://", ""));
      }
    },
  );

  it("a method override header does not turn a GET into a registration", async () => {
    const { platformOrigin, env: e } = platform();
    const { origin, token } = await registerThroughApi(e, platformOrigin);
    for (const header of ["X-HTTP-Method-Override", "X-Method-Override", "X-HTTP-Method"]) {
      const res = await call(e, `${origin}/sitemap-admin/sites/${new URL(origin).host}`, {
        method: "GET",
        headers: { Authorization: `Bearer ${token}`, [header]: "DELETE" },
      });
      expect([403, 404], header).toContain(res.status);
    }
    expect(await registryRow(e, origin)).not.toBeNull();
  });
});

describe("item 1: authorization before body validation", () => {
  const malformed = ["{", "[]", '{"origin": 5}', "null", "x".repeat(1000)];
  it.each(malformed)("a malformed body %# with a wrong or foreign credential is 401/403/404, never 400", async (body) => {
    const { platformOrigin, env: e } = platform();
    const { origin, token } = await registerThroughApi(e, platformOrigin);
    const cases: [string, string, Record<string, string>][] = [
      [platformOrigin, "/sitemap-admin/sites", { Authorization: "Bearer wrong-token-000000000000" }],
      [platformOrigin, "/sitemap-admin/sites", { Authorization: `Bearer ${token}` }],
      [platformOrigin, "/sitemap-admin/sites", { authorization: `bearer ${token}` }],
      [platformOrigin, "/sitemap-admin/urls", { Authorization: `Bearer ${token}` }],
      [platformOrigin, "/sitemap-admin/syncs", { Authorization: `Bearer ${token}` }],
      [origin, "/sitemap-admin/sites", { Authorization: `Bearer ${token}` }],
      [origin, "/sitemap-admin/sites", bearer],
      [origin, `/sitemap-admin/sites/${new URL(origin).host}`, bearer],
      [origin, "/sitemap-admin/syncs", { Authorization: "Bearer wrong-token-000000000000" }],
      [origin, "/sitemap-admin/syncs/nope/commit", { Authorization: "Bearer wrong-token-000000000000" }],
    ];
    for (const [host, path, headers] of cases) {
      for (const method of ["POST", "PATCH", "PUT"]) {
        const res = await call(e, `${host}${path}`, { method, headers: { "Content-Type": "application/json", ...headers }, body });
        expect([401, 403, 404, 405], `${method} ${host}${path} ${JSON.stringify(headers)}`).toContain(res.status);
      }
    }
  });
});

describe("item 3: open syncs per site are capped, also under concurrent starts", () => {
  it(`${MAX_OPEN_SYNCS_PER_SITE * 2} starts at once leave at most ${MAX_OPEN_SYNCS_PER_SITE} syncs open`, async () => {
    const e = { ...baseEnv } as Env;
    const a = await registeredInDb(e);
    const start = () =>
      call(e, `${a.origin}/sitemap-admin/syncs`, {
        method: "POST",
        headers: { Authorization: `Bearer ${a.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ sites: [a.origin] }),
      });
    const answers = await Promise.all(Array.from({ length: MAX_OPEN_SYNCS_PER_SITE * 2 }, start));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length, statuses.join(",")).toBeLessThanOrEqual(MAX_OPEN_SYNCS_PER_SITE);
    const status = (await (await call(e, `${a.origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${a.token}` } })).json()) as {
      syncs?: unknown[];
    };
    if (status.syncs !== undefined) expect(status.syncs.length).toBeLessThanOrEqual(MAX_OPEN_SYNCS_PER_SITE);
  });
});

describe("item 1: a sync's scope on another tenant's host", () => {
  it("a sync the platform token starts on B's host is 404 for A's token on A's host", async () => {
    const e = { ...baseEnv } as Env;
    const a = await registeredInDb(e);
    const b = await registeredInDb(e);
    const started = await call(e, `${b.origin}/sitemap-admin/syncs`, {
      method: "POST",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ sites: [b.origin] }),
    });
    if (started.status !== 201) {
      // The platform token is not a credential on a tenant's host: nothing to cross.
      expect([401, 403, 404]).toContain(started.status);
      return;
    }
    const { id } = (await started.json()) as { id: string };
    const read = await call(e, `${a.origin}/sitemap-admin/syncs/${id}`, { headers: { Authorization: `Bearer ${a.token}` } });
    expect(read.status).toBe(404);
  });

  it("A's token cannot start a sync whose scope spans A and B", async () => {
    const e = { ...baseEnv } as Env;
    const a = await registeredInDb(e);
    const b = await registeredInDb(e);
    const res = await call(e, `${a.origin}/sitemap-admin/syncs`, {
      method: "POST",
      headers: { Authorization: `Bearer ${a.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ sites: [a.origin, b.origin] }),
    });
    expect(res.status).not.toBe(201);
    expect(await res.text()).not.toContain(b.token);
  });
});

describe("item 2: a platform session is nothing on a tenant's host", () => {
  it("the platform host's session cookie replayed on a tenant's host is 401 for status and the dashboard", async () => {
    const { platformOrigin, env: e } = platform();
    const { origin } = await registerThroughApi(e, platformOrigin);
    const own = await call(e, `${platformOrigin}/sitemap-admin/sign-in`, signInForm(TOKEN, "198.51.100.90", { Origin: platformOrigin }));
    expect(own.status).toBe(303);
    const value = own.headers.get("Set-Cookie")!.split(";")[0]!.split("=").slice(1).join("=");
    // Both cookie names: the tenant's host is plain http on a test port, the platform's https.
    for (const name of ["__Host-sitemap_admin_session", "sitemap_admin_session"]) {
      const headers = { Cookie: `${name}=${value}` };
      expect((await call(e, `${origin}/sitemap-admin/status`, { headers })).status, name).toBe(401);
      expect([401, 404], name).toContain((await call(e, `${origin}/sitemap-admin/platform`, { headers })).status);
    }
  });
});

describe("item 9: a host whose other scheme SITES serves cannot be registered", () => {
  it("registering http:// of the platform's https:// host is refused and stores nothing", async () => {
    const { platformOrigin, env: e } = platform();
    const other = platformOrigin.replace("https://", "http://");
    for (const origin of [other, `${other}:80`, other.toUpperCase(), `${platformOrigin}:443`]) {
      const res = await call(e, `${platformOrigin}/sitemap-admin/sites`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...bearer },
        body: JSON.stringify({ origin }),
      });
      expect(res.status, origin).not.toBe(201);
    }
    expect(await registryRow(e, other)).toBeNull();
  });
});

describe("item 9: refused writes are never audit rows", () => {
  it("a tenant token's, a wrong token's and a session's refused writes on the platform's host add no audit entry", async () => {
    const { platformOrigin, env: e } = platform();
    const { token } = await registerThroughApi(e, platformOrigin);
    const before = (await auditOf(e, platformOrigin)).entries.length;
    const cookie = (await call(e, `${platformOrigin}/sitemap-admin/sign-in`, signInForm(TOKEN, "198.51.100.91", { Origin: platformOrigin }))).headers
      .get("Set-Cookie")!
      .split(";")[0]!;
    const attempts: [string, Record<string, string>][] = [
      ["/sitemap-admin/urls", { Authorization: `Bearer ${token}` }],
      ["/sitemap-admin/sites", { Authorization: `Bearer ${token}` }],
      ["/sitemap-admin/urls", { Cookie: cookie }],
      ["/sitemap-admin/sites", { Cookie: cookie }],
      ["/sitemap-admin/syncs/nope", bearer],
    ];
    for (const [path, headers] of attempts) {
      const method = path.endsWith("nope") ? "DELETE" : path.endsWith("urls") ? "PUT" : "POST";
      const res = await call(e, `${platformOrigin}${path}`, { method, headers: { "Content-Type": "application/json", ...headers }, body: "[]" });
      expect([401, 403, 404], `${method} ${path}`).toContain(res.status);
    }
    const after = await auditOf(e, platformOrigin);
    expect(after.entries.filter((r) => [401, 403, 404].includes(r.status))).toEqual([]);
    expect(after.entries.length).toBe(before);
  });
});
