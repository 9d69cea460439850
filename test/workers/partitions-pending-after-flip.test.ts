/**
 * What status counts as still to announce (the change feed's `pending`, per partition) during a
 * move and after its flip (issue 49, Deliver 2): only the rows each partition serves. The old
 * partitions keep the rows they gave away until the purge, and a database a move fills holds
 * copies served from the flip on; counted, a site's pending changes were its records and then some.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { servicesFor } from "../../src/services.ts";
import type { Services } from "../../src/services-type.ts";
import { call, freshOrigin } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const DATABASES = ["DB", "PART_B", "PART_C"] as const;
/** Before any change: every change of the site is pending. */
const START = { stamp: 0, key: 0, seq: 0 };

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, count: number): Env =>
  ({ ...baseEnv, SITES: origin, SITE_DATABASES: `${origin}=${DATABASES.slice(0, count).join(",")}`, INDEXNOW_ENDPOINT: "", PING_URLS: "" }) as Env;

/** Each partition's pending changes from the start, in partition order. */
async function pending(site: Services, origin: string): Promise<number[]> {
  return Promise.all(site.partitions!.map((part) => part.store.changes.pending(origin, START)));
}

describe("the changes a partition has still to announce, across a move", () => {
  it("count only the rows it serves: none in the database being filled, none a flip gave away", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("pending-after-flip");
    const locs = Array.from({ length: 120 }, (_, i) => `${origin}/page/${i}`);
    const two = envOf(origin, 2);
    const put = await call(two, `${origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...AUTH, "Content-Type": "application/json" },
      body: JSON.stringify(locs.map((loc) => ({ loc, lastmod: "2026-03-01" }))),
    });
    expect(put.status).toBe(200);
    const homes = (n: number) => [0, 1, 2].slice(0, n).map((p) => locs.filter((loc) => partitionOf(loc, n) === p).length);
    expect(await pending(servicesFor(two, origin), origin)).toEqual(homes(2));

    const site = servicesFor(envOf(origin, 3), origin);
    let step = await rebalanceStep(site, origin, { maxRows: 50 });
    for (let i = 0; i < 30 && step.state !== "flipped"; i++) {
      // The copies in the new database announce nothing before the flip; the old homes still serve every row.
      expect(await pending(site, origin), `during the move (${step.state})`).toEqual([...homes(2), 0]);
      step = await rebalanceStep(site, origin, { maxRows: 50 });
    }
    expect(step.state).toBe("flipped");
    // After it: each loc counted once, by its new home; the old homes' hidden copies not at all.
    const after = await pending(site, origin);
    expect(after.reduce((a, b) => a + b, 0)).toBe(locs.length);
    expect(after).toEqual(homes(3));
  });
});
