/**
 * Issue 53 ("blocks"), tester break53: changes a bounded run reads but leaves for the next one
 * (REGEN_MAX_SHARDS: the run stops after its first shard; the others are carried as pending
 * shards). The claim: one changed URL reads about its block, ≤ 2,500 rows in the whole run. The
 * run that takes a carried shard no longer knows which keys changed in it.
 */
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { listed, manifestOf, newSite, observedDeps, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);

describe("break53: a change carried to the next run", () => {
  it("a shard left pending by a bounded run is spliced by the next, reading ≤ 2,500 rows", async () => {
    const site = newSite("b53-carried", { MAX_URLS_PER_SHARD: "10000", REGEN_MAX_SHARDS: "1" });
    await write(site, demoSection(site.origin, "pages", 20_000), PAST);
    const o = observedDeps(site);
    // A first site pass bounded to one shard a run: run until converged.
    for (let i = 0; i < 5 && !(await regenerateSite(o.deps, site.origin)).converged; i++);
    const shards = listed(await manifestOf(site));
    expect(shards).toHaveLength(2);
    expect(shards.every((s) => s.snapshot)).toBe(true);

    // One URL changes in each shard; the run takes the first and carries the second.
    const changed = demoSection(site.origin, "pages", 1, 5_000).concat(demoSection(site.origin, "pages", 1, 15_000));
    await write(
      site,
      changed.map((r) => ({ ...r, lastmod: "2026-11-11" })),
      PAST + 1_000,
    );
    o.reset();
    const first = await regenerateSite(o.deps, site.origin);
    expect(first).toMatchObject({ shardsSpliced: 1, pendingShards: 1 });
    expect(o.rows()).toBeLessThanOrEqual(2_500);

    o.reset();
    const second = await regenerateSite(o.deps, site.origin);
    const rows = o.rows();
    expect(second.changed).toEqual(["pages-2"]);
    // The carried change is one URL too: its block, not the shard's 10,000 rows.
    expect({ spliced: second.shardsSpliced, rowsAtMost2500: rows <= 2_500 }, `rows read: ${rows}`).toEqual({ spliced: 1, rowsAtMost2500: true });
  });
});
