/**
 * Issue 53 ("blocks"), tester break53: a regeneration killed mid-run. Generated programs of
 * changes (updates, deletions, whole blocks deleted and re-added, appends that split shards), each
 * followed by a run that dies at a chosen KV or D1 call (every later call of the run fails too, its
 * lease left held, as when the isolate is killed), then by its retry under the same lease name.
 * After the retry, every listed shard with a snapshot must hold its live render (one ETag, one
 * body), the snapshot's block table must match the file, and a full pass must plan the same
 * entries and render nothing.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KvSnapshotStore } from "../../src/adapters/kv/snapshot-store.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";
import { gunzip, locsOf, text } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const PAST = Date.UTC(2026, 0, 1);
const INITIAL = 2_600;

/** Calls made through `dying` objects; from call `at` on, every one throws. */
class Killer {
  calls = 0;
  readonly at: number;
  constructor(at: number) {
    this.at = at;
  }
  dying<T extends object>(target: T, methods: readonly string[]): T {
    return new Proxy(target, {
      get: (t, prop) => {
        const value = Reflect.get(t, prop, t) as unknown;
        if (typeof value !== "function") return value;
        const bound = (value as (...a: unknown[]) => unknown).bind(t);
        if (!methods.includes(String(prop))) return bound;
        return (...args: unknown[]) => {
          if (++this.calls >= this.at) return Promise.reject(new Error(`killed at call ${this.calls} (${String(prop)})`));
          return bound(...args);
        };
      },
    });
  }
}

const planned = (s: ShardEntry) => ({
  n: s.n,
  firstKey: s.firstKey,
  urlCount: s.urlCount,
  byteCount: s.byteCount,
  version: s.version,
  extKinds: s.extKinds,
  pageStarts: s.pageStarts,
});

const op = fc.oneof(
  fc.record({ op: fc.constant("update" as const), at: fc.nat(INITIAL - 1) }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(INITIAL - 1) }),
  fc.record({ op: fc.constant("deleteBlock" as const), at: fc.nat(2) }),
  fc.record({ op: fc.constant("revive" as const), at: fc.nat(2) }),
  fc.record({ op: fc.constant("append" as const), count: fc.integer({ min: 1, max: 1_200 }) }),
);

describe("break53: runs killed mid-way, then retried", () => {
  it("after the retry every stored shard is its live render and what a pass plans", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    let run = 0;
    let killed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.array(op, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 30 })), { minLength: 1, maxLength: 4 }),
        async (steps) => {
          const site = newSite(`b53-kill-${run++}`, { MAX_URLS_PER_SHARD: "2500" });
          const initial = demoSection(site.origin, "pages", INITIAL);
          await write(site, initial, PAST);
          const o = observedDeps(site);
          await regenerateSite(o.deps, site.origin, { leaseId: "chain" });
          const live = new Set<number>(Array.from({ length: INITIAL }, (_, i) => i));
          let next = INITIAL;
          let stamp = 1;
          for (const [ops, killAt] of steps) {
            for (const o of ops) {
              if (o.op === "update") {
                const [r] = demoSection(site.origin, "pages", 1, o.at);
                await write(site, [{ ...r, lastmod: `2026-04-${String(1 + (stamp % 28)).padStart(2, "0")}` }], PAST + stamp++);
                live.add(o.at);
              } else if (o.op === "delete") {
                await site.writer.delete([new URL(demoSection(site.origin, "pages", 1, o.at)[0]!.loc).href], PAST + stamp++);
                live.delete(o.at);
              } else if (o.op === "deleteBlock") {
                const gone = demoSection(site.origin, "pages", 1_000, o.at * 1_000);
                await site.writer.delete(
                  gone.map((r) => new URL(r.loc).href),
                  PAST + stamp++,
                );
                for (let i = o.at * 1_000; i < Math.min(next, o.at * 1_000 + 1_000); i++) live.delete(i);
              } else if (o.op === "revive") {
                const back = initial.slice(o.at * 1_000, o.at * 1_000 + 1_000).map((r) => ({ ...r, lastmod: "2026-06-01" }));
                await write(site, back, PAST + stamp++);
                for (let j = 0; j < back.length; j++) live.add(o.at * 1_000 + j);
              } else {
                await write(site, demoSection(site.origin, "pages", o.count, next), PAST + stamp++);
                for (let i = next; i < next + o.count; i++) live.add(i);
                next += o.count;
              }
            }
            // The run that dies at call `killAt` of the snapshot KV, the regeneration state or the manifest store.
            const killer = new Killer(killAt);
            const kv = killer.dying(site.env.SNAPSHOTS, ["get", "getWithMetadata", "put", "delete", "list"]);
            const dying = observedDeps(site, {
              snapshots: new KvSnapshotStore(kv),
              state: killer.dying(o.deps.state, ["load", "save", "tentative", "confirm", "supersede", "due", "forget", "recordRun", "release"]),
              manifests: killer.dying(o.deps.manifests, ["load", "save"]),
            });
            const died = await regenerateSite(dying.deps, site.origin, { leaseId: "chain" }).then(
              () => false,
              () => true,
            );
            if (died) killed++;
            const retry = await regenerateSite(o.deps, site.origin, { leaseId: "chain" });
            expect(retry.failed).toEqual([]);

            const shards = listed(await manifestOf(site));
            const locs: string[] = [];
            for (const shard of shards) {
              const name = `${shard.section}-${shard.n}`;
              expect(shard.snapshot, name).toBeTruthy();
              const stored = await snapshotGzip(site, shard.snapshot!);
              expect(stored, name).toEqual(await readAll(gzipDocument(renderShard(services(site.env), site.origin, shard))));
              // The block table stored after the gzip, and the gzip a splice would read with it.
              const withTable = await o.deps.snapshots.withBlocks(shard.snapshot!, Number.MAX_SAFE_INTEGER);
              expect(withTable?.gzip, name).toEqual(stored);
              const table = withTable?.blocks;
              expect(table?.version, name).toBe(shard.version);
              expect(table!.blocks.reduce((n, b) => n + b.deflatedBytes, 0) + 20, name).toBe(stored.byteLength);
              locs.push(...locsOf(text(await gunzip(stored))));
            }
            const expected = demoSection(site.origin, "pages", next).flatMap((r, i) => (live.has(i) ? [new URL(r.loc).href] : []));
            expect(locs.sort()).toEqual(expected.sort());
            const full = await regenerateSite(o.deps, site.origin, { full: true, leaseId: "chain" });
            expect(full.shardsRendered).toBe(0);
            expect(listed(await manifestOf(site)).map(planned)).toEqual(shards.map(planned));
          }
        },
      ),
      { numRuns: 8, seed: 5303, endOnFailure: true },
    );
    expect(killed).toBeGreaterThan(0);
  });
});
