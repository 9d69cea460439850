/**
 * Hostile review of issue 50, Deliver item 9: authorization refusals counted apart, never evicting
 * accepted writes. Another tenant's token sent to B's host is the authorization refusal B most needs
 * to see, and docs/tenants.md says it counts no failed sign-in; so it must be counted among B's
 * refusals, or it is counted nowhere at all. And a flood of them leaves B's accepted writes in its
 * trail. A failing case here is a finding, not a flaky test.
 */
import { describe, expect, it } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { auditOf, bearer } from "./support/admin.ts";
import { call } from "./support.ts";

const label = () => Math.random().toString(36).slice(2, 9);

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

const put = (token: string, locs: string[]): RequestInit => ({
  method: "PUT",
  headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
  body: JSON.stringify(locs.map((loc) => ({ loc }))),
});

describe("item 9: another tenant's token refused on B's host", () => {
  it("is counted among B's refusals, and a flood of it leaves B's accepted writes in its trail", async () => {
    const { e, a, b } = await deployment();
    expect((await call(e, `${b.origin}/sitemap-admin/urls`, put(b.token, [`${b.origin}/kept`]))).status).toBe(200);
    const flood = 30;
    for (let i = 0; i < flood; i++) {
      const res = await call(e, `${b.origin}/sitemap-admin/urls`, put(a.token, [`${b.origin}/flood-${i}`]));
      expect(res.status).toBe(403);
    }
    const audit = await auditOf(e, b.origin);
    expect(audit.entries.filter((entry) => entry.method === "PUT" && entry.status === 200)).toHaveLength(1);
    const refused = audit.refused.reduce((n, r) => n + r.count, 0);
    expect(refused, JSON.stringify(audit.refused)).toBeGreaterThanOrEqual(flood);
  });
});
