/**
 * KV as the record source: the writer's contract through each site's writer object (stable keys,
 * change stamps, tombstones, moves, overflow), its projection to KV (only changed blocks written,
 * an interrupted projection finished), adoption of a bulk-loaded namespace, the layout's reads
 * (sparse ranges, bad data), the change feed and news/feed indexes of the object, the manifest in
 * KV, config, and KV operation counts per request (counted through a proxy on the real binding).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { D1RegenStore } from "../../src/adapters/d1/regen-store.ts";
import { kvBulkEntries } from "../../src/adapters/kv/bulk.ts";
import {
  type BlockEntry,
  blockName,
  counterName,
  listBlockNames,
  loadName,
  manifestName,
  overflowName,
  sitePrefix,
} from "../../src/adapters/kv/layout.ts";
import { KvManifestStore } from "../../src/adapters/kv/manifest-store.ts";
import { KvObjectChangeFeed } from "../../src/adapters/kv/object-feed.ts";
import { KvRecordReader } from "../../src/adapters/kv/reader.ts";
import { KvSnapshotStore } from "../../src/adapters/kv/snapshot-store.ts";
import { KvWriterClient } from "../../src/adapters/kv/writer-client.ts";
import type { ValidRecord } from "../../src/core/validate.ts";
import { urlElement } from "../../src/core/writers.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import type { FoundRecord, KeyRow } from "../../src/store/port.ts";
import { countingKv, failingKv, totalOps } from "./fixtures/kv-ops.ts";
import { kvWriters, objectStatus, objectUsesKv, settled } from "./support/kv-objects.ts";
import { call, freshOrigin, locsOf, range, validRecords } from "./support.ts";

const T0 = Date.UTC(2026, 0, 1);
const T1 = Date.UTC(2026, 1, 1);
const T2 = Date.UTC(2026, 2, 1);

function kvEnv(origin: string, vars: Record<string, string> = {}, urls: KVNamespace = env.URLS): Env {
  return { ...env, SITES: origin, URL_SOURCE: "kv", MANIFEST_STORE: "kv", URLS: urls, ...vars } as Env;
}

/** Every record of a reader's pages, in order. */
async function allRecords<T>(pages: AsyncIterable<readonly T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(...page);
  return out;
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const reader = (kv: KVNamespace = env.URLS): KvRecordReader => new KvRecordReader(kv, kvWriters());

/** A loc's stored record, asked of its site's writer object. */
function find(loc: string): Promise<FoundRecord | null> {
  return reader().find(loc);
}

async function keyRows(origin: string): Promise<KeyRow[]> {
  return all(reader().keyRows(origin));
}

async function liveLocs(origin: string, section: string, firstKey = 0, lastKey = 1e12 - 1): Promise<string[]> {
  return (await allRecords(reader().recordPages({ origin, section, firstKey, lastKey }))).map((r) => r.loc);
}

/** The Worker's writer (each site's object), waiting after each batch until its projection has reached KV. */
function kvWriter() {
  const client = new KvWriterClient(kvWriters());
  const origins = (locs: readonly string[]) => new Set(locs.map((loc) => new URL(loc).origin));
  return {
    async upsert(records: readonly ValidRecord[], now?: number) {
      const result = await client.upsert(records, now);
      for (const origin of origins(records.map((r) => r.loc))) await settled(origin);
      return result;
    },
    async delete(locs: readonly string[], now?: number) {
      const result = await client.delete(locs, now);
      for (const origin of origins(locs.filter((l) => URL.canParse(l)))) await settled(origin);
      return result;
    },
  };
}

describe("the KV writer objects", () => {
  it("assigns keys once per loc, in input order, and moves change stamps only on real change", async () => {
    const origin = freshOrigin("kvw");
    const e = kvEnv(origin);
    const writer = kvWriter();
    const records = validRecords(
      e,
      range(5).map((i) => ({ loc: `${origin}/p/${i}`, lastmod: "2025-01-01" })),
    );
    expect(await writer.upsert(records, T0)).toMatchObject({ inserted: 5, updated: 0, unchanged: 0, atomic: true });
    expect((await keyRows(origin)).map((r) => [r.key, r.updatedAt])).toEqual(range(5, 1).map((k) => [k, T0]));

    // Same batch again: nothing written, nothing stamped.
    const again = await writer.upsert(records, T1);
    expect(again).toMatchObject({ inserted: 0, updated: 0, unchanged: 5, atomic: true, writes: 0 });

    // One real change: only its stamp moves; its key stays.
    const changed = validRecords(e, [
      { loc: `${origin}/p/3`, lastmod: "2025-06-01" },
      { loc: `${origin}/p/4`, lastmod: "2025-01-01" },
    ]);
    expect(await writer.upsert(changed, T1)).toMatchObject({ inserted: 0, updated: 1, unchanged: 1 });
    expect((await keyRows(origin)).map((r) => r.updatedAt)).toEqual([T0, T0, T0, T1, T0]);
    expect(await find(`${origin}/p/3`)).toMatchObject({ key: 4, section: "pages", lastmod: "2025-06-01", updatedAt: T1, deleted: false });

    // New locs get larger keys than every existing one.
    await writer.upsert(validRecords(e, [{ loc: `${origin}/new` }]), T1);
    expect((await find(`${origin}/new`))?.key).toBe(6);
    // The loc index and the counter live in the object: KV holds only what readers read (blocks).
    const siteKeys = (await env.URLS.list()).keys.map((k) => k.name).filter((name) => name.includes(origin));
    expect(siteKeys.length).toBeGreaterThan(0);
    expect(siteKeys.every((name) => name.startsWith(sitePrefix(origin)))).toBe(true);
  });

  it("projects only the blocks a batch changed, and never reads KV to decide a write", async () => {
    const origin = freshOrigin("kvops");
    const e = kvEnv(origin);
    const counted = countingKv(env.URLS);
    const restore = await objectUsesKv(origin, counted.kv);
    try {
      const writer = kvWriter();
      await writer.upsert(validRecords(e, demoSection(origin, "pages", 1_000)), T0);
      // Adopting the empty site: one list, one read of an earlier version's counter; then keys
      // 1–1,000 are blocks 0 and 1: two puts.
      expect(counted.counts).toEqual({ list: 1, get: 1, put: 2, getWithMetadata: 0, delete: 0 });
      counted.reset();
      // 10 changes, keys 991–1,000, in blocks 0 and 1: two puts, no read.
      const changed = demoSection(origin, "pages", 10, 990).map((r) => ({ ...r, lastmod: "2026-01-01" }));
      expect(await writer.upsert(validRecords(e, changed), T1)).toMatchObject({ updated: 10, writes: 10 });
      expect(counted.counts).toEqual({ get: 0, getWithMetadata: 0, list: 0, put: 2, delete: 0 });
      counted.reset();
      // A batch that changes nothing writes nothing.
      expect(await writer.upsert(validRecords(e, changed), T2)).toMatchObject({ unchanged: 10, writes: 0 });
      expect(totalOps(counted.counts)).toBe(0);
    } finally {
      await restore();
    }
  });

  it("accepts a batch that touches more blocks than one invocation may write, and projects it over several passes", async () => {
    const origin = freshOrigin("kvwide");
    const e = kvEnv(origin);
    // One section per record: 800 blocks, more KV writes than one pass makes (400).
    const records = validRecords(
      e,
      range(800).map((i) => ({ loc: `${origin}/s/${i}`, section: `s${i}` })),
    );
    const result = await new KvWriterClient(kvWriters()).upsert(records, T0);
    expect(result).toMatchObject({ inserted: 800, atomic: true });
    await settled(origin, 30_000);
    expect((await env.URLS.list({ prefix: sitePrefix(origin) })).keys).toHaveLength(800);
    expect(await liveLocs(origin, "s799")).toEqual([`${origin}/s/799`]);
  });

  it("tombstones deletions, counts them like D1, and brings a loc back under its old key", async () => {
    const origin = freshOrigin("kvd");
    const e = kvEnv(origin);
    const writer = kvWriter();
    await writer.upsert(
      validRecords(
        e,
        range(4).map((i) => ({ loc: `${origin}/p/${i}` })),
      ),
      T0,
    );

    const del = await writer.delete([`${origin}/p/1`, `${origin}/p/1`, `${origin}/nope`, "not a url"], T1);
    expect(del).toMatchObject({ deleted: 1, alreadyDeleted: 0, notFound: 2, atomic: true });
    expect(await writer.delete([`${origin}/p/1`], T2)).toMatchObject({ deleted: 0, alreadyDeleted: 1, atomic: true, writes: 0 });

    expect(await liveLocs(origin, "pages")).toEqual([0, 2, 3].map((i) => `${origin}/p/${i}`));
    // The walk still sees the tombstone, with the deletion time (a removal changes its shard).
    expect((await keyRows(origin))[1]).toMatchObject({ key: 2, deleted: true, updatedAt: T1 });

    const back = await writer.upsert(validRecords(e, [{ loc: `${origin}/p/1` }]), T2);
    expect(back).toMatchObject({ inserted: 1, updated: 0, unchanged: 0 });
    expect(await find(`${origin}/p/1`)).toMatchObject({ key: 2, deleted: false, updatedAt: T2 });
  });

  it("moves a record to another section under the same key, never listing it twice", async () => {
    const origin = freshOrigin("kvm");
    const e = kvEnv(origin);
    const writer = kvWriter();
    await writer.upsert(
      validRecords(
        e,
        range(3).map((i) => ({ loc: `${origin}/a/${i}`, section: "blog" })),
      ),
      T0,
    );
    const moved = await writer.upsert(validRecords(e, [{ loc: `${origin}/a/1`, section: "pages" }]), T1);
    expect(moved).toMatchObject({ updated: 1 });
    expect(await liveLocs(origin, "blog")).toEqual([`${origin}/a/0`, `${origin}/a/2`]);
    expect(await liveLocs(origin, "pages")).toEqual([`${origin}/a/1`]);
    expect(await find(`${origin}/a/1`)).toMatchObject({ key: 2, section: "pages", updatedAt: T1 });
    // (section, key) order, as D1 gives it: "blog" before "pages".
    expect((await keyRows(origin)).map((r) => `${r.section}:${r.key}`)).toEqual(["blog:1", "blog:3", "pages:2"]);
  });

  it("keeps records with big extension data in overflow keys and renders them whole", async () => {
    const origin = freshOrigin("kvo");
    const e = kvEnv(origin);
    const images = range(40).map((i) => ({ loc: `https://cdn.example/${"img".repeat(30)}/${i}.jpg` }));
    const records = validRecords(e, [{ loc: `${origin}/gallery`, images }, { loc: `${origin}/plain` }]);
    await kvWriter().upsert(records, T0);

    const block = JSON.parse((await env.URLS.get(blockName(origin, "pages", 0)))!) as BlockEntry[];
    expect(block[0]).toMatchObject({ k: 1, v: 1, x: 1, loc: `${origin}/gallery` });
    expect(block[0]).not.toHaveProperty("ext");
    expect(JSON.parse((await env.URLS.get(overflowName(origin, "pages", 1)))!).ext.images).toHaveLength(40);

    await rebuildManifest(services(e), origin);
    const res = await call(e, `${origin}/sitemap-pages-1.xml`);
    const xml = await res.text();
    expect(res.status).toBe(200);
    expect(xml).toContain('xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"');
    expect(xml.match(/<image:image>/g)).toHaveLength(40);
    expect(locsOf(xml).filter((l) => l.startsWith(origin))).toEqual([`${origin}/gallery`, `${origin}/plain`]);

    // Shrinking it back inline removes the overflow key.
    await kvWriter().upsert(validRecords(e, [{ loc: `${origin}/gallery` }]), T1);
    expect(await env.URLS.get(overflowName(origin, "pages", 1))).toBeNull();
    expect((JSON.parse((await env.URLS.get(blockName(origin, "pages", 0)))!) as BlockEntry[])[0]).not.toHaveProperty("v");
  });

  it("converges to the same state when the projection of a batch fails after any number of KV writes", async () => {
    const seed = async (origin: string): Promise<void> => {
      const records = validRecords(
        kvEnv(origin),
        range(6).map((i) => ({ loc: `${origin}/p/${i}`, section: i < 3 ? "blog" : "pages" })),
      );
      await kvWriter().upsert(records, T0);
    };
    // The batch: 2 moves, 1 change, 2 new locs. Count its writes once on a clean run.
    const batch = (origin: string) =>
      validRecords(kvEnv(origin), [
        { loc: `${origin}/p/0`, section: "pages" },
        { loc: `${origin}/p/4`, section: "blog" },
        { loc: `${origin}/p/5`, section: "pages", lastmod: "2025-05-05" },
        { loc: `${origin}/n/1`, section: "blog" },
        { loc: `${origin}/n/2`, section: "pages" },
      ]);
    const clean = freshOrigin("kvc");
    await seed(clean);
    await kvWriter().upsert(batch(clean), T1);
    /** Every live record as loc → key, section, stamp; new locs' keys only checked to be new. */
    const state = async (origin: string) => {
      const records = [
        ...(await allRecords(reader().recordPages({ origin, section: "blog", firstKey: 0, lastKey: 1e6 }))),
        ...(await allRecords(reader().recordPages({ origin, section: "pages", firstKey: 0, lastKey: 1e6 }))),
      ];
      expect(records.filter((r) => r.loc.includes("/n/")).every((r) => r.key > 6)).toBe(true);
      expect(await keyRows(origin)).toHaveLength(8);
      return records
        .map((r) => ({ loc: r.loc.slice(origin.length), key: r.loc.includes("/n/") ? "new" : r.key, section: r.section, updatedAt: r.updatedAt }))
        .sort((a, b) => (a.loc < b.loc ? -1 : 1));
    };
    const expected = await state(clean);
    expect(expected.map((r) => r.loc)).toEqual(["/n/1", "/n/2", "/p/0", "/p/1", "/p/2", "/p/3", "/p/4", "/p/5"]);

    for (let allowed = 0; allowed < 4; allowed++) {
      const origin = freshOrigin("kvi");
      await seed(origin);
      // The projection of the batch fails after `allowed` KV writes; the batch itself is committed.
      const restore = await objectUsesKv(origin, failingKv(env.URLS, allowed));
      expect(await new KvWriterClient(kvWriters()).upsert(batch(origin), T1)).toMatchObject({ inserted: 2, updated: 3 });
      const stuck = await objectStatus(origin);
      await restore();
      // Whatever the failed pass left, the retried projection ends in the state of the uninterrupted run.
      await settled(origin);
      expect(await state(origin), `projection interrupted after ${allowed} writes (status then: ${JSON.stringify(stuck)})`).toEqual(expected);
    }
  });

  it("adopts a site written by an earlier version: keys continue past its blocks and its counter", async () => {
    const origin = freshOrigin("kvx");
    const e = kvEnv(origin);
    // What an earlier version left: blocks, a counter ahead of them (a reserved key never used).
    for (const entry of kvBulkEntries(
      validRecords(
        e,
        range(3).map((i) => ({ loc: `${origin}/p/${i}` })),
      ),
      { stampOf: () => T0 },
    )) {
      await env.URLS.put(entry.key, entry.value, entry.metadata ? { metadata: entry.metadata } : {});
    }
    await env.URLS.put(counterName(origin), "9");
    const writer = kvWriter();
    expect(await writer.upsert(validRecords(e, [{ loc: `${origin}/p/1` }, { loc: `${origin}/after` }]), T1)).toMatchObject({ unchanged: 1, inserted: 1 });
    expect((await find(`${origin}/after`))?.key).toBe(9);
    expect(await find(`${origin}/p/1`)).toMatchObject({ key: 2, updatedAt: T0 });
    expect((await keyRows(origin)).map((r) => r.key)).toEqual([1, 2, 3, 9]);
  });

  it("kvBulkEntries builds exactly what the projection writes, and the writer object adopts it: `wrangler kv bulk put` data stays writable", async () => {
    const origin = freshOrigin("kvb");
    const e = kvEnv(origin);
    const records = validRecords(e, [...demoSection(origin, "pages", 1_500), ...demoSection(origin, "blog", 700)]);
    const entries = kvBulkEntries(records, { stampOf: (i) => T0 + i });
    for (const entry of entries) await env.URLS.put(entry.key, entry.value, entry.metadata ? { metadata: entry.metadata } : {});
    // Keys 1–1,500 (pages) and 1,501–2,200 (blog): pages blocks 0 and 1, blog blocks 1 and 2.
    expect(entries.filter((x) => x.key.startsWith(sitePrefix(origin))).map((x) => x.key.slice(sitePrefix(origin).length))).toEqual([
      "pages#000000000",
      "pages#000000001",
      "blog#000000001",
      "blog#000000002",
    ]);

    const writer = kvWriter();
    const again = await writer.upsert(records, T1);
    expect(again).toMatchObject({ unchanged: 2_200, inserted: 0, updated: 0, writes: 0 });
    expect(await find(records[1_600]!.loc)).toMatchObject({ key: 1_601, section: "blog", updatedAt: T0 + 1_600 });

    // The load record counts what the load wrote (the object adopts a load only once it has read all of it).
    expect(JSON.parse(entries.find((x) => x.key === loadName(origin))!.value)).toEqual({ blocks: 4, entries: 2_200, values: 0 });

    // The same records through a writer object, on another site: its projection writes the bulk file's bytes (all but the load record).
    const other = freshOrigin("kvb2");
    const same = validRecords(kvEnv(other), [...demoSection(other, "pages", 1_500), ...demoSection(other, "blog", 700)]);
    await writer.upsert(same, T0);
    for (const entry of kvBulkEntries(same, { stampOf: () => T0 }).filter((x) => x.key !== loadName(other))) {
      const stored = await env.URLS.getWithMetadata(entry.key, "text");
      expect(stored.value, entry.key).toBe(entry.value);
      expect(stored.metadata ?? undefined, entry.key).toEqual(entry.metadata);
    }
  });
});

describe("KvRecordReader", () => {
  it("lists only the blocks of a sparse range, without listing the blocks before it", async () => {
    const origin = freshOrigin("kvs");
    const blocks = [3, 120, 4_567, 99_999, 100_000, 1_234_567, 7_000_000];
    for (const b of blocks) {
      await env.URLS.put(blockName(origin, "pages", b), JSON.stringify([{ k: b * 1000 + 7, u: T0, loc: `${origin}/b/${b}` }]));
    }
    const counted = countingKv(env.URLS);
    const names = async (first: number, last: number): Promise<number[]> =>
      (await all(listBlockNames(counted.kv, origin, "pages", first, last))).flat().map((n) => Number(n.name.slice(-9)));
    expect(await names(100, 5_000_000)).toEqual([120, 4_567, 99_999, 100_000, 1_234_567]);
    // 9 digit positions × at most 9 aligned groups each, whatever the gaps.
    expect(counted.counts.list).toBeLessThanOrEqual(81);
    expect(await names(0, 1e9 - 1)).toEqual(blocks);
    expect(await names(4_568, 99_998)).toEqual([]);

    // Through the source, a range of 7,000,000 blocks (7 billion keys): listed, then fetched.
    counted.reset();
    const source = reader(counted.kv);
    const locs = (await allRecords(source.recordPages({ origin, section: "pages", firstKey: 3_008, lastKey: 7_000_000_006 }))).map((r) => r.loc);
    expect(locs).toEqual([120, 4_567, 99_999, 100_000, 1_234_567].map((b) => `${origin}/b/${b}`));
    expect(totalOps(counted.counts)).toBeLessThan(100);
  });

  it("rejects hand-made data that breaks the layout, naming the KV key", async () => {
    const origin = freshOrigin("kvl");
    const source = reader();
    const range0 = { origin, section: "pages", firstKey: 1, lastKey: 999 };
    const name = blockName(origin, "pages", 0);
    await env.URLS.put(name, "not json");
    await expect(allRecords(source.recordPages(range0))).rejects.toThrow(`KV layout error in "${name}": value is not JSON`);
    await env.URLS.put(
      name,
      JSON.stringify([
        { k: 5, u: T0, loc: `${origin}/a` },
        { k: 4, u: T0, loc: `${origin}/b` },
      ]),
    );
    await expect(allRecords(source.recordPages(range0))).rejects.toThrow(/entry 1: keys must be strictly ascending/);
    await env.URLS.put(name, JSON.stringify([{ k: 1500, u: T0, loc: `${origin}/a` }]));
    await expect(all(source.keyRows(origin))).rejects.toThrow(/key 1500 is outside this block \(0–999\)/);
    await env.URLS.put(name, JSON.stringify([{ k: 1, u: T0, loc: `${origin}/a`, changefreq: "Weekly" }]));
    await expect(allRecords(source.recordPages(range0))).rejects.toThrow(/"changefreq" must be one of/);
  });

  it("escapes every value of a hand-made entry when rendering: markup in numbers and enumerations is never injected", async () => {
    const origin = freshOrigin("kvx");
    const source = reader();
    const name = blockName(origin, "pages", 0);
    const evil = '"><evil attr="1"/><x';
    const video = {
      thumbnail_loc: "https://cdn.example/t.jpg",
      title: "t",
      description: "d",
      content_loc: "https://cdn.example/v.mp4",
      duration: `60</video:duration><evil/><video:duration>`,
      rating: `<evil/>`,
      view_count: `1</video:view_count><evil/>`,
      restriction: { relationship: evil, countries: "US <evil/>" },
      platform: { relationship: evil, platforms: ["web", "<evil/>"] },
    };
    await env.URLS.put(name, JSON.stringify([{ k: 1, u: T0, loc: `${origin}/v`, changefreq: "daily", ext: { videos: [video] } }]));
    // The layout check reads the entry's shape, not its sitemap rules: the writer is the last line.
    const records = await allRecords(source.recordPages({ origin, section: "pages", firstKey: 1, lastKey: 999 }));
    const rendered = records.map((r) => urlElement(r)).join("");
    expect(rendered).toContain("<video:duration>60&lt;/video:duration&gt;&lt;evil/&gt;");
    expect(rendered).not.toMatch(/<evil|<x\b/);
    expect(rendered).toContain('relationship="&quot;&gt;&lt;evil attr=&quot;1&quot;/&gt;&lt;x"');
  });

  it("renders a full 50,000-URL shard in a handful of KV operations (counted on the binding)", async () => {
    const origin = freshOrigin("kvn");
    const base = kvEnv(origin);
    await kvWriter().upsert(validRecords(base, demoSection(origin, "products", 50_000)), T0);

    const counted = countingKv(env.URLS);
    // Per-location caches off: every request below reads KV (the worst case).
    const e = kvEnv(origin, { EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" }, counted.kv);
    const manifest = await rebuildManifest(services(e), origin);
    expect(manifest.shards.map((s) => s.urlCount)).toEqual([50_000]);
    const buildOps = totalOps(counted.counts);

    counted.reset();
    const res = await call(e, `${origin}/sitemap-products-1.xml`);
    const xml = await res.text();
    expect(res.status).toBe(200);
    expect(xml.match(/<url>/g)).toHaveLength(50_000);
    const shardOps = totalOps(counted.counts);
    // 1 manifest read + 51 blocks in bulk gets of 4: 14. The platform allows 1,000 per invocation.
    expect(shardOps).toBeLessThanOrEqual(15);
    expect(counted.counts.put + counted.counts.delete).toBe(0);
    // The manifest walk: 1 list + bulk gets sized by block metadata (≤ 8 MB each), 1 manifest read and write.
    expect(buildOps).toBeLessThanOrEqual(10);

    counted.reset();
    expect((await call(e, `${origin}/sitemap.xml`)).status).toBe(200);
    // The manifest read (none at all when the location's cached copy is fresh).
    expect(totalOps(counted.counts)).toBe(1);

    // KV records with the manifest in D1: no KV read for the manifest at all.
    const withD1 = kvEnv(origin, { MANIFEST_STORE: "d1", EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" }, counted.kv);
    await rebuildManifest(services(withD1), origin);
    counted.reset();
    expect((await (await call(withD1, `${origin}/sitemap-products-1.xml`)).text()).length).toBe(xml.length);
    expect(totalOps(counted.counts)).toBe(shardOps - 1);
  });
});

describe("the KV change feed, news and recent changes (from the writer objects)", () => {
  it("pages the changes past a cursor in (stamp, key) order, tombstones included, up to `until`", async () => {
    const origin = freshOrigin("kvfeed");
    const e = kvEnv(origin);
    const writer = kvWriter();
    await writer.upsert(
      validRecords(
        e,
        range(30).map((i) => ({ loc: `${origin}/p/${i}` })),
      ),
      T0,
    ); // keys 1…30
    await writer.upsert(
      validRecords(
        e,
        [5, 20, 7].map((i) => ({ loc: `${origin}/p/${i}`, lastmod: "2026-01-05" })),
      ),
      T1,
    );
    await writer.delete([`${origin}/p/3`], T2);
    const feed = new KvObjectChangeFeed(kvWriters());
    expect(feed.indexed).toBe(true);
    expect(await feed.changes(origin, null, 0)).toEqual({ rows: [], cursor: { stamp: T2, key: Number.MAX_SAFE_INTEGER, moveSeq: 0 }, done: true });

    const start = { stamp: T0, key: 28, moveSeq: 0 };
    const first = await feed.changes(origin, start, 4);
    expect(first.rows.map((r) => [r.key, r.updatedAt])).toEqual([
      [29, T0],
      [30, T0],
      [6, T1],
      [8, T1],
    ]);
    expect(first).toMatchObject({ cursor: { stamp: T1, key: 8, moveSeq: 0 }, done: false });
    const second = await feed.changes(origin, first.cursor, 4);
    expect(second.rows.map((r) => [r.loc, r.section, r.deleted, r.moved])).toEqual([
      [`${origin}/p/20`, "pages", false, false],
      [`${origin}/p/3`, "pages", true, false],
    ]);
    expect(second.done).toBe(true);
    expect((await feed.changes(origin, start, 10, T1)).rows.map((r) => r.key)).toEqual([29, 30, 6, 8, 21]);

    expect(await feed.newest(origin, T1)).toEqual({ stamp: T1, key: 21 });
    expect(await feed.newest(origin, T0 - 1)).toBeNull();
    expect(await feed.pending(origin, start)).toBe(6);
  });
});

describe("regeneration over KV records", () => {
  it("pre-renders snapshots equal to live bytes from one scan, and re-renders only a changed shard", async () => {
    const origin = freshOrigin("kvregen");
    const vars = { MAX_URLS_PER_SHARD: "100", EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" };
    const e = kvEnv(origin, vars);
    const writer = kvWriter();
    await writer.upsert(validRecords(e, demoSection(origin, "products", 500)), T0);
    const s = services(e);
    const deps = {
      config: s.config,
      store: s.store,
      manifests: s.manifests,
      snapshots: new KvSnapshotStore(env.SNAPSHOTS),
      state: new D1RegenStore(env.DB),
    };

    const first = await regenerateSite(deps, origin, { trigger: "test" });
    expect(first).toMatchObject({ shardsRendered: 5, indexRendered: true, converged: true });
    // Without snapshots (no SNAPSHOTS binding) the same documents render live from KV.
    const liveEnv = { ...e, SNAPSHOTS: undefined } as unknown as Env;
    for (const path of ["/sitemap.xml", ...[1, 2, 3, 4, 5].map((n) => `/sitemap-products-${n}.xml`)]) {
      const stored = await call(e, origin + path);
      const live = await call(liveEnv, origin + path);
      expect(stored.headers.get("x-sitemap-source"), path).toBe("snapshot");
      expect(live.headers.get("x-sitemap-source"), path).toBe("live");
      expect(await stored.text(), path).toBe(await live.text());
    }

    await writer.upsert(
      validRecords(
        e,
        demoSection(origin, "products", 1, 250).map((r) => ({ ...r, lastmod: "2026-02-02" })),
      ),
      T1,
    );
    const second = await regenerateSite(deps, origin, { trigger: "test" });
    expect(second.changed).toEqual(["products-3"]);
    expect(second.shardsRendered).toBe(1);
    expect(await (await call(e, `${origin}/sitemap-products-3.xml`)).text()).toContain("<lastmod>2026-02-02</lastmod>");
  });
});

describe("KV configuration and manifests", () => {
  it("validates URL_SOURCE and MANIFEST_STORE and names a missing binding in the log, never in the answer", async () => {
    const origin = freshOrigin("kvcfg");
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const refused = async (e: Env, message: RegExp): Promise<void> => {
        logged.mockClear();
        const res = await call(e, `${origin}/sitemap.xml`);
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(await res.text()).not.toMatch(/URL_SOURCE|MANIFEST_STORE|URLS/);
        expect(logged.mock.calls.flat().join(" ")).toMatch(message);
      };
      await refused({ ...env, SITES: origin, URL_SOURCE: "sqlite" } as Env, /URL_SOURCE must be one of "d1", "kv"/);
      await refused({ ...env, SITES: origin, MANIFEST_STORE: "r2" } as Env, /MANIFEST_STORE must be one of "d1", "kv"/);
      await refused(
        { ...env, SITES: origin, URL_SOURCE: "kv", URLS: undefined } as unknown as Env,
        /URLS binding is missing: URL_SOURCE=kv reads records/,
      );
    } finally {
      logged.mockRestore();
    }
    // Without D1 at all: records and manifests in KV.
    const noD1 = { ...kvEnv(origin), DB: undefined } as unknown as Env;
    await kvWriter().upsert(validRecords(noD1, [{ loc: `${origin}/only-kv` }]), T0);
    const res = await call(noD1, `${origin}/sitemap-pages-1.xml`);
    expect(res.status).toBe(200);
    expect(locsOf(await res.text())).toContain(`${origin}/only-kv`);
  });

  it("stores the manifest as one KV value and ignores a value it cannot read", async () => {
    const origin = freshOrigin("kvman");
    const e = kvEnv(origin);
    await kvWriter().upsert(
      validRecords(
        e,
        range(30).map((i) => ({ loc: `${origin}/p/${i}` })),
      ),
      T0,
    );
    const built = await rebuildManifest(services(kvEnv(origin, { MAX_URLS_PER_SHARD: "10" })), origin);
    const store = new KvManifestStore(env.URLS);
    expect(await store.load(origin)).toEqual(built);
    expect(built.shards.map((s) => [s.n, s.firstKey, s.lastKey, s.urlCount])).toEqual(
      [
        [1, 0, 10],
        [2, 11, 20],
        [3, 21, 30],
      ].map(([n, f, l]) => [n, f, l, 10]),
    );
    await env.URLS.put(manifestName(origin), JSON.stringify({ format: 99 }));
    expect(await store.load(origin)).toBeNull();
  });
});
