/**
 * A partitioned site's index links its shards with the partition count (src/partitions/pinned.ts):
 * `…/sitemap-products-1000001.xml?partitions=3` must still be a valid `<loc>` of the official
 * sitemap index XSD (libxml2), with and without the browser view's stylesheet.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { renderIndex } from "../../src/sitemaps.ts";
import { validateXml } from "./support/xsd.ts";

const SITE = "https://big.example";
const shard = (n: number): ShardEntry => ({
  section: "products",
  n,
  firstKey: n,
  lastKey: n,
  urlCount: 1,
  byteCount: 100,
  lastChange: Date.UTC(2026, 10, 1),
  version: `v${n}`,
});

describe("a partitioned site's index", () => {
  it("validates with every shard link carrying its partition count", async () => {
    for (const view of ["true", "false"]) {
      const config = parseConfig({ SITES: SITE, BROWSER_VIEW: view });
      const manifest = { origin: SITE, version: "x", builtAt: 0, shards: [shard(1), shard(1_000_001), shard(2_000_001)], partitions: 3 };
      const xml = await new Response(renderIndex(config, manifest)).text();
      expect([...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1])).toEqual([
        `${SITE}/sitemap-products-1.xml?partitions=3`,
        `${SITE}/sitemap-products-1000001.xml?partitions=3`,
        `${SITE}/sitemap-products-2000001.xml?partitions=3`,
      ]);
      expect(await validateXml(xml, "siteindex"), view).toEqual({ valid: true, errors: [] });
    }
  });
});
