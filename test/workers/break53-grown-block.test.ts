/**
 * Issue 53 ("blocks"), tester break53: a block's key range is fixed when its shard is planned, but
 * a record keeps its key when it moves to another section, so records moved in land in the blocks
 * already planned there and a block grows without bound (it is never cut again). The claim: one
 * changed URL reads about its block, ≤ 2,500 rows in the whole regeneration run, and each stored
 * block holds about BLOCK_ROWS (1,000) URLs.
 *
 * Set-up: three sections written interleaved (their keys alternate), each shard planned with blocks
 * of 1,000 of its own records; then every record of two sections moves into the third. Its first
 * block's key range now holds ~3,000 live URLs.
 */
import { describe, expect, it } from "vitest";
import { type DemoInput, demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { listed, manifestOf, newSite, observedDeps, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);

/** `count` records of each of `sections`, interleaved record by record (so their keys alternate). */
function interleaved(origin: string, sections: readonly string[], count: number): DemoInput[] {
  const per = sections.map((s) => demoSection(origin, s, count));
  const out: DemoInput[] = [];
  for (let i = 0; i < count; i++) for (const records of per) out.push(records[i]!);
  return out;
}

describe("break53: a block grown by records moved in", () => {
  it("one changed URL after two sections moved into a third reads ≤ 2,500 rows", async () => {
    const site = newSite("b53-grown");
    const sections = ["alpha", "beta", "gamma"];
    await write(site, interleaved(site.origin, sections, 1_500), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const [gamma] = listed(await manifestOf(site)).filter((s) => s.section === "gamma");
    // Two blocks of gamma's own records: 1,000 and 500.
    expect(gamma!.pageStarts).toHaveLength(2);

    // alpha and beta move into gamma (same locs, new section): their keys fall in gamma's blocks.
    const moved = [...demoSection(site.origin, "alpha", 1_500), ...demoSection(site.origin, "beta", 1_500)].map((r) => ({
      ...r,
      section: "gamma",
    }));
    await write(site, moved, PAST + 1_000);
    await regenerateSite(o.deps, site.origin);
    const [after] = listed(await manifestOf(site)).filter((s) => s.section === "gamma");
    expect(after!.urlCount).toBe(4_500);

    // One URL of gamma changes.
    const [one] = demoSection(site.origin, "gamma", 1, 10);
    await write(site, [{ ...one, lastmod: "2026-07-07" }]);
    o.reset();
    const run = await regenerateSite(o.deps, site.origin);
    expect(run.changed).toEqual([`gamma-${after!.n}`]);
    // What one change is claimed to cost (about one block of ~1,000 URLs).
    expect(o.rows()).toBeLessThanOrEqual(2_500);
  });

  it("blocks of a shard that took in moved records stay about BLOCK_ROWS URLs", async () => {
    const site = newSite("b53-grown-size");
    const sections = ["s1", "s2", "s3", "s4", "s5", "s6"];
    await write(site, interleaved(site.origin, sections, 1_200), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const moved = sections.slice(0, 5).flatMap((s) => demoSection(site.origin, s, 1_200).map((r) => ({ ...r, section: "s6" })));
    await write(site, moved, PAST + 1_000);
    await regenerateSite(o.deps, site.origin);
    // A full pass plans the same: the blocks stay where they were planned.
    await regenerateSite(o.deps, site.origin, { full: true });
    const [s6] = listed(await manifestOf(site)).filter((s) => s.section === "s6");
    expect(s6!.urlCount).toBe(7_200);
    const blocks = s6!.pageStarts!.length;
    // 7,200 URLs in blocks of about 1,000 (a fresh plan cuts 8): not two blocks of 6,000 and 1,200.
    expect.soft(blocks).toBeGreaterThanOrEqual(7);

    // And one change in the big block: a splice (not a whole-shard pass).
    const [one] = demoSection(site.origin, "s6", 1, 10);
    await write(site, [{ ...one, lastmod: "2026-07-07" }]);
    o.reset();
    const run = await regenerateSite(o.deps, site.origin);
    expect.soft(run.shardsSpliced).toBe(1);
    expect.soft(o.rows()).toBeLessThanOrEqual(2_500);
  });
});
