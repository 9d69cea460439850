/**
 * Issue 50, quotas per site (Cloudflare's Rate Limiting bindings, keyed by the site): a registered
 * site's token writes at most 120 times a minute (SITE_WRITE_LIMITER), and its token and its sessions
 * on its host read at most 300 times (SITE_READ_LIMITER). The call past either is 429 with
 * Retry-After and reads or writes nothing; another site is not held up, nor is the platform's token.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, signInForm } from "./support/admin.ts";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

const registered = (e: Env) => registeredSite(e, "quota");

/**
 * The bindings count in windows of the wall clock's minutes (as Cloudflare's do): a test that fills one starts
 * with at least 20 s of it left, or its count would go on in a fresh window.
 */
async function inOneWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

const put = (e: Env, origin: string, headers: Record<string, string>, path: string) =>
  call(e, `${origin}/sitemap-admin/urls`, {
    method: "PUT",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify([{ loc: `${origin}/${path}` }]),
  });

describe("admin writes per site token", () => {
  it("are limited to 120 a minute: the 121st is 429 and writes nothing; others are not held up", async () => {
    const e = { ...baseEnv } as Env;
    const a = await registered(e);
    const b = await registered(e);
    const asA = { Authorization: `Bearer ${a.token}` };
    await inOneWindow();
    for (let i = 0; i < 120; i++) expect((await put(e, a.origin, asA, `p${i}`)).status, `write ${i + 1}`).toBe(200);
    const over = await put(e, a.origin, asA, "over");
    expect(over.status).toBe(429);
    expect(over.headers.get("Retry-After")).toBe("60");
    expect(await over.json()).toMatchObject({ error: "too_many_writes" });
    const loc = (path: string) => `${a.origin}/sitemap-admin/urls?loc=${encodeURIComponent(`${a.origin}/${path}`)}`;
    expect((await call(e, loc("over"), { headers: asA })).status).toBe(404); // a read is not limited, and nothing was written
    expect((await call(e, loc("p0"), { headers: asA })).status).toBe(200);
    expect((await put(e, b.origin, { Authorization: `Bearer ${b.token}` }, "b")).status).toBe(200);
    expect((await put(e, a.origin, bearer, "by-the-platform")).status).toBe(200);
  });
});

describe("admin reads per site", () => {
  it("are limited to 300 a minute, its token's and its session's together: the 301st is 429; others are not held up", async () => {
    const e = { ...baseEnv } as Env;
    const a = await registered(e);
    const b = await registered(e);
    const asA = { Authorization: `Bearer ${a.token}` };
    const signedIn = await call(e, `${a.origin}/sitemap-admin/sign-in`, signInForm(a.token, "198.51.100.91", { Origin: a.origin }));
    expect(signedIn.status).toBe(303);
    const session = { Cookie: signedIn.headers.get("Set-Cookie")!.split(";")[0]! };
    const loc = `${a.origin}/sitemap-admin/urls?loc=${encodeURIComponent(`${a.origin}/p`)}`;
    const status = `${a.origin}/sitemap-admin/status`;
    await inOneWindow();
    for (let i = 0; i < 295; i++) expect((await call(e, loc, { headers: asA })).status, `read ${i + 1}`).toBe(404);
    for (let i = 0; i < 5; i++) expect((await call(e, status, { headers: session })).status, `session read ${i + 1}`).toBe(200);
    for (const headers of [asA, session]) {
      const over = await call(e, status, { headers });
      expect(over.status).toBe(429);
      expect(over.headers.get("Retry-After")).toBe("60");
      expect(await over.json()).toMatchObject({ error: "too_many_reads" });
    }
    // Its writes have their own count; another site's reads and the platform's are not held up.
    expect((await put(e, a.origin, asA, "still-writes")).status).toBe(200);
    expect((await call(e, `${b.origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${b.token}` } })).status).toBe(200);
    expect((await call(e, status, { headers: bearer })).status).toBe(200);
  });
});
