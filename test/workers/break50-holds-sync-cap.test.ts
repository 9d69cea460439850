/**
 * Hostile review of issue 50, Deliver item 3, attacked and held: open syncs per site are capped in the
 * insert itself (src/adapters/d1/sync.ts `start`), so three times the cap's starts sent at once by one
 * site's token pass exactly MAX_OPEN_SYNCS_PER_SITE times; the rest are 429 `too_many_syncs`.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_OPEN_SYNCS_PER_SITE } from "../../src/admin/syncs.ts";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

const start = (e: Env, origin: string, token: string) =>
  call(e, `${origin}/sitemap-admin/syncs`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ sites: [origin] }),
  });

describe("a site's open syncs started at once", () => {
  it("never pass the cap together", async () => {
    const e = { ...baseEnv } as Env;
    const { origin, token } = await registeredSite(e, "burst");
    const answers = await Promise.all(Array.from({ length: 3 * MAX_OPEN_SYNCS_PER_SITE }, () => start(e, origin, token)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_OPEN_SYNCS_PER_SITE);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 429)).toBe(true);
  });
});
