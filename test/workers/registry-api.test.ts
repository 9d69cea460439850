/**
 * Issue 44 "tenants": the platform API (docs/tenants.md "The platform API") through the Worker's
 * entry: registering, listing, reading, updating, rotating the token of and deleting sites kept in
 * the registry (D1), for the platform credential alone.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { clearJwksCache } from "../../src/admin/auth/access.ts";
import { tokenHash } from "../../src/registry/token.ts";
import { siteEnv } from "./notify-support.ts";
import { accessKey } from "./support/access-key.ts";
import { TOKEN, auditOf, bearer, refusedBy, signIn, signInForm } from "./support/admin.ts";
import { call, freshOrigin } from "./support.ts";

interface Site {
  origin: string;
  host: string;
  settings: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}
interface ApiError {
  error: string;
  message: string;
  problems?: { setting: string; rule: string }[];
}

/** A deployment whose one configured site (SITES) is where the platform calls the API. */
function platform(vars: Record<string, string> = {}): { platformOrigin: string; env: Env } {
  const platformOrigin = freshOrigin("platform");
  return { platformOrigin, env: siteEnv(platformOrigin, vars) };
}

const sendJson = (method: string, body: unknown, headers: Record<string, string> = bearer): RequestInit => ({
  method,
  headers: { "Content-Type": "application/json", ...headers },
  body: JSON.stringify(body),
});

async function create(e: Env, at: string, body: unknown, headers: Record<string, string> = bearer): Promise<Response> {
  return call(e, `${at}/sitemap-admin/sites`, sendJson("POST", body, headers));
}

