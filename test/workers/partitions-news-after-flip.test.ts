/**
 * The news index during a move and right after its flip (issue 49): the old partitions still hold the rows they
 * gave away, hidden until the purge. The news window's counts — how many news sitemaps the index
 * lists — and its pages must see only served rows, so a site with fewer articles than one news
 * sitemap holds lists one, with each article once, before the flip and after it.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_NEWS_PER_SITEMAP } from "../../src/core/extensions/limits.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { servicesFor } from "../../src/services.ts";
import { call, document, freshOrigin, locsOf } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const DATABASES = ["DB", "PART_B", "PART_C", "PART_D"] as const;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, count: number): Env =>
  ({
    ...baseEnv,
    SITES: origin,
    SITE_DATABASES: `${origin}=${DATABASES.slice(0, count).join(",")}`,
    INDEXNOW_ENDPOINT: "",
    PING_URLS: "",
  }) as Env;

/** The news sitemaps the index lists, and every loc they list (duplicates kept). */
async function newsCrawl(env: Env, origin: string): Promise<{ sitemaps: string[]; locs: string[] }> {
  const sitemaps = locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => u.includes("/sitemap-news"));
  const locs: string[] = [];
  for (const url of sitemaps) {
    const res = await call(env, url);
    // A listed sitemap that is not there is what a crawler finds: left out of `locs`, counted in `sitemaps`.
    if (res.status === 200) locs.push(...locsOf(await res.text()));
  }
  return { sitemaps, locs };
}

describe("the news index during a move and right after its flip", () => {
  it("counts and lists only served articles: one news sitemap, each article once", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("news-after-flip");
    const three = envOf(origin, 3);
    const now = Date.now();
    // Most of a news sitemap's worth: with the moved rows' hidden copies counted, more than one.
    const articles = Array.from({ length: 900 }, (_, i) => ({
      loc: `${origin}/news/${i}`,
      news: { publication: { name: "Paper", language: "en" }, publication_date: new Date(now - i * 60_000).toISOString(), title: `Story ${i}` },
    }));
    const put = await call(three, `${origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...AUTH, "Content-Type": "application/json" },
      body: JSON.stringify(articles),
    });
    expect(put.status).toBe(200);
    const locs = articles.map((a) => a.loc);
    const moving = locs.filter((loc) => partitionOf(loc, 4) === 3).length;
    expect(locs.length + moving).toBeGreaterThan(MAX_NEWS_PER_SITEMAP);
    const before = await newsCrawl(three, origin);
    expect(before.sitemaps).toHaveLength(1);
    expect(before.locs.toSorted()).toEqual(locs.toSorted());

    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    // During the move too: the new database holds copies, served from the flip on only.
    let step = await rebalanceStep(site, origin);
    for (let i = 0; i < 30 && step.state !== "flipped"; i++) {
      const during = await newsCrawl(four, origin);
      expect(during.sitemaps, `during the move (${step.state})`).toHaveLength(1);
      expect(during.locs.toSorted(), `during the move (${step.state})`).toEqual(locs.toSorted());
      step = await rebalanceStep(site, origin, { maxRows: 400 });
    }
    expect(step.state).toBe("flipped");
    const after = await newsCrawl(four, origin);
    expect(after.sitemaps).toHaveLength(1);
    expect(after.locs.toSorted()).toEqual(locs.toSorted());
  });
});
