/**
 * Issue 53 ("blocks"), tester break53: the browser view pages a shard by its block starts
 * (ShardEntry.pageStarts: "page N of the browser view is the key range [pageStarts[N-1],
 * pageStarts[N])"). Blocks are now fixed when planned, so a page is no longer ~1,000 rows: a block
 * that took in records moved from other sections holds thousands, and the view shows at most
 * 2,000 rows of a page (MAX_KEYSET_ROWS). Every URL of the shard must still be on some page.
 */
import { describe, expect, it } from "vitest";
import { type DemoInput, demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { listed, manifestOf, newSite, observedDeps, write } from "./regen-support.ts";
import { call } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);
const NAVIGATE = {
  "Sec-Fetch-Dest": "document",
  "Sec-Fetch-Mode": "navigate",
  "Sec-Fetch-Site": "none",
  Accept: "text/html,application/xml;q=0.9,*/*;q=0.8",
};

/** Links of the view's URL table. */
function links(html: string): number {
  const start = html.indexOf('<table id="urls">');
  if (start === -1) return 0;
  const body = html.slice(start, html.indexOf("</table>", start));
  return [...body.matchAll(/<tr><td class="n">\d+<\/td>/g)].length;
}

function interleaved(origin: string, sections: readonly string[], count: number): DemoInput[] {
  const per = sections.map((s) => demoSection(origin, s, count));
  const out: DemoInput[] = [];
  for (let i = 0; i < count; i++) for (const records of per) out.push(records[i]!);
  return out;
}

describe("break53: browser view pages are the shard's blocks", () => {
  it("after two sections moved into a third, every URL of its shard is on a page", async () => {
    const site = newSite("b53-view", { EDGE_CACHE_TTL: "0" });
    const sections = ["alpha", "beta", "gamma"];
    await write(site, interleaved(site.origin, sections, 1_500), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const moved = [...demoSection(site.origin, "alpha", 1_500), ...demoSection(site.origin, "beta", 1_500)].map((r) => ({ ...r, section: "gamma" }));
    await write(site, moved, PAST + 1_000);
    await regenerateSite(o.deps, site.origin);
    const [gamma] = listed(await manifestOf(site)).filter((s) => s.section === "gamma");
    expect(gamma!.urlCount).toBe(4_500);

    const url = `${site.origin}/sitemap-gamma-${gamma!.n}.xml`;
    const perPage: number[] = [];
    // Pages of 1,000 (the view's own, not the blocks: a splice that changed which keys are live
    // leaves the page starts to the view's read-through, "without page starts").
    for (let page = 1; page <= Math.ceil(gamma!.urlCount / 1_000); page++) {
      const res = await call(site.env, `${url}?page=${page}`, { headers: NAVIGATE });
      expect(res.status).toBe(200);
      perPage.push(links(await res.text()));
    }
    expect(
      perPage.reduce((a, b) => a + b, 0),
      `rows shown per page: ${perPage.join(", ")}`,
    ).toBe(4_500);
  });
});