async function created(e: Env, at: string, body: unknown): Promise<{ site: Site; token: string }> {
  const res = await create(e, at, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { site: Site; token: string };
}

const row = (origin: string) => env.DB.prepare("SELECT * FROM registry_sites WHERE origin = ?1").bind(origin).first<Record<string, unknown>>();

let labels = 0;
/** A label no other test's origins contain. */
const uniqueLabel = (name: string): string => `${name}${++labels}${Math.random().toString(36).slice(2, 7)}`;

afterEach(() => {
  vi.restoreAllMocks();
  clearJwksCache();
});

describe("POST /sitemap-admin/sites", () => {
  it("registers a site: 201 with its token shown once; D1 keeps only the token's hash", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `https://${uniqueLabel("shop")}.example`;
    const body = await created(e, platformOrigin, { origin, settings: { DEFAULT_SECTION: "pages" } });
    expect(body.token).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    expect(body.site).toMatchObject({ origin, host: new URL(origin).host, settings: { DEFAULT_SECTION: "pages" } });
    expect(Date.parse(body.site.createdAt)).toBeGreaterThan(0);
    expect(body.site.updatedAt).toBe(body.site.createdAt);
    expect(JSON.stringify(body.site)).not.toContain(body.token);

    const stored = await row(origin);
    expect(stored).not.toBeNull();
    expect(stored!["token_hash"]).toBe(await tokenHash(body.token));
    expect(stored!["token_hash"]).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(body.token);
    expect(JSON.stringify(stored)).not.toContain(body.token.slice(4));
    expect(stored!["deleted_at"]).toBeNull();
  });

  it("a new site serves and takes writes at once in the isolate that registered it; the 201 says when everywhere", async () => {
    const { platformOrigin, env: e } = platform({ MANIFEST_CACHE_TTL: "60" });
    // The isolate's list of sites is read (and fresh) before the site exists.
    expect((await call(e, `http://${uniqueLabel("nobody")}.test:8787/sitemap.xml`)).status).toBe(404);
    const origin = `http://${uniqueLabel("t")}.test:8787`;
    const res = await create(e, platformOrigin, { origin });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { site: Site; token: string; servesEverywhereBy: string };
    expect(Date.parse(body.servesEverywhereBy) - Date.parse(body.site.createdAt)).toBe(60_000);
    const siteAuth = { Authorization: `Bearer ${body.token}` };
    const put = await call(e, `${origin}/sitemap-admin/urls`, sendJson("PUT", [{ loc: `${origin}/a` }], siteAuth));
    expect(put.status, await put.clone().text()).toBe(200);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: siteAuth })).status).toBe(200);
  });

  it("signs in on a plain-http .test host with a cookie a browser keeps there (no __Host- prefix, no Secure)", async () => {
    const local = `http://${uniqueLabel("p")}.test:8787`;
    const e = siteEnv(local);
    const signedIn = await call(e, `${local}/sitemap-admin/sign-in`, signInForm(TOKEN, "198.51.100.7", { Origin: local }));
    expect(signedIn.status).toBe(303);
    const setCookie = signedIn.headers.get("Set-Cookie")!;
    expect(setCookie).toMatch(/^sitemap_admin_session=/);
    expect(setCookie.split("; ")).not.toContain("Secure");
    const dashboard = await call(e, `${local}/sitemap-admin/`, { headers: { Cookie: setCookie.split(";")[0]! } });
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).not.toContain('name="token"');
  });

  it("normalises the origin as URL.origin does, and takes http for local hosts (the issue's http://t1.test:8787)", async () => {
    const { platformOrigin, env: e } = platform();
    const label = uniqueLabel("t");
    for (const [given, origin] of [
      [`http://${label}.test:8787`, `http://${label}.test:8787`],
      [`HTTPS://${label.toUpperCase()}.Example:443/`, `https://${label}.example`],
      [`http://${label}.localhost:8787`, `http://${label}.localhost:8787`],
      [`http://localhost:${10_000 + labels}`, `http://localhost:${10_000 + labels}`],
      [`http://127.0.0.1:${10_000 + labels}`, `http://127.0.0.1:${10_000 + labels}`],
    ] as const) {
      expect((await created(e, platformOrigin, { origin: given })).site.origin).toBe(origin);
    }
  });

  it("refuses a duplicate, the other scheme of a registered host, and an origin SITES configures (409)", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `http://${uniqueLabel("dup")}.test:8787`;
    await created(e, platformOrigin, { origin });
    const again = await create(e, platformOrigin, { origin });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: "site_exists" });

    const twin = await create(e, platformOrigin, { origin: origin.replace("http:", "https:") });
    expect(twin.status).toBe(409);
    expect(((await twin.json()) as ApiError).message).toContain("same host");

    const configured = await create(e, platformOrigin, { origin: platformOrigin });
    expect(configured.status).toBe(409);
    const error = (await configured.json()) as ApiError;
    expect(error.error).toBe("site_exists");
    expect(error.message).toContain("SITES");
    expect(error.message).toContain("the variables win");
    expect(await row(platformOrigin)).toBeNull();

    // The other scheme of a host SITES serves: refused too (a host names one site).
    const local = `http://${uniqueLabel("plat")}.test:8787`;
    const other = local.replace("http:", "https:");
    const otherScheme = await create(siteEnv(local), local, { origin: other });
    expect(otherScheme.status).toBe(409);
    expect(((await otherScheme.json()) as ApiError).message).toContain("SITES");
    expect(await row(other)).toBeNull();
  });

  it("refuses what is not exactly an https origin (400 invalid_origin), without echoing it", async () => {
    const { platformOrigin, env: e } = platform();
    for (const origin of [
      "https://shop.example/path",
      "https://shop.example/?q=1",
      "https://shop.example#top",
      "https://user:secret-pw@shop.example",
      "http://example.com",
      "http://shop.example:8787",
      "ftp://shop.example",
      "shop.example",
      "",
    ]) {
      const res = await create(e, platformOrigin, { origin });
      expect(res.status, origin).toBe(400);
      const body = (await res.json()) as ApiError;
      expect(body.error, origin).toBe(origin === "" ? "invalid_body" : "invalid_origin");
      expect(body.message).not.toContain("secret-pw");
    }
    const http = (await (await create(e, platformOrigin, { origin: "http://example.com" })).json()) as ApiError;
    expect(http.message).toContain("https");
  });

  it("refuses bad settings (400 invalid_settings), naming each setting and its rule, never its value", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `https://${uniqueLabel("settings")}.example`;
    const refused = async (settings: Record<string, string>, setting: string) => {
      const res = await create(e, platformOrigin, { origin, settings });
      expect(res.status, setting).toBe(400);
      const body = (await res.json()) as ApiError;
      expect(body.error).toBe("invalid_settings");
      expect(body.problems?.map((p) => p.setting)).toContain(setting);
      expect(body.message).toContain(setting);
      for (const value of Object.values(settings)) if (value.length > 3) expect(JSON.stringify(body)).not.toContain(value);
    };
    await refused({ NOT_A_SETTING_XYZ: "on" }, "NOT_A_SETTING_XYZ");
    await refused({ ADMIN_TOKEN: "platform-takeover-0123456789" }, "ADMIN_TOKEN");
    await refused({ MAX_URLS_PER_SHARD: "0" }, "MAX_URLS_PER_SHARD");
    await refused({ DATABASE: "NOPE_NOT_BOUND" }, "DATABASE");
    await refused({ INDEXNOW_KEY: "not a key, secret!" }, "INDEXNOW_KEY");
    // Every bad setting at once is named, not only the first (core and feature variables alike).
    const all = {
      NOT_A_SETTING_XYZ: "on",
      MAX_URLS_PER_SHARD: "0",
      MAX_BYTES_PER_SHARD: "tiny",
      FEED_SIZE: "-3",
      INDEXNOW_KEY: "not a key, secret!",
      DATABASE: "NOPE_NOT_BOUND",
    };
    const res = await create(e, platformOrigin, { origin, settings: all });
    expect(res.status).toBe(400);
    const body = (await res.json()) as ApiError;
    expect(new Set(body.problems?.map((p) => p.setting))).toEqual(new Set(Object.keys(all)));
    for (const name of Object.keys(all)) expect(body.message).toContain(name);
    expect(await row(origin)).toBeNull();
    // A database bound to this Worker is taken.
    expect((await created(e, platformOrigin, { origin, settings: { DATABASE: "SITE_B_DB" } })).site.settings).toEqual({ DATABASE: "SITE_B_DB" });
  });

  it("answers a body that is not JSON, or breaks the schema, with a JSON 400 invalid_body (415 when not sent as JSON)", async () => {
    const { platformOrigin, env: e } = platform();
    const url = `${platformOrigin}/sitemap-admin/sites`;
    const plain = await call(e, url, { method: "POST", headers: { ...bearer, "Content-Type": "text/plain" }, body: "https://x.example" });
    expect(plain.status).toBe(415);
    expect(await plain.json()).toMatchObject({ error: "unsupported_media_type" });
    for (const init of [
      { method: "POST", headers: { ...bearer, "Content-Type": "application/json" }, body: "{not json" },
      { method: "POST", headers: bearer },
      sendJson("POST", { origin: "https://extra.example", token: "mine" }),
      sendJson("POST", { origin: "https://nums.example", settings: { DEFAULT_SECTION: 5 } }),
    ]) {
      const res = await call(e, url, init);
      expect(res.status).toBe(400);
      expect(res.headers.get("Content-Type")).toContain("application/json");
      expect(await res.json()).toMatchObject({ error: "invalid_body" });
    }
  });
});

