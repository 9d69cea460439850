/**
 * Hostile review of issue 50, Deliver item 1: site A's own token on A's own host, naming B's things
 * in spellings the matrix does not try. B's locs with its host written as a URL parser would still
 * reach it (case, a trailing dot, userinfo in front of it, backslashes, percent-encoding, a
 * protocol-relative form), generated; and B's sync named with a body that breaks the route's schema,
 * where the schema validator runs before the handler's ownership check. Each must be refused and
 * leave B as it was. A failing case here is a finding, not a flaky test.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { call } from "./support.ts";

const label = () => Math.random().toString(36).slice(2, 9);
const REFUSED = [401, 403, 404];

/** A platform and tenants A and B registered through its API (plain http on a test port: local hosts). */
async function deployment() {
  const platformOrigin = `http://platform-${label()}.test:8787`;
  const e = siteEnv(platformOrigin);
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
  return { e, a: await register(), b: await register() };
}

const jsonInit = (token: string, method: string, body: unknown): RequestInit => ({
  method,
  headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

/** B's records as stored: every row of `urls` naming B's origin, or whose loc is on B's host in any spelling. */
async function bRows(e: Env, bOrigin: string): Promise<string> {
  const host = new URL(bOrigin).hostname;
  const { results } = await e.DB.prepare("SELECT * FROM urls WHERE origin = ?1 OR lower(loc) LIKE ?2 ORDER BY loc").bind(bOrigin, `%${host}%`).all();
  return JSON.stringify(results);
}

/** Ways to write a URL whose host, as `new URL` reads it, is B's (or that a lax reader could take for B's). */
const spellings: ((b: URL, a: URL, path: string) => string)[] = [
  (b, _a, p) => `http://${b.hostname.toUpperCase()}:${b.port}/${p}`,
  (b, _a, p) => `HTTP://${b.host}/${p}`,
  (b, _a, p) => `http://${b.hostname}.:${b.port}/${p}`,
  (b, a, p) => `http://${a.host}@${b.host}/${p}`,
  (b, a, p) => `http://${a.hostname}:${a.port}\\@${b.host}/${p}`,
  (b, _a, p) => `http:\\\\${b.host}\\${p}`,
  (b, _a, p) => `http://${b.hostname.replace(".", "%2E")}:${b.port}/${p}`,
  (b, _a, p) => `//${b.host}/${p}`,
  (b, _a, p) => ` http://${b.host}/${p}`,
  (b, _a, p) => `http://${b.host}/${p}#${p}`,
  (b, _a, p) => `http://${b.hostname}:0${b.port}/${p}`,
  (b, _a, p) => `http://${b.host}/${p}`,
];

describe("item 1: A's token on A's host naming B's locs in other spellings", () => {
  it("every write naming them is refused and B's records are as they were (generated)", async () => {
    const { e, a, b } = await deployment();
    const bLocs = ["one", "two"].map((p) => `${b.origin}/${p}`);
    expect(
      (
        await call(
          e,
          `${b.origin}/sitemap-admin/urls`,
          jsonInit(
            b.token,
            "PUT",
            bLocs.map((loc) => ({ loc })),
          ),
        )
      ).status,
    ).toBe(200);
    const started = await call(e, `${a.origin}/sitemap-admin/syncs`, jsonInit(a.token, "POST", { sites: [a.origin], maxDelete: 0 }));
    expect(started.status).toBe(201);
    const aSync = ((await started.json()) as { id: string }).id;
    const before = await bRows(e, b.origin);
    for (const loc of bLocs) expect(before).toContain(loc);
    const aUrl = new URL(a.origin);
    const bUrl = new URL(b.origin);

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...spellings.keys()),
        fc.constantFrom("one", "two", "fresh"),
        fc.constantFrom(
          { method: "PUT", path: "/sitemap-admin/urls" },
          { method: "DELETE", path: "/sitemap-admin/urls" },
          { method: "PUT", path: `/sitemap-admin/syncs/${aSync}/urls` },
          { method: "POST", path: "/sitemap-admin/syncs" },
        ),
        async (spelling, page, route) => {
          const loc = spellings[spelling]!(bUrl, aUrl, page);
          const body = route.path === "/sitemap-admin/syncs" ? { sites: [loc.replace(/\/[^/]*$/, "")], maxDelete: 0 } : [{ loc }];
          const res = await call(e, `${a.origin}${route.path}`, jsonInit(a.token, route.method, body));
          expect([...REFUSED, 400, 422], `${route.method} ${route.path} naming ${JSON.stringify(loc)}: ${res.status}`).toContain(res.status);
          expect(await bRows(e, b.origin), `after ${route.method} ${route.path} naming ${JSON.stringify(loc)}`).toBe(before);
        },
      ),
      { numRuns: 40 },
    );
    // A's own sync received nothing of B's: committing it deletes nothing of B's either.
    const aSyncState = (await (await call(e, `${a.origin}/sitemap-admin/syncs/${aSync}`, { headers: { Authorization: `Bearer ${a.token}` } })).json()) as {
      received: number;
    };
    expect(aSyncState.received).toBe(0);
  });
});

