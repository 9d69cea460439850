/**
 * Issue 35 "admin-guard": what a browser session may do on the site's own origin. The session cookie
 * reads the dashboard and status and never writes (the bearer token does); a dashboard action needs
 * its CSRF token and a same-origin request; sign-out ends the session on the server; failed sign-ins
 * are slowed by the Rate Limiting binding (simulated by Miniflare from wrangler.jsonc); every write
 * is in the audit trail, on D1 and on a URL_SOURCE=kv site without D1 (its writer object).
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1AdminStateStore } from "../../src/adapters/d1/admin-state.ts";
import { services } from "../../src/services.ts";
import { siteEnv } from "./notify-support.ts";
import { TOKEN, auditOf, bearer, csrfOf, freshClient, refusedBy, seeded, signIn, signInForm } from "./support/admin.ts";
import { drain, withJobs } from "./support/jobs.ts";
import { call, freshOrigin } from "./support.ts";

const ndjson = (origin: string, n: number, path = "guard"): string =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ loc: `${origin}/pages/${path}/${i}` })).join("\n");
const put = (origin: string, headers: Record<string, string>, n = 2): RequestInit => ({
  method: "PUT",
  headers: { "Content-Type": "application/x-ndjson", ...headers },
  body: ndjson(origin, n),
});

afterEach(() => vi.restoreAllMocks());

describe("a browser session reads, never writes", () => {
  it("PUT /sitemap-admin/urls with only the session cookie is 403 and writes nothing; with the bearer token it is 200", async () => {
    const { origin, env: e } = await seeded("guard-put");
    const cookie = await signIn(e, origin);
    const refused = await call(e, `${origin}/sitemap-admin/urls`, put(origin, { Cookie: cookie }));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "forbidden" });
    const read = (loc: string, headers: Record<string, string>) => call(e, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers });
    expect((await read(`${origin}/pages/guard/0`, bearer)).status).toBe(404);
    // DELETE, a sync and regeneration are writes too.
    expect((await call(e, `${origin}/sitemap-admin/urls`, { ...put(origin, { Cookie: cookie }), method: "DELETE" })).status).toBe(403);
    expect((await call(e, `${origin}/sitemap-admin/syncs`, { method: "POST", headers: { Cookie: cookie } })).status).toBe(403);
    expect((await call(e, `${origin}/sitemap-admin/regenerate`, { method: "POST", headers: { Cookie: cookie } })).status).toBe(403);
    // It reads the dashboard and status, nothing else of the API.
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(200);
    expect((await call(e, `${origin}/sitemap-admin/`, { headers: { Cookie: cookie } })).status).toBe(200);
    expect((await read(`${origin}/pages/1`, { Cookie: cookie })).status).toBe(403);

    const ok = await call(e, `${origin}/sitemap-admin/urls`, put(origin, bearer));
    expect(ok.status).toBe(200);
    expect((await read(`${origin}/pages/guard/0`, bearer)).status).toBe(200);
  });

  it("POST /sitemap-admin/regenerate with the cookie from another site (or a sibling subdomain) is 403, even with the CSRF token", async () => {
    const { origin, env: e } = await seeded("guard-xsite");
    const cookie = await signIn(e, origin);
    // The check: the cookie and a request from another site.
    const plain = { method: "POST", headers: { Cookie: cookie, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" } };
    expect((await call(e, `${origin}/sitemap-admin/regenerate`, plain)).status).toBe(403);
    const csrf = await csrfOf(e, origin, cookie);
    const action = (headers: Record<string, string>): RequestInit => ({
      method: "POST",
      headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams({ csrf }).toString(),
    });
    const hostile: Record<string, string>[] = [
      { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" },
      { Origin: origin.replace("https://", "https://evil."), "Sec-Fetch-Site": "same-site" },
      { Origin: "https://evil.example" },
      { "Sec-Fetch-Site": "cross-site" },
      { Origin: "null" },
    ];
    for (const headers of hostile) {
      const res = await call(e, `${origin}/sitemap-admin/regenerate`, action(headers));
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(await res.json()).toEqual({ error: "forbidden", message: "cross-site request refused" });
    }
    // Sign-out, too, comes only from the site itself.
    expect(
      (await call(e, `${origin}/sitemap-admin/sign-out`, { method: "POST", headers: { Cookie: cookie, "Sec-Fetch-Site": "cross-site" } })).status,
    ).toBe(403);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(200);
  });

  it("the dashboard's 'Regenerate now' needs the session's CSRF token and a navigation; then it runs and returns to the dashboard", async () => {
    const { origin, env: seededEnv } = await seeded("guard-action");
    const { env: e, queue } = withJobs(seededEnv);
    const cookie = await signIn(e, origin);
    const csrf = await csrfOf(e, origin, cookie);
    const other = await csrfOf(e, origin, await signIn(e, origin));
    expect(other).not.toBe(csrf);
    const action = (token: string | null, headers: Record<string, string> = {}): RequestInit => ({
      method: "POST",
      headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded", Origin: origin, "Sec-Fetch-Site": "same-origin", ...headers },
      body: token === null ? "" : new URLSearchParams({ csrf: token }).toString(),
    });
    const url = `${origin}/sitemap-admin/regenerate`;
    expect((await call(e, url, action(null))).status).toBe(403);
    expect((await call(e, url, action(other))).status).toBe(403); // another session's token
    expect((await call(e, url, action(csrf, { "Sec-Fetch-Mode": "cors" }))).status).toBe(403); // a script's fetch()
    const done = await call(e, url, action(csrf, { "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document" }));
    expect(done.status).toBe(303);
    // The route queues the site's regeneration (202, docs/jobs.md); the consumer runs it.
    expect(done.headers.get("Location")).toBe("/sitemap-admin/?done=regenerate&status=202");
    expect(queue.sent.map((m) => [m.body.kind, m.body.origin])).toEqual([["regenerate", origin]]);
    expect((await drain(e, queue, { early: true })).map((d) => [d.job.kind, d.result])).toContainEqual(["regenerate", "acked"]);
    const page = await (await call(e, `${origin}${done.headers.get("Location")}`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain("Regeneration requested (HTTP 202).");
    // Only the dashboard's action: the same token does not open the record API.
    expect((await call(e, `${origin}/sitemap-admin/urls`, { ...action(csrf), method: "PUT" })).status).toBe(403);
    // The accepted action is in the trail; the refusals are counted apart from it (issue 43).
    const audit = await auditOf(e, origin);
    const session = expect.stringMatching(/^token \(session [0-9a-f]{8}\)$/);
    expect(audit.entries.map(({ at: _at, ...rest }) => rest)).toEqual([
      { who: session, method: "POST", resource: "/sitemap-admin/regenerate", records: null, status: 202 },
    ]);
    expect(refusedBy(audit.refused)).toEqual({ "not-for-browsers": 4 });
    expect(audit.refused.every((r) => /^token \(session [0-9a-f]{8}\)$/.test(r.who))).toBe(true);
  });
});

describe("sign-out ends the session on the server", () => {
  it("after sign-out the old cookie reads nothing; a session of one site is nothing on another", async () => {
    const { origin, env: e } = await seeded("guard-out");
    const cookie = await signIn(e, origin);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(200);
    const out = await call(e, `${origin}/sitemap-admin/sign-out`, { method: "POST", headers: { Cookie: cookie, "Sec-Fetch-Site": "same-origin" } });
    expect(out.status).toBe(303);
    // The browser's copy is cleared, and a copy kept elsewhere is worth nothing.
    const status = await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } });
    expect(status.status).toBe(401);
    expect(await (await call(e, `${origin}/sitemap-admin/`, { headers: { Cookie: cookie } })).text()).not.toContain(origin);

    const second = freshOrigin("guard-out-b");
    const both = siteEnv(`${origin} ${second}`);
    const fresh = await signIn(both, origin);
    expect((await call(both, `${origin}/sitemap-admin/status`, { headers: { Cookie: fresh } })).status).toBe(200);
    expect((await call(both, `${second}/sitemap-admin/status`, { headers: { Cookie: fresh } })).status).toBe(401);
  });
});

describe("guessing is slowed", () => {
  it("40 wrong tokens from one client: 429 with Retry-After, the right token refused too while blocked; a signed-in session still reads", async () => {
    const { origin, env: e } = await seeded("guard-limit");
    const client = freshClient();
    const cookie = await signIn(e, origin, client);
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 40; i++) {
      const res =
        i % 2 === 0
          ? await call(e, `${origin}/sitemap-admin/sign-in`, signInForm(`wrong-token-${i}-0123456789abcdef0123`, client))
          : await call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer wrong-${i}`, "CF-Connecting-IP": client } });
      statuses.push(res.status);
      if (res.status === 429) retryAfter ??= res.headers.get("Retry-After");
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // While blocked, the right token from that client is refused as well: no oracle.
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { ...bearer, "CF-Connecting-IP": client } })).status).toBe(429);
    // The session signed in before keeps working, and other clients are not affected.
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie, "CF-Connecting-IP": client } })).status).toBe(200);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { ...bearer, "CF-Connecting-IP": freshClient() } })).status).toBe(200);
  });

  it("successes never count: 30 right bearer requests from one client all pass", async () => {
    const { origin, env: e } = await seeded("guard-ok");
    const client = freshClient();
    for (let i = 0; i < 30; i++) {
      expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { ...bearer, "CF-Connecting-IP": client } })).status).toBe(200);
    }
  });

  it("without the SIGN_IN_LIMITER binding (an older configuration) the admin neither opens nor closes", async () => {
    const { origin, env: full } = await seeded("guard-nolimiter");
    const e = { ...full, SIGN_IN_LIMITER: undefined } as unknown as Env;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const client = freshClient();
    for (let i = 0; i < 15; i++) {
      expect(
        (await call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer wrong-${i}`, "CF-Connecting-IP": client } })).status,
      ).toBe(401);
    }
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { ...bearer, "CF-Connecting-IP": client } })).status).toBe(200);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("SIGN_IN_LIMITER binding is missing: failed admin sign-ins are not rate limited"));
  });
});

describe("the audit trail", () => {
  it("records who wrote what and the outcome, never a secret or a body; status and the dashboard show it", async () => {
    const { origin, env: e } = await seeded("audit");
    const cookie = await signIn(e, origin);
    expect((await call(e, `${origin}/sitemap-admin/urls`, put(origin, bearer, 3))).status).toBe(200);
    expect((await call(e, `${origin}/sitemap-admin/urls`, { ...put(origin, bearer, 1), method: "DELETE" })).status).toBe(200);
    expect((await call(e, `${origin}/sitemap-admin/urls`, put(origin, { Cookie: cookie }))).status).toBe(403);
    const bad = await call(e, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: { ...bearer, "Content-Type": "application/json" }, body: "[{]" });
    expect(bad.status).toBe(400);
    const audit = await auditOf(e, origin);
    expect(audit.store).toBe("d1");
    expect(audit.entries.map(({ at: _at, ...rest }) => rest)).toEqual([
      { who: "token", method: "PUT", resource: "/sitemap-admin/urls", records: null, status: 400 },
      { who: "token", method: "DELETE", resource: "/sitemap-admin/urls", records: 1, status: 200 },
      { who: "token", method: "PUT", resource: "/sitemap-admin/urls", records: 3, status: 200 },
    ]);
    // The session's refused PUT is counted apart (issue 43).
    expect(audit.refused.map(({ minute: _m, ...rest }) => rest)).toEqual([
      { who: expect.stringMatching(/^token \(session [0-9a-f]{8}\)$/), reason: "not-for-browsers", count: 1 },
    ]);
    expect(Date.parse(audit.entries[0]!.at)).toBeGreaterThan(Date.now() - 60_000);
    const text = JSON.stringify(audit);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain("/pages/guard/");
    expect(text).not.toContain(cookie.split("=")[1]!);
    const page = await (await call(e, `${origin}/sitemap-admin/`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain("<h2>Admin writes</h2>");
    expect(page).toContain('<td>PUT /sitemap-admin/urls</td><td class="num">3</td>');
    // Reads are not writes.
    expect((await auditOf(e, origin)).entries).toHaveLength(3);
  });

  it("a failure to record keeps the write a success, and says so", async () => {
    const { origin, env: e } = await seeded("audit-fail");
    vi.spyOn(D1AdminStateStore.prototype, "recordAudit").mockRejectedValue(new Error("D1 is down"));
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await call(e, `${origin}/sitemap-admin/urls`, put(origin, bearer, 2));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: 2, inserted: 2 });
    expect(res.headers.get("X-Admin-Audit")).toBe("not-recorded");
    expect(error.mock.calls.flat().join(" ")).toContain("audit: an admin write was not recorded (PUT /sitemap-admin/urls → 200)");
  });

  it("works for a URL_SOURCE=kv site without D1: sessions and the trail live in the site's writer object", async () => {
    const origin = freshOrigin("audit-kv");
    const e = { ...env, SITES: origin, URL_SOURCE: "kv", MANIFEST_STORE: "kv", DB: undefined } as unknown as Env;
    expect(services(e).admin?.kind).toBe("durable-object");
    expect((await call(e, `${origin}/sitemap-admin/urls`, put(origin, bearer, 2))).status).toBe(200);
    const cookie = await signIn(e, origin);
    expect((await call(e, `${origin}/sitemap-admin/urls`, put(origin, { Cookie: cookie }))).status).toBe(403);
    const audit = await auditOf(e, origin);
    expect(audit.store).toBe("durable-object");
    expect(audit.entries.map((x) => [x.who, x.status, x.records])).toEqual([["token", 200, 2]]);
    expect(audit.refused.map((x) => [x.who.startsWith("token (session") ? "session" : x.who, x.reason, x.count])).toEqual([
      ["session", "not-for-browsers", 1],
    ]);
    const out = await call(e, `${origin}/sitemap-admin/sign-out`, { method: "POST", headers: { Cookie: cookie } });
    expect(out.status).toBe(303);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(401);
  });
});
