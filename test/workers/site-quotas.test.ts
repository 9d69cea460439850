/**
 * Issue 50, quotas per site: a registered site's token writes at most 120 times a minute
 * (SITE_WRITE_LIMITER, Cloudflare's Rate Limiting binding). The 121st write is 429 with Retry-After
 * and writes nothing; another site's token is not held up, nor are the site's own reads, nor the
 * platform's token.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer } from "./support/admin.ts";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

const registered = (e: Env) => registeredSite(e, "quota");

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
