/**
 * Hostile review of issue 50, Deliver item 4 (settings that name hosts) and the isolation the issue
 * is named for. A registered site may mirror any host of its registrable domain, siblings included
 * (src/registry/own-host.ts: "a registrable domain has one registrant"), and any host at all under
 * SITE_SETTINGS_ANY_HOST. But a mirror's state is kept by its URL alone — the `mirrors` row
 * (migrations/0006) and its job's chain, `jobs` keyed by (kind, URL) — not by the site mirroring it.
 * So a second tenant naming the URL another tenant mirrors (its sibling host under a platform's
 * domain, the layout the earlier review took as usual) shares that tenant's mirror state and chain.
 * Expected: the owner's records are mirrored as they are without the other tenant. Observed: none
 * is, because no mirror job runs at all: the registry sweep plans (mirror, URL) once per tenant
 * (src/jobs/registry-sweep.ts), both go to one `requestMany` statement, the row keeps the first
 * tenant's chain while the statement's answer is matched against the last one's
 * (src/adapters/d1/job-state.ts `mine`), so neither message is sent, at every heartbeat. A failing
 * case here is a finding, not a flaky test.
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { newSiteToken, tokenHash } from "../../src/registry/token.ts";
import { runCron } from "./support/jobs.ts";
import { url, urlset } from "./support/mirror-remote.ts";

afterEach(() => vi.restoreAllMocks());

const label = () => Math.random().toString(36).slice(2, 9);

async function register(e: Env, origin: string, settings: Record<string, string>): Promise<void> {
  const now = Date.now();
  const site = { origin, settings, tokenHash: await tokenHash(newSiteToken()), createdAt: now, updatedAt: now, deletedAt: null };
  expect(await new D1SiteRegistry(e.DB).create(site)).toBe(true);
}

const records = async (e: Env, origin: string): Promise<number> =>
  (await e.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND deleted = 0").bind(origin).first<number>("n")) ?? 0;

/**
 * Y mirrors its own sitemap; X, another tenant, names the same URL: from a sibling host under Y's
 * domain, or from a domain of its own where SITE_SETTINGS_ANY_HOST allows any host; "none": no X.
 */
async function mirrored(other: "sibling" | "any-host" | "none"): Promise<number> {
  vi.spyOn(console, "log").mockImplementation(() => undefined);
  vi.spyOn(console, "warn").mockImplementation(() => undefined);
  const e = { ...baseEnv, ...(other === "any-host" ? { SITE_SETTINGS_ANY_HOST: "true" } : {}) } as Env;
  const domain = `shop-${label()}.test`;
  const y = `https://y.${domain}`;
  const mirror = `${y}/sitemap.xml`;
  const body = urlset([url(`${y}/a`), url(`${y}/b`), url(`${y}/c`)]);
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    const target = input instanceof Request ? input.url : String(input);
    return target === mirror ? new Response(body, { headers: { "Content-Type": "application/xml" } }) : new Response("", { status: 404 });
  });
  await register(e, y, { MIRROR_SITEMAPS: mirror });
  if (other === "sibling") await register(e, `https://x.${domain}`, { MIRROR_SITEMAPS: mirror });
  if (other === "any-host") await register(e, `https://a.other-${label()}.test`, { MIRROR_SITEMAPS: mirror });
  await runCron(e);
  return records(e, y);
}

describe("a tenant mirroring another tenant's sitemap URL", () => {
  it("from a sibling host leaves the owner's mirror as it is alone: its 3 records mirrored", async () => {
    expect(await mirrored("sibling")).toBe(3);
  });

  it("from any host, where SITE_SETTINGS_ANY_HOST allows it, leaves the owner's mirror as it is alone", async () => {
    expect(await mirrored("any-host")).toBe(3);
  });

  it("control: the owner alone has its 3 records mirrored", async () => {
    expect(await mirrored("none")).toBe(3);
  });
});
