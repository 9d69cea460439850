/**
 * Hostile review of issue 50, Deliver item 9 ("authorization refusals counted apart, never evicting
 * accepted writes") with item 3 (a site token's writes per minute). A write the rate limit refuses
 * (429 `too_many_writes`, src/admin/auth/write-limiter.ts) wrote nothing, yet src/admin/audit.ts
 * counts apart only 401/403/404 and the browser refusals: a 429 is an audit row, and the trail keeps
 * the site's newest AUDIT_KEPT (1,000) rows. Past the limit every further request is a free 429
 * (refused before its body is read), so whoever holds the token (a leaked one, a runaway script)
 * pushes the site's accepted writes out of its trail as fast as it can send, where accepted writes
 * themselves could do it at most 120 a minute. Expected: a site's accepted writes stay in its trail
 * whatever number of writes are refused. A failing case here is a finding, not a flaky test.
 *
 * The site has a full trail (AUDIT_KEPT accepted writes of earlier days, written as the store writes
 * them), then spends its minute's 120 writes and sends 100 more.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AUDIT_KEPT } from "../../src/admin-state/store.ts";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

const LIMIT = 120; // wrangler.jsonc SITE_WRITE_LIMITER: 120 a minute
const REFUSED = 100;

const put = (e: Env, origin: string, token: string, path: string) =>
  call(e, `${origin}/sitemap-admin/urls`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify([{ loc: `${origin}/${path}` }]),
  });

const accepted = async (e: Env, origin: string): Promise<number> =>
  (await e.DB.prepare("SELECT COUNT(*) AS n FROM admin_audit WHERE origin = ?1 AND status = 200").bind(origin).first<number>("n")) ?? 0;

describe("a site token's writes refused by its rate limit", () => {
  it("leave the site's accepted writes in its audit trail", async () => {
    const e = { ...baseEnv } as Env;
    const { origin, token } = await registeredSite(e, "trail");
    const days = Date.now() - 10 * 86_400_000;
    await e.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO admin_audit (origin, at, who, method, resource, records, status)
       SELECT ?1, ?3 + i * 60000, 'site token', 'PUT', '/sitemap-admin/urls', 1, 200 FROM n`,
    )
      .bind(origin, AUDIT_KEPT, days)
      .run();
    for (let i = 0; i < LIMIT; i++) expect((await put(e, origin, token, `p${i}`)).status).toBe(200);
    expect(await accepted(e, origin)).toBe(AUDIT_KEPT);
    // The minute's writes are spent: what follows is refused before it is read. The limiter's
    // window is a clock minute, so a run that crosses one gets a fresh 120 first: count refusals.
    let refused = 0;
    for (let sent = 0; refused < REFUSED && sent < 4 * LIMIT; sent++) if ((await put(e, origin, token, `over${sent}`)).status === 429) refused++;
    expect(refused).toBe(REFUSED);
    expect(await accepted(e, origin)).toBe(AUDIT_KEPT);
  });
});