describe("GET /sitemap-admin/sites", () => {
  it("pages 120 sites 50 at a time by origin (3 pages, none twice), and filters by `contains`", async () => {
    const { platformOrigin, env: e } = platform();
    const label = uniqueLabel("many");
    const origins = Array.from({ length: 120 }, (_, i) => `https://${label}-${String(i).padStart(3, "0")}.example`);
    const now = Date.now();
    // Registered straight into D1 (the API registers one at a time; the paging is what is tested here).
    const registry = new D1SiteRegistry(env.DB);
    for (const origin of origins) {
      expect(
        await registry.create({ origin, settings: {}, tokenHash: await tokenHash(`${origin}-token`), createdAt: now, updatedAt: now, deletedAt: null }),
      ).toBe(true);
    }
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let after: string | null = null;
    do {
      const query = new URLSearchParams({ limit: "50", contains: label, ...(after ? { after } : {}) });
      const res = await call(e, `${platformOrigin}/sitemap-admin/sites?${query}`, { headers: bearer });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { sites: Site[]; next: string | null };
      pageSizes.push(page.sites.length);
      seen.push(...page.sites.map((s) => s.origin));
      for (const s of page.sites) expect(Object.keys(s).sort()).toEqual(["createdAt", "host", "origin", "settings", "updatedAt"]);
      after = page.next;
    } while (after !== null && pageSizes.length < 10);
    expect(pageSizes).toEqual([50, 50, 20]);
    expect(seen).toEqual(origins);
    expect(new Set(seen).size).toBe(120);

    // `contains` narrows (and is matched against the lowercase origin); the default page is 50.
    const narrow = (await (await call(e, `${platformOrigin}/sitemap-admin/sites?contains=${label.toUpperCase()}-11`, { headers: bearer })).json()) as {
      sites: Site[];
      next: string | null;
    };
    expect(narrow.sites.map((s) => s.origin)).toEqual(origins.slice(110, 120));
    expect(narrow.next).toBeNull();
    const first = (await (await call(e, `${platformOrigin}/sitemap-admin/sites?contains=${label}`, { headers: bearer })).json()) as {
      sites: Site[];
      next: string;
    };
    expect(first.sites).toHaveLength(50);
    expect(first.next).toBe(origins[49]);
    // The sites SITES configures are not listed.
    const all = (await (await call(e, `${platformOrigin}/sitemap-admin/sites?contains=platform`, { headers: bearer })).json()) as { sites: Site[] };
    expect(all.sites.map((s) => s.origin)).not.toContain(platformOrigin);
  });

  it("refuses a limit outside 1..200 (400 invalid_query)", async () => {
    const { platformOrigin, env: e } = platform();
    for (const limit of ["0", "201", "ten", "1.5"]) {
      const res = await call(e, `${platformOrigin}/sitemap-admin/sites?limit=${limit}`, { headers: bearer });
      expect(res.status, limit).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_query" });
    }
    expect((await call(e, `${platformOrigin}/sitemap-admin/sites?limit=200`, { headers: bearer })).status).toBe(200);
  });
});