describe("item 1: B's sync named by A with a body that breaks the route's schema", () => {
  const bodies = ['{"maxDelete": -1}', '{"maxDelete": "all"}', '{"unknown": true}', "{", "[]"];
  it.each(bodies)("commit with %s on A's host is 404 like any foreign sync, and B's sync stays open", async (body) => {
    const { e, a, b } = await deployment();
    const started = await call(e, `${b.origin}/sitemap-admin/syncs`, jsonInit(b.token, "POST", { sites: [b.origin], maxDelete: 1 }));
    expect(started.status).toBe(201);
    const bSync = ((await started.json()) as { id: string }).id;
    const res = await call(e, `${a.origin}/sitemap-admin/syncs/${bSync}/commit`, jsonInit(a.token, "POST", body));
    expect(res.status, `${body}: ${await res.clone().text()}`).toBe(404);
    const state = (await (await call(e, `${b.origin}/sitemap-admin/syncs/${bSync}`, { headers: { Authorization: `Bearer ${b.token}` } })).json()) as {
      state: string;
    };
    expect(state.state).toBe("open");
  });
});

describe("item 1, as the issue's check states it: A's token on A's host naming B's resources is refused 401, 403 or 404", () => {
  it("reading B's record and starting a sync over B answer one of those (not 422), and B is as it was", async () => {
    const { e, a, b } = await deployment();
    expect((await call(e, `${b.origin}/sitemap-admin/urls`, jsonInit(b.token, "PUT", [{ loc: `${b.origin}/one` }]))).status).toBe(200);
    const before = await bRows(e, b.origin);
    const calls: [string, string, RequestInit][] = [
      ["GET", `/sitemap-admin/urls?loc=${encodeURIComponent(`${b.origin}/one`)}`, { headers: { Authorization: `Bearer ${a.token}` } }],
      ["PUT", "/sitemap-admin/urls", jsonInit(a.token, "PUT", [{ loc: `${b.origin}/one` }])],
      ["DELETE", "/sitemap-admin/urls", jsonInit(a.token, "DELETE", [{ loc: `${b.origin}/one` }])],
      ["POST", "/sitemap-admin/syncs", jsonInit(a.token, "POST", { sites: [b.origin] })],
      ["POST", "/sitemap-admin/syncs", jsonInit(a.token, "POST", { sites: [a.origin, b.origin] })],
    ];
    const answers: string[] = [];
    for (const [method, path, init] of calls) answers.push(`${method} ${path}: ${(await call(e, `${a.origin}${path}`, init)).status}`);
    expect(answers.filter((answer) => !/: 40[134]$/.test(answer))).toEqual([]);
    expect(await bRows(e, b.origin)).toBe(before);
  });
});
