import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Site, manifestOf, newSite, write } from "./regen-support.ts";
import { runCron } from "./support/jobs.ts";
import { call } from "./support.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

async function cron(e: Env): Promise<void> {
  await runCron(e);
}

describe("a bad configuration variable", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("of the core answers 503 + Retry-After that names nothing of ours; the log names the variable and rule, not the value", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await call({ ...env, SITES: "http://localhost:8787", MAX_URLS_PER_SHARD: "lots" } as Env, "http://localhost:8787/sitemap.xml");
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toMatch(/^\d+$/);
    const body = await res.text();
    expect(body).toBe("503 Service Unavailable\n");
    expect(log).toHaveBeenCalledWith("configuration error: MAX_URLS_PER_SHARD must be a whole number from 1 to 50000");
    expect(JSON.stringify(log.mock.calls)).not.toContain("lots");
  });

  describe("of an optional feature (INDEXNOW_KEY=short, a typo in `wrangler secret put`)", () => {
    let site: Site;

    it("leaves robots.txt, the index and the shards answering 200", async () => {
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      site = newSite("bad-indexnow", { INDEXNOW_KEY: "short", ROBOTS_ORIGIN_URL: "none", MAX_URLS_PER_SHARD: "2" });
      await write(
        site,
        ["a", "b", "c"].map((p) => ({ loc: `${site.origin}/${p}` })),
      );
      for (const path of ["/robots.txt", "/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-pages-2.xml"]) {
        const res = await call(site.env, site.origin + path);
        expect(res.status, path).toBe(200);
        expect(await res.text(), path).not.toMatch(/INDEXNOW|configuration/);
      }
      // The IndexNow key file is part of the feature that is off.
      expect((await call(site.env, `${site.origin}/sitemap-indexnow-short.txt`)).status).toBe(404);
    });

    it("still regenerates on the cron, and the status names the variable and its rule, never the value", async () => {
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      vi.spyOn(console, "log").mockImplementation(() => undefined);
      await cron(site.env);
      const manifest = await manifestOf(site);
      expect(manifest.shards.filter((s) => s.urlCount > 0).every((s) => s.snapshot)).toBe(true);
      const res = await call(site.env, `${site.origin}/sitemap-admin/status`, { headers: ADMIN });
      expect(res.status).toBe(200);
      const status = (await res.json()) as { configuration: unknown; regeneration: { enabled: boolean } };
      expect(status.configuration).toEqual({
        ok: false,
        disabled: [{ feature: "indexnow", variable: "INDEXNOW_KEY", rule: 'must be 8 to 128 characters of a-z, A-Z, 0-9 and "-"' }],
      });
      expect(status.regeneration.enabled).toBe(true);
      expect(JSON.stringify(status)).not.toContain('"short"');
    });
  });

  it("of the admin limits turns ingest off with a 503 that says which variable; reading still works", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const site = newSite("bad-admin", { ADMIN_MAX_BYTES: "3" });
    const put = await call(site.env, `${site.origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...ADMIN, "Content-Type": "application/json" },
      body: JSON.stringify([{ loc: `${site.origin}/a` }]),
    });
    expect(put.status).toBe(503);
    expect(await put.json()).toEqual({
      error: "unavailable",
      message: "ingest is off: configuration error: ADMIN_MAX_BYTES must be a whole number from 1024 to 2097152",
    });
    expect((await call(site.env, `${site.origin}/sitemap-admin/status`, { headers: ADMIN })).status).toBe(200);
  });
});
