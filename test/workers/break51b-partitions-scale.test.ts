/**
 * break51b, issue 51 Deliver 3: "no loop over a site's configuration in one invocation". A site's
 * database list (SITE_DATABASES) is configuration too, and may name up to 64 databases
 * (src/config/variables/sites.ts MAX_PARTITIONS). The test runtime binds four (DB, PART_B..D), so the
 * growth is measured: a request of a site over four databases against the same site over one, the
 * same records. One query cannot span databases, so some reads per database are inherent; what
 * grows per database must still fit 1,000 at 64 of them (extrapolated linearly from 1 and 4: the
 * reads per database do not depend on the count). Measured: status 18 → 47 (≈ 627 at 64), the
 * index 3 → 10 (≈ 150 at 64): held, with status at ~63% of the budget from its database list alone.
 * Through the Worker's entry, real D1, enforcing meter.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer } from "./support/admin.ts";
import { report, watchMeters } from "./support/meters.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const DATABASES = ["DB", "PART_B", "PART_C", "PART_D"] as const;
/** SITE_DATABASES' most (src/config/variables/sites.ts). */
const MAX_PARTITIONS = 64;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

/** A site over `n` databases with 400 records, and the service calls of one request to `path` on it (after a first, warming one). */
async function cost(n: number, path: string): Promise<number> {
  const origin = freshOrigin(`b51b-parts-${n}`);
  const e = {
    ...baseEnv,
    URL_SOURCE: "d1",
    SITES: origin,
    SITE_DATABASES: `${origin}=${DATABASES.slice(0, n).join(",")}`,
    MANIFEST_CACHE_TTL: "0",
  } as Env;
  const put = await call(e, `${origin}/sitemap-admin/urls`, {
    method: "PUT",
    headers: { ...bearer, "Content-Type": "application/json" },
    body: JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ loc: `${origin}/p/${i}` }))),
  });
  expect(put.status).toBe(200);
  await (await call(e, `${origin}${path}`, { headers: bearer })).text();
  const watch = watchMeters();
  const res = await call(e, `${origin}${path}`, { headers: bearer });
  await res.text();
  vi.restoreAllMocks();
  expect(res.status).toBe(200);
  expect(watch.refused).toEqual([]);
  return watch.largest();
}

describe("Deliver 3: a site's database list does not grow what one request reads", () => {
  it.each(["/sitemap-admin/status", "/sitemap.xml"])(
    "%s: what grows per database fits 1,000 at 64 databases",
    async (path) => {
      vi.spyOn(console, "log").mockImplementation(() => undefined);
      const one = await cost(1, path);
      const four = await cost(4, path);
      const perDatabase = (four - one) / 3;
      report(
        `${path}: ${one} service calls over one database, ${four} over four; at ${MAX_PARTITIONS}: ~${Math.round(one + perDatabase * (MAX_PARTITIONS - 1))}`,
      );
      expect(four).toBeGreaterThanOrEqual(one);
      expect(one + perDatabase * (MAX_PARTITIONS - 1)).toBeLessThanOrEqual(1_000);
    },
    120_000,
  );
});
