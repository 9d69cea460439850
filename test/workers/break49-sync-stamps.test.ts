/**
 * Attack on issue 49, Deliver 1 ("'newer' means later in commit order everywhere") and the
 * simulation's own model (Deliver 8: "a committed sync removes every loc it did not see whose last
 * acknowledged write came before the sync was opened", test/workers/sim/model.ts), with a writer
 * whose stamp disagrees with commit order (a command kind the simulation generates: ±5 s).
 *
 * Broken: a sync's commit decides "written since the sync started" by change stamp, not by commit
 * order (src/adapters/d1/sync.ts `#guard` and `#chunk`: `u.updated_at < started_at`). A PUT
 * acknowledged after the sync was opened, by a writer whose clock is 4 s behind, is deleted by the
 * commit (and counted by its guard): the acknowledged URL is no longer served. One database and a
 * site over two alike.
 *
 * Control: the same steps with the writer's clock in step: the PUT survives the commit.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { call, freshOrigin } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };

beforeAll(async () => {
  await applyD1Migrations(baseEnv.PART_B, baseEnv.TEST_MIGRATIONS);
});
afterEach(() => {
  vi.useRealTimers();
});

const envOf = (origin: string, databases: string | null): Env =>
  ({ ...baseEnv, SITES: origin, SITE_DATABASES: databases === null ? "" : `${origin}=${databases}`, INDEXNOW_ENDPOINT: "", PING_URLS: "" }) as Env;

async function admin(env: Env, origin: string, method: string, path: string, body?: unknown) {
  const res = await call(env, `${origin}/sitemap-admin${path}`, { method, headers: AUTH, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, json: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

/** a, b, c stored; a sync opened; a and b sent to it; then X PUT by a writer `skewMs` off; the sync committed (maxDelete 1). */
async function scenario(databases: string | null, skewMs: number) {
  const origin = freshOrigin("b49-sync-stamp");
  const env = envOf(origin, databases);
  const t0 = Date.UTC(2026, 10, 1, 12);
  vi.setSystemTime(t0);
  expect(
    (
      await admin(
        env,
        origin,
        "PUT",
        "/urls",
        ["/a", "/b", "/c"].map((p) => ({ loc: origin + p })),
      )
    ).status,
  ).toBe(200);
  vi.setSystemTime(t0 + 10_000);
  const open = await admin(env, origin, "POST", "/syncs", { sites: [origin] });
  expect(open.status, JSON.stringify(open.json)).toBe(201);
  const id = open.json["id"] as string;
  vi.setSystemTime(t0 + 11_000);
  expect(
    (
      await admin(
        env,
        origin,
        "PUT",
        `/syncs/${id}/urls`,
        ["/a", "/b"].map((p) => ({ loc: origin + p })),
      )
    ).status,
  ).toBe(200);
  // Acknowledged after the sync's open answered, by a writer whose clock reads `skewMs` off.
  vi.setSystemTime(t0 + 12_000 + skewMs);
  expect((await admin(env, origin, "PUT", "/urls", [{ loc: `${origin}/x` }])).status).toBe(200);
  vi.setSystemTime(t0 + 13_000);
  let commit = await admin(env, origin, "POST", `/syncs/${id}/commit`, { maxDelete: 1 });
  for (let i = 0; i < 10 && commit.json["done"] !== true; i++) commit = await admin(env, origin, "POST", `/syncs/${id}/commit`, { maxDelete: 1 });
  const x = await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(`${origin}/x`)}`, { headers: AUTH });
  return { deleted: commit.json["deleted"], x: x.status };
}

describe("a PUT acknowledged after a sync opened, stamped before it (issue 49 Deliver 1/8)", () => {
  for (const databases of [null, "DB,PART_B"]) {
    it(`broken (${databases ?? "one database"}): the sync's commit deletes it`, async () => {
      // Observed on main: deleted 2 (c and x), x answers 404. Expected: deleted 1 (c), x 200.
      expect(await scenario(databases, -4_000)).toEqual({ deleted: 1, x: 200 });
    });

    it(`control (${databases ?? "one database"}): the writer's clock in step, it survives`, async () => {
      expect(await scenario(databases, 0)).toEqual({ deleted: 1, x: 200 });
    });
  }
});
