/**
 * Signing in to the admin (src/admin/auth.ts): the sign-in form and its session cookie (flags,
 * signature, expiry), the bearer token for scripts, Cloudflare Access JWTs verified against a JWKS
 * (signature, aud, iss, exp; cached keys, refetched on an unknown kid), the sign-in page with no
 * data for anyone else, and the dashboard's headers and escaping. The Access JWKS is a stub of the
 * global fetch (the network boundary); keys are generated here.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearJwksCache } from "../../src/admin/auth/access.ts";
import { SESSION_COOKIE, SESSION_SECONDS, newSessionId, sessionKey } from "../../src/admin/auth/session.ts";
import { PAGE_CSP } from "../../src/admin/dashboard/layout.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { pages, siteEnv, upsert } from "./notify-support.ts";
import { accessKey } from "./support/access-key.ts";
import { call, freshOrigin } from "./support.ts";

const TOKEN = "test-admin-token-0123456789abcdef";
const TEAM = "https://team-test.cloudflareaccess.com";
const AUD = "aud0123456789abcdef";

async function seeded(label: string, vars: Record<string, string> = {}): Promise<{ origin: string; env: Env }> {
  const origin = freshOrigin(label);
  const env = siteEnv(origin, vars);
  await upsert(env, pages(origin, 7), Date.UTC(2026, 0, 1));
  await rebuildManifest(services(env), origin);
  return { origin, env };
}

/** The sign-in form as a browser posts it: through Cloudflare's edge, which names the client. */
const form = (token: string): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded", "CF-Connecting-IP": "198.51.100.10" },
  body: new URLSearchParams({ token }).toString(),
});

async function expectSignInPage(res: Response, origin: string): Promise<string> {
  expect(res.status).toBe(401);
  expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  const body = await res.text();
  expect(body).toContain("<h1>Sitemaps admin</h1>");
  expect(body).not.toContain(origin);
  expect(body).not.toContain("data-figure");
  return body;
}

