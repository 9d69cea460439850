/**
 * The same 120,000 records, written through each source's own writer with the same history
 * (inserts, updates, deletions, section moves, extension data big enough to overflow in KV),
 * render byte-identical sitemaps from D1 and from KV: the index and every shard.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { d1RecordStore } from "../../src/adapters/d1/record-store.ts";
import { overflowName } from "../../src/adapters/kv/layout.ts";
import { kvRecordStore } from "../../src/adapters/kv/record-store.ts";
import type { ValidRecord } from "../../src/core/validate.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { kvFixture } from "./fixtures/kv.ts";
import { d1Fixture } from "./fixtures/sources.ts";
import { kvWriters } from "./support/kv-objects.ts";
import { bytesOf, call, freshOrigin, locsOf, range, validRecords } from "./support.ts";

const T0 = Date.UTC(2026, 0, 1);

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Index of the first differing byte, or -1 when equal (a deep equal of 25 MB is slow). */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.byteLength, b.byteLength);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.byteLength === b.byteLength ? -1 : n;
}
const T1 = Date.UTC(2026, 0, 2);

describe("KV and D1 with the same records", () => {
  it("render identical bytes for the index and every shard of 120,000 records", async () => {
    const origin = freshOrigin("same");
    // Both sources serve the same origin, so the per-location caches (keyed by origin and content version,
    // which match here) are off: every body below is rendered live from its own source.
    const vars = { SITES: origin, EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" };
    const d1 = d1Fixture.env(vars);
    const kv = kvFixture.env(vars);

    const gallery = range(300).map((i) => ({
      loc: `${origin}/gallery/${i}?a=1&b='2'`,
      section: "gallery",
      lastmod: "2025-03-04T05:06:07+01:00",
      images: range(i % 3 === 0 ? 40 : 2).map((j) => ({ loc: `https://cdn.example/${"photo".repeat(16)}/${i}/${j}.jpg` })),
    }));
    const inputs = [
      ...demoSection(origin, "pages", 11_700),
      ...gallery,
      ...demoSection(origin, "products", 96_000),
      ...demoSection(origin, "blog", 12_000),
    ];
    expect(inputs).toHaveLength(120_000);
    const records = validRecords(d1, inputs);

    // The same history through each source's own writer.
    const updates: ValidRecord[] = validRecords(d1, [
      ...demoSection(origin, "pages", 200, 5_000).map((r) => ({ ...r, lastmod: "2026-01-02" })),
      ...demoSection(origin, "blog", 50, 100).map((r) => ({ ...r, section: "pages" })),
    ]);
    const deletions = demoSection(origin, "products", 500, 40_000)
      .map((r) => validRecords(d1, [r])[0]!.loc)
      .concat(gallery.slice(0, 10).map((g) => validRecords(d1, [g])[0]!.loc));
    for (const [fixture, e] of [
      [d1Fixture, d1],
      [kvFixture, kv],
    ] as const) {
      await fixture.upsert(e, records, T0);
      await fixture.upsert(e, updates, T1);
      await fixture.delete(e, deletions, T1);
      await rebuildManifest(services(e), origin);
    }

    // Same keys on both sides (D1's AUTOINCREMENT and the KV counter both count from 1 in input
    // order, and moves keep keys): the manifest walk, the manifests and the regeneration's scan agree.
    const d1Store = d1RecordStore(env.DB);
    const kvStore = kvRecordStore(env.URLS, kvWriters());
    const kvRows = await all(kvStore.reader.keyRows(origin));
    expect(kvRows).toHaveLength(120_000);
    expect(kvRows).toEqual(await all(d1Store.reader.keyRows(origin)));
    expect((await services(kv).manifests.load(origin))?.shards).toEqual((await services(d1).manifests.load(origin))?.shards);
    const from = { section: "products", key: 40_000 };
    const until = { section: "products", key: 60_500 };
    expect(await all(kvStore.scan!.scan(origin, from, until))).toEqual(await all(d1Store.scan!.scan(origin, from, until)));

    // Every third gallery record is too big for its block: it lives in an overflow key in KV.
    const overflowPrefix = overflowName(origin, "gallery", 0).replace(/\d+$/, "");
    expect((await env.URLS.list({ prefix: overflowPrefix })).keys).toHaveLength(100);

    const live = async (e: Env, url: string): Promise<Uint8Array> => {
      const res = await call(e, url, { headers: { "Accept-Encoding": "identity" } });
      expect(res.status, url).toBe(200);
      expect(res.headers.get("x-sitemap-source"), url).toBe("live");
      return bytesOf(res);
    };
    const fromD1 = await live(d1, `${origin}/sitemap.xml`);
    const fromKv = await live(kv, `${origin}/sitemap.xml`);
    expect(firstDifference(fromD1, fromKv)).toBe(-1);
    const shards = locsOf(new TextDecoder().decode(fromD1));
    expect(shards).toEqual([
      `${origin}/sitemap-blog-1.xml`,
      `${origin}/sitemap-gallery-1.xml`,
      `${origin}/sitemap-pages-1.xml`,
      `${origin}/sitemap-products-1.xml`,
      `${origin}/sitemap-products-2.xml`,
    ]);

    let urls = 0;
    for (const url of shards) {
      const a = await live(d1, url);
      const b = await live(kv, url);
      expect(b.byteLength, url).toBe(a.byteLength);
      expect(firstDifference(a, b), url).toBe(-1);
      urls += new TextDecoder().decode(a).match(/<url>/g)?.length ?? 0;
    }
    expect(urls).toBe(120_000 - deletions.length);
    // ~20 s on an idle 2-CPU machine, most of it writing 120,000 records into each store; the
    // margin is for loaded CI machines.
  }, 180_000);
});
