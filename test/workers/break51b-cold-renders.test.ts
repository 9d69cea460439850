/**
 * break51b, issue 51 Deliver 7 / "How it will be checked": "60 overlapping live renders of the
 * demo's shards (before any snapshot) all answer 200 with whole bodies". The sweep's test
 * (test/workers/limits-sweep.test.ts) builds the manifest first and turns the edge cache off. Here
 * the deployment's defaults (EDGE_CACHE_TTL, MANIFEST_CACHE_TTL) and no manifest yet: each of the
 * 60 overlapping requests finds none and may build it within MANIFEST_REQUEST_ROWS (100,000 key
 * rows, src/sitemaps.ts `currentManifest`), then renders. Through the Worker's entry, real D1, KV and
 * Cache, enforcing meter, every invocation asserted inside the limits.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import worker from "../../src/index.ts";
import { newSite, write } from "./regen-support.ts";
import { report, watchMeters } from "./support/meters.ts";

afterEach(() => vi.restoreAllMocks());

async function fetchEntry(env: Env, url: string, headers: Record<string, string>): Promise<{ response: Response; ctx: ExecutionContext }> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, { headers }) as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  return { response, ctx };
}

describe("60 overlapping live renders on a site with no manifest yet, the deployment's cache defaults", () => {
  // A crawler's requests add the crawler log's work (src/http/crawlers/log-fetches.ts) to each.
  it.each([
    ["a browser", {}],
    [
      "Googlebot (the crawler log on)",
      { "User-Agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "CF-Connecting-IP": "203.0.113.9" },
    ],
  ])(
    "from %s: all answer 200 with whole bodies, every invocation inside the limits",
    async (client, headers) => {
      vi.spyOn(console, "log").mockImplementation(() => undefined);
      vi.spyOn(console, "info").mockImplementation(() => undefined);
      const site = newSite("b51b-cold", { MAX_URLS_PER_SHARD: "2000" });
      await write(site, demoSection(site.origin, "pages", 12_000), Date.now() - 10 * 60_000);
      const watch = watchMeters();
      // Ten requests for each of the six shards, all started before any body is read.
      const paths = Array.from({ length: 60 }, (_, i) => `/sitemap-pages-${(i % 6) + 1}.xml`);
      const started = await Promise.all(paths.map((p) => fetchEntry(site.env, `${site.origin}${p}`, headers)));
      const bodies = await Promise.all(started.map(({ response }) => response.text()));
      await Promise.all(started.map(({ ctx }) => waitOnExecutionContext(ctx)));
      expect(watch.refused).toEqual([]);
      expect(started.map(({ response }) => response.status)).toEqual(Array(60).fill(200));
      for (const body of bodies) {
        expect(body.trimEnd().endsWith("</urlset>")).toBe(true);
        expect(body.split("<url>").length - 1).toBe(2_000);
      }
      report(`60 overlapping live renders from ${client}, no manifest yet: largest invocation ${watch.largest()} service calls`);
      expect(watch.largest()).toBeLessThanOrEqual(1_000);
    },
    300_000,
  );
});