describe("sign-in form and session cookie", () => {
  it("without credentials the dashboard is the sign-in page (401, no data); the API stays 401 JSON", async () => {
    const { origin, env } = await seeded("auth-anon");
    const body = await expectSignInPage(await call(env, `${origin}/sitemap-admin/`), origin);
    expect(body).toContain('<form method="post" action="/sitemap-admin/sign-in">');
    await expectSignInPage(await call(env, `${origin}/sitemap-admin/dashboard`), origin);
    const api = await call(env, `${origin}/sitemap-admin/status`);
    expect(api.status).toBe(401);
    expect(await api.json()).toEqual({ error: "unauthorized" });
  });

  it("a wrong token gets the form again and no cookie; the right one a 303 with an HttpOnly, Secure, SameSite=Strict cookie", async () => {
    const { origin, env } = await seeded("auth-form");
    const wrong = await call(env, `${origin}/sitemap-admin/sign-in`, form("not-the-token-0123456789abcdef-xyz"));
    expect(wrong.headers.get("Set-Cookie")).toBeNull();
    expect(await expectSignInPage(wrong, origin)).toContain("That token was not accepted.");
    const oversized = await call(env, `${origin}/sitemap-admin/sign-in`, form(TOKEN + "x".repeat(5000)));
    expect(oversized.headers.get("Set-Cookie")).toBeNull();
    expect(oversized.status).toBe(401);

    const ok = await call(env, `${origin}/sitemap-admin/sign-in`, form(TOKEN));
    expect(ok.status).toBe(303);
    expect(ok.headers.get("Location")).toBe("/sitemap-admin/");
    const cookie = ok.headers.get("Set-Cookie")!;
    expect(cookie).toMatch(/^__Host-sitemap_admin_session=[A-Za-z0-9_-]{43}; /);
    for (const attr of ["HttpOnly", "Secure", "SameSite=Strict", "Path=/", `Max-Age=${SESSION_SECONDS}`]) expect(cookie.split("; ")).toContain(attr);
    expect(cookie).not.toContain(TOKEN);

    const session = cookie.split(";")[0]!;
    const page = await call(env, `${origin}/sitemap-admin/`, { headers: { Cookie: session } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(origin);
    // The session signs in to the whole API, JSON included.
    expect((await call(env, `${origin}/sitemap-admin/status`, { headers: { Cookie: session } })).status).toBe(200);
    // Sign-out clears it.
    const out = await call(env, `${origin}/sitemap-admin/sign-out`, { method: "POST" });
    expect(out.status).toBe(303);
    expect(out.headers.get("Set-Cookie")).toMatch(/^__Host-sitemap_admin_session=; Max-Age=0; /);
  });

  it("a made-up, expired, revoked, other-token or other-site session is not a session", async () => {
    const { origin, env } = await seeded("auth-forged");
    const other = await seeded("auth-forged-other");
    const now = Date.now();
    const store = services(env).admin!;
    const session = async (over: { origin?: string; token?: string; expiresAt?: number; revokedAt?: number | null } = {}) => {
      const id = newSessionId();
      await store.createSession(await sessionKey(over.token ?? TOKEN, id), {
        origin: over.origin ?? origin,
        identity: "token (session test)",
        createdAt: now,
        expiresAt: over.expiresAt ?? now + SESSION_SECONDS * 1000,
        revokedAt: over.revokedAt ?? null,
      });
      return id;
    };
    const cookies = [
      newSessionId(), // never stored
      await session({ expiresAt: now - 1000 }), // expired
      await session({ revokedAt: now - 1000 }), // signed out
      await session({ token: "another-admin-token-0123456789abcdef" }), // made under another token (rotated)
      await session({ origin: other.origin }), // another site's
      "garbage",
    ];
    for (const value of cookies)
      await expectSignInPage(await call(env, `${origin}/sitemap-admin/`, { headers: { Cookie: `${SESSION_COOKIE}=${value}` } }), origin);
    expect((await call(env, `${origin}/sitemap-admin/`, { headers: { Cookie: `${SESSION_COOKIE}=${await session()}` } })).status).toBe(200);
  });

  it("the bearer token keeps working for scripts; without a token or Access everything is 404", async () => {
    const { origin, env } = await seeded("auth-bearer");
    expect((await call(env, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await call(env, `${origin}/sitemap-admin/`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    const off = { ...env, ADMIN_TOKEN: "" } as Env;
    for (const path of ["/", "/dashboard", "/dashboard.css", "/status"]) expect((await call(off, `${origin}/sitemap-admin${path}`)).status).toBe(404);
    expect((await call(off, `${origin}/sitemap-admin/sign-in`, form(TOKEN))).status).toBe(404);
  });
});

describe("the dashboard page", () => {
  it("has a strict CSP, no script, no inline style, is never cached, and takes its stylesheet from its own route", async () => {
    const { origin, env } = await seeded("dash-headers");
    const res = await call(env, `${origin}/sitemap-admin/`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.headers.get("Content-Security-Policy")).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("default-src 'none'");
    expect(PAGE_CSP).not.toMatch(/script-src|unsafe-inline/);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const body = await res.text();
    expect(body).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
    expect(body).toContain('<link rel="stylesheet" href="/sitemap-admin/dashboard.css">');
    expect(body).toMatch(/<svg class="bar"/);
    const css = await call(env, `${origin}/sitemap-admin/dashboard.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get("Content-Type")).toBe("text/css; charset=utf-8");
  });

  it("shows the numbers status reports", async () => {
    const { origin, env } = await seeded("dash-numbers");
    const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };
    const status = (await (await call(env, `${origin}/sitemap-admin/status`, auth)).json()) as { manifest: { shards: number; urls: number } };
    const body = await (await call(env, `${origin}/sitemap-admin/`, auth)).text();
    const figure = (name: string) => new RegExp(`data-figure="${name}">([^<]*)<`).exec(body)?.[1];
    expect(figure("shards")).toBe(String(status.manifest.shards));
    expect(figure("urls")).toBe(status.manifest.urls.toLocaleString("en-US"));
    expect(figure("section-pages-urls")).toBe("7");
  });

  it("escapes every value it shows (a hostile sitemap path from Search Console)", async () => {
    const { origin, env } = await seeded("dash-escape", {
      GSC_SERVICE_ACCOUNT: JSON.stringify({
        client_email: "a@b.iam.gserviceaccount.com",
        private_key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
      }),
    });
    const hostile = `${origin}/"><script>alert(1)</script><img src=x onerror=alert(2)>`;
    await services(env).gsc!.saveRead({ origin, readAt: 1, okAt: 1, status: 200, error: null, failures: 0, nextAt: 0, dropped: 0 }, [
      { path: hostile, lastSubmitted: null, lastDownloaded: null, isPending: false, isSitemapsIndex: false, errors: 1, warnings: 0, contents: [] },
    ]);
    const body = await (await call(env, `${origin}/sitemap-admin/`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    expect(body).not.toContain("<script>");
    expect(body).not.toContain("<img");
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;");
  });
});

describe("Cloudflare Access", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    clearJwksCache();
  });

  /** The team's JWKS, served by a stub of the global fetch; counts requests. */
  function jwks(keys: () => JsonWebKey[]): { count: () => number } {
    let n = 0;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url !== `${TEAM}/cdn-cgi/access/certs`) return new Response("not found", { status: 404 });
      n++;
      return Response.json({ keys: keys(), public_cert: { kid: "x", cert: "…" } });
    });
    return { count: () => n };
  }

  const claims = (over: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return { aud: [AUD], iss: TEAM, sub: "user-1", email: "owner@example.com", iat: now, nbf: now, exp: now + 600, ...over };
  };

  it("accepts a valid Access JWT for the whole admin API and the dashboard; refuses a wrong aud, iss, exp, key or none", async () => {
    const { origin, env } = await seeded("access", { ACCESS_TEAM_DOMAIN: "team-test.cloudflareaccess.com", ACCESS_AUD: AUD });
    const key = await accessKey("k1");
    const impostor = await accessKey("k1");
    const server = jwks(() => [key.public]);
    const withJwt = (jwt: string): RequestInit => ({ headers: { "Cf-Access-Jwt-Assertion": jwt } });
    expect((await call(env, `${origin}/sitemap-admin/status`, withJwt(await key.jwt(claims())))).status).toBe(200);
    expect((await call(env, `${origin}/sitemap-admin/`, withJwt(await key.jwt(claims())))).status).toBe(200);
    const refused = [
      await key.jwt(claims({ aud: ["another-application"] })),
      await key.jwt(claims({ iss: "https://evil.cloudflareaccess.com" })),
      await key.jwt(claims({ exp: Math.floor(Date.now() / 1000) - 61 })), // past the 60 s allowance
      await key.jwt(claims({ exp: undefined })),
      await impostor.jwt(claims()),
      "not.a.jwt",
    ];
    for (const jwt of refused) {
      expect((await call(env, `${origin}/sitemap-admin/status`, withJwt(jwt))).status).toBe(401);
      await expectSignInPage(await call(env, `${origin}/sitemap-admin/`, withJwt(jwt)), origin);
    }
    // Keys are cached: one JWKS fetch for all of the above.
    expect(server.count()).toBe(1);
  });

  it("fetches the JWKS again for an unknown kid (key rotation), at most once per gap for made-up ones", async () => {
    const { origin, env } = await seeded("access-rotate", { ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: AUD, ADMIN_TOKEN: "" });
    const first = await accessKey("k1");
    const second = await accessKey("k2");
    let keys = [first.public];
    const server = jwks(() => keys);
    const status = (jwt: string) => call(env, `${origin}/sitemap-admin/status`, { headers: { "Cf-Access-Jwt-Assertion": jwt } });
    expect((await status(await first.jwt(claims()))).status).toBe(200);
    keys = [first.public, second.public];
    clearJwksCache(); // the gap has passed (a new isolate would start empty as well)
    expect((await status(await first.jwt(claims()))).status).toBe(200);
    expect((await status(await second.jwt(claims()))).status).toBe(200);
    const fetches = server.count();
    const madeUp = await accessKey("k-made-up");
    for (let i = 0; i < 5; i++) expect((await status(await madeUp.jwt(claims()))).status).toBe(401);
    expect(server.count()).toBe(fetches);
    // Access without a token: no form, the bearer header signs nobody in.
    expect((await call(env, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
    const page = await expectSignInPage(await call(env, `${origin}/sitemap-admin/`), origin);
    expect(page).not.toContain("<form");
    expect(page).toContain("Cloudflare Access");
  });
});
