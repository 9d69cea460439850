/**
 * Cloudflare Access, strictly (issue 35): a person's JWT reads (dashboard, status) and never writes;
 * a service token's JWT (`common_name`, no email, empty `sub`) writes like the bearer token, from no
 * other site; `iat`/`nbf`/`exp` get 60 s of clock allowance and no more; parallel requests with an
 * unknown key id make one JWKS fetch between them. The JWKS is a stub of the global fetch.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { CLOCK_SKEW_S, clearJwksCache, verifyAccessJwt } from "../../src/admin/auth/access.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { pages, siteEnv, upsert } from "./notify-support.ts";
import { accessKey } from "./support/access-key.ts";
import { call, freshOrigin } from "./support.ts";

const TEAM = "https://team-test.cloudflareaccess.com";
const AUD = "aud0123456789abcdef";

const nowS = () => Math.floor(Date.now() / 1000);
const person = (over: Record<string, unknown> = {}) => ({
  aud: [AUD],
  iss: TEAM,
  sub: "7335d417-61da-459d-899c-0a01c76a2f94",
  email: "owner@example.com",
  type: "app",
  iat: nowS(),
  nbf: nowS(),
  exp: nowS() + 600,
  ...over,
});
/** A service token's claims, as Access's docs show them: the Client ID in common_name, an empty sub, no email. */
const serviceToken = (over: Record<string, unknown> = {}) => ({
  aud: [AUD],
  iss: TEAM,
  sub: "",
  common_name: "88bf3b6d86161464f6509f7219099e57.access",
  type: "app",
  iat: nowS(),
  exp: nowS() + 600,
  ...over,
});

afterEach(() => {
  vi.restoreAllMocks();
  clearJwksCache();
});

