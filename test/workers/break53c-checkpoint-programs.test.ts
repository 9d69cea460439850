/**
 * Issue 53 ("blocks"), tester break53c, claims 2 and 3: generated programs on a 10-block shard of
 * short URLs (~54 bytes of XML each, so a block thinned to 500 rows is under the 32 KiB window and a
 * window spans blocks) around its checkpoint (block 8): updates, runs of deletions in one block,
 * revivals and appends. After every run the stored file must be the shard's whole render and the
 * entry what a pass over every row plans.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);
const INITIAL = 10_000;

const planned = (s: ShardEntry) => ({
  urlCount: s.urlCount,
  byteCount: s.byteCount,
  version: s.version,
  blockStarts: s.blockStarts,
  extKinds: s.extKinds,
});
const short = (site: Site, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ loc: `${site.origin}/${from + i}`, section: "pages" }));

const op = fc.oneof(
  fc.record({ op: fc.constant("update" as const), at: fc.nat(INITIAL - 1) }),
  fc.record({ op: fc.constant("thin" as const), block: fc.integer({ min: 5, max: 9 }), count: fc.integer({ min: 100, max: 500 }) }),
  fc.record({ op: fc.constant("revive" as const), block: fc.integer({ min: 5, max: 9 }) }),
  fc.record({ op: fc.constant("append" as const), count: fc.integer({ min: 1, max: 1_200 }) }),
);

describe("break53c: generated programs around a checkpoint, short URLs", () => {
  it("after every run: the whole render stored, the entry a pass plans", async () => {
    let n = 0;
    let spliced = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }), async (steps) => {
        const site = newSite(`c${n++}`);
        await write(site, short(site, 0, INITIAL), PAST);
        const o = observedDeps(site);
        await regenerateSite(o.deps, site.origin);
        let next = INITIAL;
        let day = 0;
        for (const ops of steps) {
          for (const o2 of ops) {
            day++;
            if (o2.op === "update")
              await write(site, [{ ...short(site, o2.at, 1)[0]!, lastmod: `2026-09-${String(1 + (day % 28)).padStart(2, "0")}` }], PAST + day * 1_000);
            else if (o2.op === "thin") await site.writer.delete(short(site, o2.block * 1_000 + 250, o2.count).map((r) => new URL(r.loc).href));
            else if (o2.op === "revive") await write(site, short(site, o2.block * 1_000 + 250, 500), PAST + day * 1_000);
            else {
              await write(site, short(site, next, o2.count), PAST + day * 1_000);
              next += o2.count;
            }
          }
          const run = await regenerateSite(o.deps, site.origin);
          expect(run.failed).toEqual([]);
          spliced += run.shardsSpliced;
          for (const shard of listed(await manifestOf(site))) {
            expect(await snapshotGzip(site, shard.snapshot!)).toEqual(await readAll(gzipDocument(renderShard(services(site.env), site.origin, shard))));
          }
          const before = listed(await manifestOf(site)).map(planned);
          const pass = await regenerateSite(o.deps, site.origin, { full: true });
          expect(pass.shardsRendered).toBe(0);
          expect(listed(await manifestOf(site)).map(planned)).toEqual(before);
        }
      }),
      { numRuns: 6, seed: 5_353, endOnFailure: true },
    );
    expect(spliced).toBeGreaterThan(0);
  });
});