describe("one site: read, update, rotate, delete", () => {
  it("GET by host, PATCH replaces the settings whole, POST …/token rotates the hash", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `http://${uniqueLabel("one")}.test:8787`;
    const host = new URL(origin).host;
    const { site, token } = await created(e, platformOrigin, { origin, settings: { DEFAULT_SECTION: "pages", FEED_SIZE: "20" } });
    const url = `${platformOrigin}/sitemap-admin/sites/${host}`;

    const read = await call(e, url, { headers: bearer });
    expect(read.status).toBe(200);
    const got = (await read.json()) as Site;
    expect(got).toEqual(site);
    expect(JSON.stringify(got)).not.toMatch(/token|hash/i);
    expect((await call(e, `${platformOrigin}/sitemap-admin/sites/nobody.test:8787`, { headers: bearer })).status).toBe(404);

    const patched = await call(e, url, sendJson("PATCH", { settings: { MAX_URLS_PER_SHARD: "1000" } }));
    expect(patched.status).toBe(200);
    const updated = (await patched.json()) as Site;
    expect(updated.settings).toEqual({ MAX_URLS_PER_SHARD: "1000" });
    expect(updated.createdAt).toBe(site.createdAt);
    expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(site.updatedAt));
    const bad = await call(e, url, sendJson("PATCH", { settings: { MAX_URLS_PER_SHARD: "0" } }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ApiError).problems?.map((p) => p.setting)).toEqual(["MAX_URLS_PER_SHARD"]);
    expect(((await (await call(e, url, { headers: bearer })).json()) as Site).settings).toEqual({ MAX_URLS_PER_SHARD: "1000" });

    const before = (await row(origin))!["token_hash"];
    const rotated = await call(e, `${url}/token`, { method: "POST", headers: bearer });
    expect(rotated.status).toBe(200);
    const { token: fresh } = (await rotated.json()) as { token: string };
    expect(fresh).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    expect(fresh).not.toBe(token);
    const after = (await row(origin))!["token_hash"];
    expect(after).not.toBe(before);
    expect(after).toBe(await tokenHash(fresh));
    const registry = new D1SiteRegistry(env.DB);
    expect(await registry.byTokenHash(await tokenHash(token))).toBeNull();
    expect(await registry.byTokenHash(await tokenHash(fresh))).toBe(origin);
  });

  it("DELETE marks the site deleted (202): GET, PATCH, rotation and DELETE are 404 after, the purge lists it, registering it again waits", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `https://${uniqueLabel("gone")}.example`;
    const { token } = await created(e, platformOrigin, { origin });
    const url = `${platformOrigin}/sitemap-admin/sites/${new URL(origin).host}`;

    const deleted = await call(e, url, { method: "DELETE", headers: bearer });
    expect(deleted.status).toBe(202);
    expect(await deleted.json()).toEqual({ deleted: origin, purge: "queued" });

    expect((await call(e, url, { headers: bearer })).status).toBe(404);
    expect((await call(e, url, sendJson("PATCH", { settings: {} }))).status).toBe(404);
    expect((await call(e, `${url}/token`, { method: "POST", headers: bearer })).status).toBe(404);
    expect((await call(e, url, { method: "DELETE", headers: bearer })).status).toBe(404);

    const registry = new D1SiteRegistry(env.DB);
    expect(await registry.deleting(1000)).toContain(origin);
    expect((await registry.live()).map((s) => s.origin)).not.toContain(origin);
    expect(await registry.byTokenHash(await tokenHash(token))).toBeNull();
    const listed = (await (await call(e, `${platformOrigin}/sitemap-admin/sites?contains=${new URL(origin).hostname}`, { headers: bearer })).json()) as {
      sites: Site[];
    };
    expect(listed.sites).toEqual([]);

    const again = await create(e, platformOrigin, { origin });
    expect(again.status).toBe(409);
    expect(((await again.json()) as ApiError).message).toContain("being deleted");
    // Once the purge removed its row, it can be registered again.
    await registry.remove(origin);
    expect(await registry.get(origin)).toBeNull();
    await created(e, platformOrigin, { origin });
  });
});

