/**
 * Issue 53 ("blocks"), tester break53: generated programs on a site whose records carry image,
 * video, news and hreflang extensions, with changes that add and drop extensions in a block,
 * move records between sections (a moved record keeps its key: it lands in a middle block of the
 * other section), delete and re-add URLs and whole blocks, and append. After every run each
 * stored shard must be its whole live render (one ETag, one body), read by node:zlib as well as
 * DecompressionStream, cover exactly the model's URLs, and a full pass must plan the same entries
 * and render nothing.
 */
import { gunzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type DemoInput, demoSection, demoVideo, withDemoExtensions } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";
import { gunzip, locsOf, text } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);
const INITIAL = 2_600;

/** The gzip the shard's snapshot serves (without the block table stored after it). */
async function storedGzip(site: Site, shard: ShardEntry): Promise<Uint8Array> {
  if (!shard.snapshot) throw new Error(`no snapshot for ${shard.section}-${shard.n}`);
  return snapshotGzip(site, shard.snapshot);
}

async function liveGzip(site: Site, shard: ShardEntry): Promise<Uint8Array> {
  return readAll(gzipDocument(renderShard(services(site.env), site.origin, shard)));
}

const planned = (s: ShardEntry) => ({
  section: s.section,
  n: s.n,
  firstKey: s.firstKey,
  urlCount: s.urlCount,
  byteCount: s.byteCount,
  version: s.version,
  extKinds: s.extKinds,
  pageStarts: s.pageStarts,
});

type Ext = "none" | "image" | "video" | "alternate" | "news";

/** Record `i` of the products section with one extension variant and a new lastmod. */
function variant(origin: string, i: number, ext: Ext, section: string, day: number): DemoInput {
  const [base] = demoSection(origin, "products", 1, i);
  const r: DemoInput = { loc: base!.loc, section, lastmod: `2026-05-${String(1 + (day % 28)).padStart(2, "0")}` };
  if (ext === "image") r.images = [{ loc: `https://cdn.example.com/p/${i}/${day}.jpg`, caption: `caption & <${day}>` }];
  if (ext === "video") r.videos = [demoVideo(i)];
  if (ext === "alternate")
    r.alternates = [
      { hreflang: "en", href: base!.loc },
      { hreflang: "x-default", href: base!.loc },
    ];
  if (ext === "news") r.news = { publication: { name: "Demo", language: "en" }, publication_date: "2026-05-01T00:00:00Z", title: `News ${i} "&"` };
  return r;
}

const op = fc.oneof(
  fc.record({
    op: fc.constant("update" as const),
    at: fc.nat(INITIAL - 1),
    ext: fc.constantFrom<Ext>("none", "image", "video", "alternate", "news"),
  }),
  fc.record({ op: fc.constant("move" as const), at: fc.nat(INITIAL - 1), to: fc.constantFrom("products", "blog") }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(INITIAL - 1) }),
  fc.record({ op: fc.constant("deleteBlock" as const), at: fc.nat(2) }),
  fc.record({ op: fc.constant("revive" as const), at: fc.nat(2) }),
  fc.record({ op: fc.constant("append" as const), count: fc.integer({ min: 1, max: 1_300 }) }),
);

describe("break53: programs with extensions and section moves", () => {
  it("every stored shard stays its live render and what a pass plans", async () => {
    let run = 0;
    let spliced = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }), async (steps) => {
        const site = newSite(`b53-rich-${run++}`, { MAX_URLS_PER_SHARD: "2500" });
        const products = withDemoExtensions("products", demoSection(site.origin, "products", INITIAL), PAST);
        await write(site, products, PAST);
        await write(site, demoSection(site.origin, "blog", 300), PAST);
        const o = observedDeps(site);
        await regenerateSite(o.deps, site.origin);
        // Model: products index → its section, or null when deleted.
        const where = new Map<number, string | null>(Array.from({ length: INITIAL }, (_, i) => [i, "products"]));
        let next = INITIAL;
        let day = 0;
        for (const ops of steps) {
          for (const o of ops) {
            if (o.op === "update") {
              const section = where.get(o.at) ?? "products";
              await write(site, [variant(site.origin, o.at, o.ext, section, day++)]);
              where.set(o.at, section);
            } else if (o.op === "move") {
              await write(site, [variant(site.origin, o.at, "none", o.to, day++)]);
              where.set(o.at, o.to);
            } else if (o.op === "delete") {
              await site.writer.delete([new URL(demoSection(site.origin, "products", 1, o.at)[0]!.loc).href]);
              where.set(o.at, null);
            } else if (o.op === "deleteBlock") {
              const gone = demoSection(site.origin, "products", 1_000, o.at * 1_000);
              await site.writer.delete(gone.map((r) => new URL(r.loc).href));
              for (let i = o.at * 1_000; i < Math.min(next, o.at * 1_000 + 1_000); i++) where.set(i, null);
            } else if (o.op === "revive") {
              // The block's URLs written again as they were first: their old keys come back.
              const back = products.slice(o.at * 1_000, o.at * 1_000 + 1_000).map((r) => ({ ...r, lastmod: "2026-06-01" }));
              await write(site, back);
              for (let j = 0; j < back.length; j++) where.set(o.at * 1_000 + j, "products");
            } else {
              await write(site, demoSection(site.origin, "products", o.count, next));
              for (let i = next; i < next + o.count; i++) where.set(i, "products");
              next += o.count;
            }
          }
          const summary = await regenerateSite(o.deps, site.origin);
          expect(summary.failed).toEqual([]);
          spliced += summary.shardsSpliced;
          const shards = listed(await manifestOf(site));
          const locs = new Map<string, string[]>();
          for (const shard of shards) {
            const stored = await storedGzip(site, shard);
            expect(stored, `${shard.section}-${shard.n}`).toEqual(await liveGzip(site, shard));
            const xml = text(await gunzip(stored));
            expect(text(new Uint8Array(gunzipSync(stored)))).toBe(xml);
            locs.set(shard.section, [...(locs.get(shard.section) ?? []), ...locsOf(xml)]);
          }
          const expected = demoSection(site.origin, "products", next).flatMap((r, i) => (where.get(i) === "products" ? [new URL(r.loc).href] : []));
          expect((locs.get("products") ?? []).sort()).toEqual(expected.sort());
          const full = await regenerateSite(o.deps, site.origin, { full: true });
          expect(full.shardsRendered).toBe(0);
          expect(listed(await manifestOf(site)).map(planned)).toEqual(shards.map(planned));
        }
      }),
      { numRuns: 8, seed: 5302, endOnFailure: true },
    );
    expect(spliced).toBeGreaterThan(0);
  });
});
