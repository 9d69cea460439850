/**
 * The regeneration reads D1's change feed in commit order (issue 49): the rows of one batch are
 * numbered in the batch's order, not in key order, and with one stamp. Every shard one of them lies
 * in is rendered again, whatever that order (generated: the simulation, seed 77, found a
 * batch of keys 1, 21, 11 whose middle shard kept its old snapshot while changes of one stamp were
 * still folded into key intervals, which only a stamp-ordered feed reads in key order).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { listed, manifestOf, newSite, observedDeps, snapshotXml, write } from "./regen-support.ts";
import { locsOf, text, validRecords } from "./support.ts";

const ROWS = 40;
const CHANGED = "0.4321";

/** loc → priority of every `<url>` of every listed shard's snapshot. */
async function snapshotPriorities(site: ReturnType<typeof newSite>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const shard of listed(await manifestOf(site))) {
    expect(shard.snapshot, `${shard.section}-${shard.n}`).toBeTruthy();
    for (const [, entry] of text(await snapshotXml(site, shard.snapshot!)).matchAll(/<url>([\s\S]*?)<\/url>/g)) {
      out.set(locsOf(`<urlset><url>${entry}</url></urlset>`)[0]!, /<priority>([^<]*)<\/priority>/.exec(entry!)?.[1] ?? "");
    }
  }
  return out;
}

describe("regeneration: changes read in commit order", () => {
  it("re-renders every shard a batch changed, whatever order its rows commit in", async () => {
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray([...Array(ROWS).keys()], { minLength: 1, maxLength: 12 }), async (picked) => {
        const site = newSite("regen-order", { MAX_URLS_PER_SHARD: "10" });
        const rows = demoSection(site.origin, "pages", ROWS);
        await write(site, rows);
        const o = observedDeps(site);
        await regenerateSite(o.deps, site.origin);
        // One batch, one stamp, in the generated order.
        await write(
          site,
          picked.map((i) => ({ ...rows[i]!, priority: Number(CHANGED) })),
        );
        const run = await regenerateSite(o.deps, site.origin);
        expect(run.changesRead).toBe(picked.length);
        const served = await snapshotPriorities(site);
        expect(served.size).toBe(ROWS);
        const locs = validRecords(site.env, rows).map((r) => r.loc); // as stored and served (normalised)
        const changed = new Set(picked.map((i) => locs[i]!));
        for (const [loc, priority] of served) expect(priority === CHANGED, loc).toBe(changed.has(loc));
      }),
      { numRuns: 12 },
    );
  });
});
