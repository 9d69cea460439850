/**
 * Issue 53 ("blocks"), tester break53d, claims 1 and 3: the shard the brief names as stored in
 * parts — long URLs with many images — on a small part size (8 KiB), under generated programs:
 * images added to, changed on and taken from URLs (a block gaining or losing the image namespace),
 * a video added, deletions and appends. After every run each stored shard is its whole render and
 * answers over HTTP the live render's ETag and bytes; a full pass then renders nothing and plans
 * the same entries (counts, version, lastChange, kinds, blockStarts, pageStarts).
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KvSnapshotStore } from "../../src/adapters/kv/snapshot-store.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import type { SnapshotMeta } from "../../src/snapshots/store.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, plannedEntry, readAll, write } from "./regen-support.ts";
import { call } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const PAST = Date.UTC(2026, 0, 1);
const INITIAL = 2_400;
const pad = "x".repeat(180);

/** URL `i` of the products section, long, with `images` images (long locations) and maybe a video. */
function product(site: Site, i: number, images: number, video = false, tag = "") {
  return {
    loc: `${site.origin}/products/${pad}/${i}`,
    section: "products",
    lastmod: tag ? "2026-08-01" : "2026-01-01",
    ...(images > 0
      ? {
          images: Array.from({ length: images }, (_, k) => ({
            loc: `https://cdn.example.com/${pad}/${i}/${k}${tag}.jpg`,
            title: `Item ${i} view ${k}${tag}`,
          })),
        }
      : {}),
    ...(video
      ? {
          videos: [
            {
              thumbnail_loc: `https://cdn.example.com/${i}/thumb.jpg`,
              title: `Video ${i}`,
              description: `About item ${i}`,
              content_loc: `https://cdn.example.com/${i}/clip.mp4`,
            },
          ],
        }
      : {}),
  };
}

const planned = (s: ShardEntry) => ({ ...plannedEntry(s), extKinds: s.extKinds });

const op = fc.oneof(
  fc.record({ op: fc.constant("images" as const), at: fc.nat(INITIAL - 1), count: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ op: fc.constant("bareBlock" as const), block: fc.nat(2) }),
  fc.record({ op: fc.constant("video" as const), at: fc.nat(INITIAL - 1) }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(INITIAL - 1) }),
  fc.record({ op: fc.constant("append" as const), count: fc.integer({ min: 1, max: 700 }) }),
);

describe("break53d: long URLs with many images, stored in parts", () => {
  it("after every run: the whole render stored and served, the entry a pass plans", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    let n = 0;
    let spliced = 0;
    let parted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }), async (steps) => {
        const site = newSite(`b53d-rich-${n++}`, { MAX_URLS_PER_SHARD: "3000" });
        await write(
          site,
          Array.from({ length: INITIAL }, (_, i) => product(site, i, 3 + (i % 3))),
          PAST,
        );
        const deps = observedDeps(site, { snapshots: new KvSnapshotStore(site.env.SNAPSHOTS, { partBytes: 8192 }) }).deps;
        await regenerateSite(deps, site.origin);
        let next = INITIAL;
        let stamp = 0;
        for (const ops of steps) {
          for (const o of ops) {
            stamp += 1_000;
            if (o.op === "images") await write(site, [product(site, o.at, o.count, false, `-${stamp}`)], PAST + stamp);
            else if (o.op === "video") await write(site, [product(site, o.at, 1, true, `-${stamp}`)], PAST + stamp);
            else if (o.op === "bareBlock")
              await write(
                site,
                Array.from({ length: 1_000 }, (_, k) => product(site, o.block * 1_000 + k, 0, false, `-${stamp}`)).filter(
                  (_, k) => o.block * 1_000 + k < next,
                ),
                PAST + stamp,
              );
            else if (o.op === "delete") await site.writer.delete([new URL(product(site, o.at, 0).loc).href], PAST + stamp);
            else {
              await write(
                site,
                Array.from({ length: o.count }, (_, k) => product(site, next + k, k % 4)),
                PAST + stamp,
              );
              next += o.count;
            }
          }
          const run = await regenerateSite(deps, site.origin);
          expect(run.failed).toEqual([]);
          spliced += run.shardsSpliced;
          const snapEnv = { ...site.env, EDGE_CACHE_TTL: "0" } as Env;
          const liveEnv = { ...site.env, SNAPSHOTS: undefined, EDGE_CACHE_TTL: "0" } as unknown as Env;
          for (const shard of listed(await manifestOf(site))) {
            const name = `${shard.section}-${shard.n}`;
            if ((await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard.snapshot!)).metadata?.parts) parted++;
            const stored = await readAll((await deps.snapshots.get(shard.snapshot!))!);
            expect(stored, name).toEqual(await readAll(gzipDocument(renderShard(services(site.env), site.origin, shard))));
            const url = `${site.origin}/sitemap-${name}.xml.gz`;
            const [a, b] = [await call(snapEnv, url), await call(liveEnv, url)];
            expect([a.headers.get("x-sitemap-source"), a.headers.get("etag")], name).toEqual(["snapshot", b.headers.get("etag")]);
            expect(new Uint8Array(await a.arrayBuffer()), name).toEqual(stored);
            await b.arrayBuffer();
            // The identity document too (its length from the snapshot's metadata when served from it).
            const [x, y] = [await call(snapEnv, `${site.origin}/sitemap-${name}.xml`), await call(liveEnv, `${site.origin}/sitemap-${name}.xml`)];
            expect([x.headers.get("etag"), x.headers.get("content-length")], name).toEqual([y.headers.get("etag"), y.headers.get("content-length")]);
            expect(await x.text(), name).toBe(await y.text());
          }
          const before = listed(await manifestOf(site)).map(planned);
          const full = await regenerateSite(deps, site.origin, { full: true });
          expect(full.shardsRendered).toBe(0);
          expect(listed(await manifestOf(site)).map(planned)).toEqual(before);
        }
      }),
      { numRuns: 4, seed: 53_455, endOnFailure: true },
    );
    expect(spliced).toBeGreaterThan(0);
    expect(parted).toBeGreaterThan(0);
  });
});
