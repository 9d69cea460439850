/**
 * The dashboard shows problems first (issue 43 item 4), through the Worker's entry with real D1:
 * a site of 1,260 shards in three sections, Googlebot (verified by Cloudflare's flag) fetching the
 * index, two shards and one past the end (404: a shard the site does not have, only counted, no item: issue 50). The health list comes first,
 * status answers the same list under `health`, sections are summaries whose shards are paged by
 * links (`?section=…&page=…`, 50 a page, only the opened one drawn), and the page stays under 250
 * table rows whatever is opened. The layout in Chromium: test/node/dashboard-health.test.ts.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { dashboardPage } from "../../src/admin/dashboard/page.ts";
import { viewOf } from "../../src/admin/dashboard/paging.ts";
import type { HealthItem } from "../../src/admin/health.ts";
import worker from "../../src/index.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { siteEnv, upsert } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { syntheticStatus } from "./support/dashboard-status.ts";
import { call, freshOrigin } from "./support.ts";

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const SECTIONS = { pages: 420, products: 630, blog: 210 };
const MAX_ROWS = 250;

/** One URL a shard (MAX_URLS_PER_SHARD=1): 1,260 shards from 1,260 records, as many as 126,000 URLs at 100 a shard. */
async function bigSite(label: string): Promise<{ origin: string; env: Env }> {
  const origin = freshOrigin(label);
  const env = siteEnv(origin, { MAX_URLS_PER_SHARD: "1" });
  const records = Object.entries(SECTIONS).flatMap(([section, n]) => Array.from({ length: n }, (_, i) => ({ loc: `${origin}/${section}/${i}`, section })));
  await upsert(env, records, Date.UTC(2026, 0, 1));
  await rebuildManifest(services(env), origin);
  return { origin, env };
}

/** Googlebot, verified by Cloudflare's flag, through the entry; the crawler log is written in waitUntil. */
async function googlebot(env: Env, url: string): Promise<number> {
  const ctx = createExecutionContext();
  const request = new Request(url, {
    headers: { "User-Agent": GOOGLEBOT, "CF-Connecting-IP": "66.249.66.1", "Accept-Encoding": "gzip" },
    cf: { verifiedBotCategory: "Search Engine Crawler" },
  });
  const res = await worker.fetch(request as unknown as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return res.status;
}

const rows = (page: string): number => page.match(/<tr[\s>]/g)?.length ?? 0;
/** The text of the page's health items, in order. */
const healthItems = (page: string): string[] =>
  [...page.matchAll(/<li class="(red|amber)"[^>]*>(.*?)<\/li>/g)].map((m) => `${m[1]} ${m[2]!.replace(/<[^>]+>/g, "")}`);

describe("the dashboard of a site of 1,260 shards, Googlebot given a 404 for a shard past the end", () => {
  it("opens with the health list, the 404 no item of it; status answers the same list; sections are paged summaries", { timeout: 120_000 }, async () => {
    const { origin, env } = await bigSite("dash-health");
    // The log began a month ago: old enough to say what no crawler fetched in 14 days.
    await env.DB.prepare("INSERT INTO crawler_log_sites (origin, started_at) VALUES (?1, ?2)")
      .bind(origin, Date.now() - 30 * 86400_000)
      .run();
    expect(await googlebot(env, `${origin}/sitemap.xml`)).toBe(200);
    expect(await googlebot(env, `${origin}/sitemap-pages-1.xml`)).toBe(200);
    expect(await googlebot(env, `${origin}/sitemap-pages-2.xml.gz`)).toBe(200);
    expect(await googlebot(env, `${origin}/sitemap-pages-421.xml`)).toBe(404);

    const status = (await (await call(env, `${origin}/sitemap-admin/status`, { headers: bearer })).json()) as {
      health: HealthItem[];
      manifest: { shards: number };
    };
    expect(status.manifest.shards).toBe(1_260);
    // A shard past the end: named by its path alone, no document of the site (issue 50): counted, never an item.
    expect(status.health.filter((i) => i.topic === "crawler")).toEqual([]);
    expect(JSON.stringify(status.health)).not.toContain("sitemap-pages-421");
    expect(status.health.map((i) => i.level)).toEqual(
      [...status.health].sort((a, b) => (a.level === b.level ? 0 : a.level === "red" ? -1 : 1)).map((i) => i.level),
    );
    // The index and 1,260 shards but those Googlebot fetched: 1,258 no verified crawler fetched.
    expect(status.health).toContainEqual(
      expect.objectContaining({ level: "amber", topic: "stale", message: expect.stringMatching(/^1,258 listed documents/) }),
    );

    const page = await (await call(env, `${origin}/sitemap-admin/`, { headers: bearer })).text();
    // The dashboard links the site's sitemap and, for the platform credential, the registered sites' page.
    expect(page).toContain('<a href="/sitemap.xml">the sitemap index</a>');
    expect(page).toContain('<a href="/sitemap-admin/platform">registered sites</a>');
    // Health right after the header, before every other part of the page.
    const main = page.slice(page.indexOf("<main>"));
    expect(main.indexOf('<section class="health"')).toBeGreaterThan(0);
    expect(main.indexOf('<section class="health"')).toBeLessThan(main.indexOf("<h2>Site</h2>"));
    const items = healthItems(page);
    expect(items[0]).toMatch(/^amber Check 1,258 listed documents/);
    expect(items.join("\n")).not.toContain("sitemap-pages-421");
    expect(items).toHaveLength(status.health.length);

    // The crawlers card: Googlebot, verified, its index fetch and two of 420 pages shards.
    // Requests are counted in batches (src/crawlers/recorder.ts): at least the first is in.
    expect(page).toMatch(/data-figure="crawler-googlebot-verified-24h">[1-4]</);
    expect(page).toMatch(/data-figure="crawler-googlebot-index"><span class="num">200<\/span>/);
    expect(page).toMatch(/pages <span class="num">2\/420<\/span>/);
    expect(page).toMatch(/data-figure="section-pages-googlebot-fetched">2</);

    // Sections: summaries with their figures, no shard drawn, each with links to its pages.
    expect(page).toMatch(/data-figure="section-products-shards">630</);
    expect(page).not.toContain('<table class="shards">');
    expect(page).toContain('<a href="?section=products&amp;page=2#section-products">2</a>');
    expect(page).toContain('<a href="?section=products&amp;page=13#section-products">13</a>');
    expect(page).toContain("630 shards on 13 pages");
    expect(rows(page)).toBeLessThanOrEqual(MAX_ROWS);

    // A page of one section: its 50 shards, opened; the others still summaries.
    const opened = await (await call(env, `${origin}/sitemap-admin/?section=products&page=2`, { headers: bearer })).text();
    const shards = [...opened.matchAll(/<tr><td>([a-z]+-\d+)<\/td>/g)].map((m) => m[1]);
    expect(shards).toEqual(Array.from({ length: 50 }, (_, i) => `products-${51 + i}`));
    expect(opened).toMatch(
      /<section class="card section opened" id="section-products">[\s\S]*?<details open><summary>shards 51–100 of 630 \(page 2 of 13\)<\/summary>/,
    );
    expect(opened).toContain('<a href="?section=products#section-products" rel="prev">‹ previous</a>');
    expect(opened).toContain('<span aria-current="page">2</span>');
    expect(rows(opened)).toBeLessThanOrEqual(MAX_ROWS);

    // The last page is what is left; a page past the end is the last; nonsense is the default view.
    const last = await (await call(env, `${origin}/sitemap-admin/?section=blog&page=99`, { headers: bearer })).text();
    expect([...last.matchAll(/<tr><td>(blog-\d+)<\/td>/g)].map((m) => m[1])).toEqual(Array.from({ length: 10 }, (_, i) => `blog-${201 + i}`));
    for (const query of ["?section=nope&page=2", "?section=pages&page=-1", "?page=x&gsc=0&audit=%3Cscript%3E"]) {
      const res = await call(env, `${origin}/sitemap-admin/${query}`, { headers: bearer });
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).not.toContain("<script");
      if (query.includes("nope")) expect(body).not.toContain('<table class="shards">');
    }
  });
});