describe("who may call", () => {
  it("a browser session neither reads nor writes the registry (403)", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `https://${uniqueLabel("cookie")}.example`;
    await created(e, platformOrigin, { origin });
    const cookie = { Cookie: await signIn(e, platformOrigin) };
    const url = `${platformOrigin}/sitemap-admin/sites`;
    const host = new URL(origin).host;
    for (const [what, res] of [
      ["list", await call(e, url, { headers: cookie })],
      ["read", await call(e, `${url}/${host}`, { headers: cookie })],
      ["create", await create(e, platformOrigin, { origin: `https://${uniqueLabel("x")}.example` }, cookie)],
      ["patch", await call(e, `${url}/${host}`, sendJson("PATCH", { settings: {} }, cookie))],
      ["rotate", await call(e, `${url}/${host}/token`, { method: "POST", headers: cookie })],
      ["delete", await call(e, `${url}/${host}`, { method: "DELETE", headers: cookie })],
    ] as const) {
      expect(res.status, what).toBe(403);
      expect(await res.json(), what).toMatchObject({ error: "forbidden" });
    }
    expect((await row(origin))!["deleted_at"]).toBeNull();
  });

  it("a registered site's own token is no platform credential: 403 on the platform's host, 404 on its own (no platform API there)", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `http://${uniqueLabel("own")}.test:8787`;
    const { token } = await created(e, platformOrigin, { origin });
    const asSite = { Authorization: `Bearer ${token}` };
    // 403 on the platform's host; on the site's own host (a tenant's) the platform API does not exist: 404.
    for (const [at, status, error] of [
      [platformOrigin, 403, "forbidden"],
      [origin, 404, "not_found"],
    ] as const) {
      const list = await call(e, `${at}/sitemap-admin/sites`, { headers: asSite });
      expect(list.status, at).toBe(status);
      expect(await list.json()).toMatchObject({ error });
      const made = await create(e, at, { origin: `https://${uniqueLabel("y")}.example` }, asSite);
      expect(made.status, at).toBe(status);
      const rotate = await call(e, `${at}/sitemap-admin/sites/${new URL(origin).host}/token`, { method: "POST", headers: asSite });
      expect(rotate.status, at).toBe(status);
    }
    expect((await row(origin))!["token_hash"]).toBe(await tokenHash(token));
  });

  it("an Access service token manages sites; a person's Access JWT does not", async () => {
    const TEAM = "https://team-registry.cloudflareaccess.com";
    const AUD = "aud-registry-0123456789";
    const CLIENT = "0123456789abcdef0123456789abcdef.access";
    const { platformOrigin, env: e } = platform({ ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: AUD, ACCESS_SERVICE_TOKEN_IDS: CLIENT });
    const key = await accessKey("registry");
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      return url === `${TEAM}/cdn-cgi/access/certs` ? Response.json({ keys: [key.public] }) : new Response("not found", { status: 404 });
    });
    const s = Math.floor(Date.now() / 1000);
    const claims = { aud: [AUD], iss: TEAM, type: "app", iat: s, nbf: s, exp: s + 600 };
    const service = { "Cf-Access-Jwt-Assertion": await key.jwt({ ...claims, sub: "", common_name: CLIENT }) };
    const person = { "Cf-Access-Jwt-Assertion": await key.jwt({ ...claims, sub: "7335d417-61da-459d-899c-0a01c76a2f94", email: "owner@example.com" }) };

    expect((await create(e, platformOrigin, { origin: `https://${uniqueLabel("svc")}.example` }, service)).status).toBe(201);
    expect((await call(e, `${platformOrigin}/sitemap-admin/sites`, { headers: service })).status).toBe(200);
    expect((await create(e, platformOrigin, { origin: `https://${uniqueLabel("person")}.example` }, person)).status).toBe(403);
    expect((await call(e, `${platformOrigin}/sitemap-admin/sites`, { headers: person })).status).toBe(403);
  });

  it("each write is in the audit trail of the host it was sent to; never the token", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `https://${uniqueLabel("audited")}.example`;
    const host = new URL(origin).host;
    const { token } = await created(e, platformOrigin, { origin });
    await call(e, `${platformOrigin}/sitemap-admin/sites/${host}`, sendJson("PATCH", { settings: { FEED_SIZE: "10" } }));
    await call(e, `${platformOrigin}/sitemap-admin/sites/${host}/token`, { method: "POST", headers: bearer });
    await call(e, `${platformOrigin}/sitemap-admin/sites/${host}`, { method: "DELETE", headers: bearer });
    await call(e, `${platformOrigin}/sitemap-admin/sites`, { headers: bearer }); // a read: not audited
    const audit = await auditOf(e, platformOrigin);
    expect(audit.entries.map((a) => [a.who, a.method, a.resource, a.status]).reverse()).toEqual([
      ["token", "POST", "/sitemap-admin/sites", 201],
      ["token", "PATCH", `/sitemap-admin/sites/${host}`, 200],
      ["token", "POST", `/sitemap-admin/sites/${host}/token`, 200],
      ["token", "DELETE", `/sitemap-admin/sites/${host}`, 202],
    ]);
    expect(JSON.stringify(audit)).not.toContain(token);
  });
});