describe("what an Access identity may do", () => {
  async function site(label: string) {
    const origin = freshOrigin(label);
    const env = siteEnv(origin, { ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: AUD });
    await upsert(env, pages(origin, 2), Date.UTC(2026, 0, 1));
    await rebuildManifest(services(env), origin);
    const key = await accessKey("k1");
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      return url === `${TEAM}/cdn-cgi/access/certs` ? Response.json({ keys: [key.public] }) : new Response("not found", { status: 404 });
    });
    return { origin, env, key };
  }
  const put = (origin: string, headers: Record<string, string>): RequestInit => ({
    method: "PUT",
    headers: { "Content-Type": "application/x-ndjson", ...headers },
    body: JSON.stringify({ loc: `${origin}/pages/access/1` }),
  });

  it("a person's JWT reads the dashboard and status, and its PUT is 403", async () => {
    const { origin, env, key } = await site("access-person");
    const jwt = { "Cf-Access-Jwt-Assertion": await key.jwt(person()) };
    expect((await call(env, `${origin}/sitemap-admin/status`, { headers: jwt })).status).toBe(200);
    const page = await call(env, `${origin}/sitemap-admin/`, { headers: jwt });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<input type="hidden" name="csrf" value="[A-Za-z0-9_-]{43}">/);
    expect((await call(env, `${origin}/sitemap-admin/urls`, put(origin, jwt))).status).toBe(403);
    expect((await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(`${origin}/pages/1`)}`, { headers: jwt })).status).toBe(403);
  });

  it("a service token's JWT writes, is audited by its Client ID, and is refused from another site", async () => {
    const { origin, env: unlisted, key } = await site("access-service");
    const env = { ...unlisted, ACCESS_SERVICE_TOKEN_IDS: "88bf3b6d86161464f6509f7219099e57.access" } as Env;
    const jwt = { "Cf-Access-Jwt-Assertion": await key.jwt(serviceToken()) };
    const ok = await call(env, `${origin}/sitemap-admin/urls`, put(origin, jwt));
    expect(ok.status).toBe(200);
    const xsite = await call(env, `${origin}/sitemap-admin/urls`, put(origin, { ...jwt, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }));
    expect(xsite.status).toBe(403);
    // The cross-site refusal is counted apart from the trail of accepted writes.
    const status = (await (await call(env, `${origin}/sitemap-admin/status`, { headers: jwt })).json()) as {
      audit: { entries: { who: string; status: number }[]; refused: { who: string; reason: string; count: number }[] };
    };
    expect(status.audit.entries.map((e) => [e.who, e.status])).toEqual([["service token 88bf3b6d86161464f6509f7219099e57.access", 200]]);
    expect(status.audit.refused.map((r) => [r.who, r.reason, r.count])).toEqual([
      ["service token 88bf3b6d86161464f6509f7219099e57.access", "cross-site", 1],
    ]);
    // Neither a person nor a service token: refused.
    for (const claims of [serviceToken({ sub: "someone" }), serviceToken({ common_name: "" }), person({ email: "" })]) {
      expect((await call(env, `${origin}/sitemap-admin/status`, { headers: { "Cf-Access-Jwt-Assertion": await key.jwt(claims) } })).status).toBe(401);
    }
  });

  it("issue 43: only the service tokens listed in ACCESS_SERVICE_TOKEN_IDS sign in; unset, none does (people still read)", async () => {
    const { origin, env: base, key } = await site("access-service-list");
    const listed = "88bf3b6d86161464f6509f7219099e57.access";
    const other = "0123456789abcdef0123456789abcdef.access";
    const env = { ...base, ACCESS_SERVICE_TOKEN_IDS: `${other.replace("0123", "fedc")}  ${listed}` } as Env;
    const as = async (clientId: string) => ({ "Cf-Access-Jwt-Assertion": await key.jwt(serviceToken({ common_name: clientId })) });
    // A service token of the same team, validly signed for this application, but not one of ours: no one.
    const unlisted = await call(env, `${origin}/sitemap-admin/urls`, put(origin, await as(other)));
    expect(unlisted.status).toBe(401);
    expect(await unlisted.json()).toEqual({ error: "unauthorized" });
    expect((await call(env, `${origin}/sitemap-admin/status`, { headers: await as(other) })).status).toBe(401);
    // The listed one writes and reads.
    expect((await call(env, `${origin}/sitemap-admin/urls`, put(origin, await as(listed)))).status).toBe(200);
    expect((await call(env, `${origin}/sitemap-admin/status`, { headers: await as(listed) })).status).toBe(200);
    // Without the variable no service token signs in; a person's JWT still reads.
    expect((await call(base, `${origin}/sitemap-admin/status`, { headers: await as(listed) })).status).toBe(401);
    expect((await call(base, `${origin}/sitemap-admin/status`, { headers: { "Cf-Access-Jwt-Assertion": await key.jwt(person()) } })).status).toBe(200);
    // A bad list turns Access sign-in off, named in status (the rule, never the value).
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const bad = { ...env, ACCESS_SERVICE_TOKEN_IDS: "ok.access not/an/id" } as Env;
    expect((await call(bad, `${origin}/sitemap-admin/status`, { headers: await as(listed) })).status).toBe(401);
    const config = (
      (await (await call(bad, `${origin}/sitemap-admin/status`, { headers: { Authorization: "Bearer test-admin-token-0123456789abcdef" } })).json()) as {
        configuration: { disabled: { feature: string; variable: string }[] };
      }
    ).configuration;
    expect(config.disabled).toContainEqual(expect.objectContaining({ feature: "access-sign-in", variable: "ACCESS_SERVICE_TOKEN_IDS" }));
  });
});

describe("verifying an Access JWT", () => {
  const config = { issuer: TEAM, aud: AUD, serviceTokenIds: new Set<string>() };

  it("allows 60 s of clock difference on iat, nbf and exp, and not a second more", async () => {
    const key = await accessKey("skew");
    const fetcher = async () => Response.json({ keys: [key.public] });
    const now = Date.now();
    const t = Math.floor(now / 1000);
    const verdict = async (claims: Record<string, unknown>) => (await verifyAccessJwt(await key.jwt(person(claims)), config, fetcher, now))?.kind ?? null;
    expect(CLOCK_SKEW_S).toBe(60);
    // Issued by a clock a little ahead of ours: accepted up to 60 s.
    expect(await verdict({ iat: t + 1, nbf: t + 1 })).toBe("user");
    expect(await verdict({ iat: t + 60, nbf: t + 60 })).toBe("user");
    expect(await verdict({ iat: t + 61 })).toBeNull();
    expect(await verdict({ nbf: t + 61 })).toBeNull();
    // Expired by a clock a little behind ours: accepted up to 60 s.
    expect(await verdict({ exp: t - 59 })).toBe("user");
    expect(await verdict({ exp: t - 60 })).toBeNull();
    expect(await verdict({ exp: t - 61 })).toBeNull();
    expect(await verdict({ exp: undefined })).toBeNull();
  });

  it("parallel requests with an unknown key id make one JWKS fetch between them", async () => {
    const key = await accessKey("parallel");
    let fetches = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const fetcher = async () => {
      fetches++;
      await gate; // the keys take a while to arrive
      return Response.json({ keys: [key.public] });
    };
    const token = await key.jwt(person());
    const made = await accessKey("made-up");
    const madeUp = await made.jwt(person());
    const now = Date.now();
    const all = Promise.all([
      ...Array.from({ length: 10 }, () => verifyAccessJwt(token, config, fetcher, now)),
      ...Array.from({ length: 10 }, () => verifyAccessJwt(madeUp, config, fetcher, now)),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    const results = await all;
    expect(fetches).toBe(1);
    expect(results.slice(0, 10).every((r) => r?.kind === "user")).toBe(true);
    expect(results.slice(10).every((r) => r === null)).toBe(true);
    // Within the gap, made-up key ids fetch nothing more.
    expect(await verifyAccessJwt(madeUp, config, fetcher, now + 1000)).toBeNull();
    expect(fetches).toBe(1);
  });
});
