/**
 * The variables win over a purge (issue 50): a registered site deleted, then named by SITES in a
 * deploy before its purge ran (the platform taking the host back). Its records are SITES' site's
 * by then, so the purge removes only its registry row and none of those records; the platform API
 * already refuses to DELETE an origin SITES serves (break50c-variables-win.test.ts), this is the one
 * deleted before.
 */
import { describe, expect, it, vi } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { drain, withJobs } from "./support/jobs.ts";
import { call, freshOrigin } from "./support.ts";

const HOUR = 3_600_000;

describe("the purge of a deleted site SITES now serves", () => {
  it("removes its registry row and none of SITES' site's records", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const platformOrigin = freshOrigin("platform");
    // Every job queued is recorded, and delivered with the deployment as it is after the deploy.
    const { env: before, queue } = withJobs(siteEnv(platformOrigin));
    const x = freshOrigin("taken-back");
    const json = { ...bearer, "Content-Type": "application/json" };
    expect(
      (await call(before, `${platformOrigin}/sitemap-admin/sites`, { method: "POST", headers: json, body: JSON.stringify({ origin: x }) })).status,
    ).toBe(201);
    expect((await call(before, `${platformOrigin}/sitemap-admin/sites/${new URL(x).host}`, { method: "DELETE", headers: bearer })).status).toBe(202);
    // The deploy naming it, and SITES' site taking records before the purge ran; its deletion then an hour old (settled).
    const after: Env = { ...siteEnv(`${platformOrigin},${x}`), JOBS: before.JOBS };
    const locs = ["a", "b", "c"].map((p) => `${x}/${p}`);
    expect(
      (await call(after, `${x}/sitemap-admin/urls`, { method: "PUT", headers: json, body: JSON.stringify(locs.map((loc) => ({ loc }))) })).status,
    ).toBe(200);
    await after.DB.prepare("UPDATE registry_sites SET deleted_at = ?2 WHERE origin = ?1")
      .bind(x, Date.now() - HOUR)
      .run();
    expect((await call(after, `${platformOrigin}/sitemap-admin/sites/${new URL(x).host}`, { method: "DELETE", headers: bearer })).status).toBe(409);
    expect(queue.pending.map((m) => m.body.kind)).toContain("site-purge");
    await drain(after, queue);
    expect(await after.DB.prepare("SELECT origin FROM registry_sites WHERE origin = ?1").bind(x).first()).toBeNull();
    for (const loc of locs)
      expect((await call(after, `${x}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: bearer })).status, loc).toBe(200);
    vi.restoreAllMocks();
  });
});