describe("the OpenAPI document", () => {
  it("describes the platform API's paths, methods and bodies", async () => {
    const { platformOrigin, env: e } = platform();
    const res = await call(e, `${platformOrigin}/sitemap-admin/openapi.json`, { headers: bearer });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } };
    expect(Object.keys(doc.paths["/sitemap-admin/sites"]!).sort()).toEqual(["get", "post"]);
    expect(doc.paths["/sitemap-admin/sites/{host}"]).toHaveProperty("get");
    expect(doc.paths["/sitemap-admin/sites/{host}"]).toHaveProperty("patch");
    expect(doc.paths["/sitemap-admin/sites/{host}"]).toHaveProperty("delete");
    expect(doc.paths["/sitemap-admin/sites/{host}/token"]).toHaveProperty("post");
    for (const name of ["Site", "SiteCreate", "SiteCreated", "SiteList", "SiteUpdate", "SiteToken", "SiteDeleted"])
      expect(doc.components.schemas).toHaveProperty(name);
  });
});

describe("the platform credential lives on the platform's hosts only", () => {
  const client = "198.51.100.23";
  const cookieOf = (res: Response): string | null => res.headers.get("Set-Cookie")?.split(";")[0] ?? null;

  it("a tenant's host takes its own token at the sign-in form, never the platform's; its session reads that site only", async () => {
    const { platformOrigin, env: e } = platform();
    const origin = `http://${uniqueLabel("tenant")}.test:8787`;
    const { token } = await created(e, platformOrigin, { origin });

    // The platform token typed on the tenant's host: refused, no cookie (a script there could read what is typed).
    const refused = await call(e, `${origin}/sitemap-admin/sign-in`, signInForm(TOKEN, client, { Origin: origin }));
    expect(refused.status).toBe(401);
    expect(refused.headers.get("Set-Cookie")).toBeNull();

    // The site's own token: a session on its own host.
    const own = await call(e, `${origin}/sitemap-admin/sign-in`, signInForm(token, client, { Origin: origin }));
    expect(own.status).toBe(303);
    const cookie = cookieOf(own)!;
    expect((await call(e, `${origin}/sitemap-admin/`, { headers: { Cookie: cookie } })).status).toBe(200);
    const status = await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { site: string }).site).toBe(origin);
    // No platform page and no platform API on a tenant's host, whoever asks.
    // (A session's call to the API beyond status is refused first by the browser guard: 403.)
    for (const [headers, sites] of [
      [{ Cookie: cookie }, 403],
      [bearer, 404],
    ] as const) {
      expect((await call(e, `${origin}/sitemap-admin/platform`, { headers })).status).toBe(404);
      expect((await call(e, `${origin}/sitemap-admin/sites`, { headers })).status).toBe(sites);
    }
    // The tenant's session is nothing on the platform's host.
    expect((await call(e, `${platformOrigin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(401);

    // Rotating the site's token ends its sessions.
    const rotated = await call(e, `${platformOrigin}/sitemap-admin/sites/${new URL(origin).host}/token`, { method: "POST", headers: bearer });
    expect(rotated.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 0));
    const fresh = siteEnv(platformOrigin);
    expect((await call(fresh, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(401);
  });

  it("the platform's host takes the platform token (control), and its session reads the platform page", async () => {
    const { platformOrigin, env: e } = platform();
    const own = await call(e, `${platformOrigin}/sitemap-admin/sign-in`, signInForm(TOKEN, client, { Origin: platformOrigin }));
    expect(own.status).toBe(303);
    expect((await call(e, `${platformOrigin}/sitemap-admin/platform`, { headers: { Cookie: cookieOf(own)! } })).status).toBe(200);
  });
});

describe("refused platform calls", () => {
  it("are counted apart from the audit trail: a site token's 300 refused calls evict no accepted write", async () => {
    // The site's write limit (120 a minute) off: this is about the audit trail alone.
    const { platformOrigin, env: limited } = platform();
    const e = { ...limited, SITE_WRITE_LIMITER: undefined } as unknown as Env;
    const origin = `http://${uniqueLabel("aud")}.test:8787`;
    const { token } = await created(e, platformOrigin, { origin });
    const asSite = { Authorization: `Bearer ${token}` };
    const accepted = await call(e, `${origin}/sitemap-admin/urls`, sendJson("PUT", [{ loc: `${origin}/kept` }], asSite));
    expect(accepted.status).toBe(200);
    // The platform API from the site's own host: it does not exist there (404), signed in as the site.
    for (let i = 0; i < 300; i++) {
      const res = await create(e, origin, { origin: `https://${uniqueLabel("no")}.example` }, asSite);
      expect(res.status).toBe(404);
    }
    const audit = await auditOf(e, origin);
    expect(audit.entries.some((entry) => entry.method === "PUT" && entry.resource === "/sitemap-admin/urls" && entry.status === 200)).toBe(true);
    expect(audit.entries.filter((entry) => entry.status === 404)).toEqual([]);
    expect(refusedBy(audit.refused)).toMatchObject({ "not-authorized": 300 });
  });
});