describe("the dashboard page, from a status document", () => {
  it("says 'No problems found' when the health list is empty, still first", () => {
    const status = syntheticStatus({ crawlers: null, sections: { pages: 3 }, gscPerShard: false, audit: 2, runs: 2 });
    expect(status.health).toEqual([]);
    return dashboardPage(status)
      .text()
      .then((page) => {
        expect(page).toContain('<p class="ok" data-figure="health">No problems found.</p>');
        expect(page.indexOf("No problems found")).toBeLessThan(page.indexOf("<h2>Site</h2>"));
        // A site whose shards fit one page shows them all, collapsed.
        expect(page).toMatch(/<details><summary>3 shards<\/summary>\s*<div class="scroll"><table class="shards">/);
        expect(page).toContain("The crawler log is not available.");
      });
  });

  it("keeps every long list to a page: ≤ 250 table rows with 1,260 shards, 100 audit rows, a Search Console row per shard, 300 failing documents, 40 jobs", async () => {
    const base = syntheticStatus();
    const status = {
      ...base,
      regeneration: {
        ...base.regeneration,
        failed: Array.from({ length: 300 }, (_, i) => ({
          document: `pages-${i + 1}`,
          error: "KV put failed",
          attempts: 1,
          failedAt: "",
          retryAt: "2026-03-01T12:00:00.000Z",
        })),
      },
      jobs: Array.from({ length: 40 }, (_, i) => ({ ...base.jobs[0]!, kind: "mirror", target: `https://remote.example/${i}.xml` })),
    };
    for (const query of ["", "section=products&page=5", "section=pages&page=9&gsc=51&audit=4&failed=12&jobs=2"]) {
      const page = await dashboardPage(status, { csrf: null, done: null }, viewOf(new URLSearchParams(query))).text();
      expect(rows(page), query).toBeLessThanOrEqual(MAX_ROWS);
    }
    const page = await dashboardPage(status, { csrf: null, done: null }, viewOf(new URLSearchParams("gsc=3"))).text();
    // Search Console's page 3: rows 51 to 75 of the index and the shards, opened; its pager keeps the rest of the view.
    expect(page).toMatch(/<details class="list" id="list-gsc" open><summary>1,261 sitemaps reported \(page 3 of 51\)<\/summary>/);
    expect(page).toContain(`<tr data-sitemap="${base.site}/sitemap-pages-50.xml">`);
    expect(page).not.toContain(`<tr data-sitemap="${base.site}/sitemap-pages-49.xml">`);
    expect(page).toContain('<a href="?gsc=4#list-gsc" rel="next">next ›</a>');
    // The audit trail: collapsed (100 rows), its first page drawn.
    expect(page).toMatch(
      /<details class="list" id="list-audit"><summary>The last 100 writes, the newest 2026-03-01 12:00:00Z by token \(page 1 of 4\)<\/summary>/,
    );
  });
});
