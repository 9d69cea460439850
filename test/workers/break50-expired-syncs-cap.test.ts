/**
 * Hostile review of issue 50, Deliver item 3 (open syncs per site, "refused with a clear error past
 * the cap"). The refusal says the way out: "commit or abort one, or let it expire". But the cap
 * counts every sync whose state is open or committing (src/adapters/d1/sync.ts `start` and
 * `active`), whatever its expiresAt: a sync past its expiry is only marked expired by the sync sweep,
 * which the hourly cron plans. So a site whose client crashed with its 10 syncs open is still
 * refused after they expired, until the next sweep (up to an hour later), and its own status lists
 * them as open syncs past their expiry. Expected: once the site's open syncs have expired, a new one
 * starts (201), as the refusal says (break50-holds-sync-cap.test.ts: concurrent starts hold the cap).
 * A failing case here is a finding, not a flaky test.
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_OPEN_SYNCS_PER_SITE } from "../../src/admin/syncs.ts";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const start = (e: Env, origin: string, token: string) =>
  call(e, `${origin}/sitemap-admin/syncs`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ sites: [origin] }),
  });

describe("a site's open syncs", () => {
  it("once expired, leave room for a new one, as the refusal's 'or let it expire' says", async () => {
    const e = { ...baseEnv } as Env;
    const { origin, token } = await registeredSite(e, "expiry");
    let expiresAt = 0;
    for (let i = 0; i < MAX_OPEN_SYNCS_PER_SITE; i++) {
      const res = await start(e, origin, token);
      expect(res.status).toBe(201);
      expiresAt = Math.max(expiresAt, Date.parse(((await res.json()) as { expiresAt: string }).expiresAt));
    }
    const refused = await start(e, origin, token);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toContain("let it expire");
    vi.spyOn(Date, "now").mockReturnValue(expiresAt + 1_000);
    const later = await start(e, origin, token);
    expect({ status: later.status, body: await later.text() }).toMatchObject({ status: 201 });
  });
});
