/**
 * Issue 53 ("blocks"), tester break53d, claims 1–3: generated programs of writes and runs on a
 * two-shard site whose snapshots are stored in 8 KiB parts, with the snapshot grace at 0 (the GC
 * deletes whatever is superseded at once). A run is an ordinary one, a duplicate (the same chain
 * run twice in a row), or one killed at its Nth call of the D1 database or the snapshot KV — every
 * call from the Nth on throws, as when the isolate dies — followed by its retry under the same
 * lease name. After every run: each listed shard's snapshot is its whole live render, every write
 * acknowledged before the run is served, every key the manifest names is in KV; at the end a full
 * pass renders nothing and plans the same entries.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KvSnapshotStore } from "../../src/adapters/kv/snapshot-store.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { RegenDeps } from "../../src/regen/deps.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import type { RunSummary } from "../../src/regen/summary.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, plannedEntry, readAll } from "./regen-support.ts";
import { Killer } from "./support/killer.ts";
import { call, gunzip, locsOf, text, validRecords } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const PAST = Date.UTC(2026, 0, 1);
const INITIAL = 2_600;
const VARS = { MAX_URLS_PER_SHARD: "2500", MANIFEST_CACHE_TTL: "0", SNAPSHOT_GRACE_SECONDS: "0" };
/** Two forms: runs that do everything at once, and runs bounded to one shard (work carried over, repeated until converged). */
const FORMS = [
  { name: "unbounded runs", vars: VARS, seed: 53_453 },
  { name: "runs of one shard each", vars: { ...VARS, MAX_URLS_PER_SHARD: "1200", REGEN_MAX_SHARDS: "1" }, seed: 53_454 },
];

/** Runs until nothing is left (at most 10 runs); each must fail nothing. */
async function converge(deps: RegenDeps, origin: string): Promise<RunSummary> {
  for (let i = 0; ; i++) {
    const summary = await regenerateSite(deps, origin, { leaseId: "chain" });
    expect(summary.failed).toEqual([]);
    if (!(summary.pendingShards > 0 || summary.passPending) || i === 9) return summary;
  }
}

/** Deps on `env` with snapshots in 8 KiB parts. */
const depsOf = (site: Site, env: Env) => observedDeps({ ...site, env }, { snapshots: new KvSnapshotStore(env.SNAPSHOTS, { partBytes: 8192 }) }).deps;

const write = fc.oneof(
  fc.record({ op: fc.constant("update" as const), at: fc.nat(INITIAL + 500) }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(INITIAL + 500) }),
  fc.record({ op: fc.constant("append" as const), count: fc.integer({ min: 1, max: 600 }) }),
);
const run = fc.oneof(
  fc.constant({ run: "plain" as const }),
  fc.constant({ run: "twice" as const }),
  fc.record({ run: fc.constant("killed" as const), at: fc.integer({ min: 1, max: 32 }) }),
);

describe("break53d: killed, duplicated and plain runs over parted snapshots, GC at once", () => {
  for (const form of FORMS)
    it(`${form.name}: after every run the served shards are the whole renders of every acknowledged write`, async () => {
      vi.spyOn(console, "log").mockImplementation(() => undefined);
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      let n = 0;
      let killed = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(fc.array(write, { maxLength: 3 }), run), { minLength: 1, maxLength: 6 }), async (steps) => {
          const site = newSite(`b53d-prog-${n++}`, form.vars);
          const put = (inputs: unknown[], now: number) => site.writer.upsert(validRecords(site.env, inputs), now);
          /** The model: URL → the lastmod written last (undefined: the demo's own). */
          const model = new Map<string, string | undefined>();
          const record = (i: number) => demoSection(site.origin, "pages", 1, i)[0]!;
          await put(demoSection(site.origin, "pages", INITIAL), PAST);
          for (let i = 0; i < INITIAL; i++) model.set(new URL(record(i).loc).href, undefined);
          let next = INITIAL;
          let stamp = 1;
          const deps = depsOf(site, site.env);
          await converge(deps, site.origin);
          for (const [writes, kind] of steps) {
            for (const w of writes) {
              stamp++;
              if (w.op === "append") {
                await put(demoSection(site.origin, "pages", w.count, next), PAST + stamp);
                for (let i = next; i < next + w.count; i++) model.set(new URL(record(i).loc).href, undefined);
                next += w.count;
              } else if (w.at < next) {
                const href = new URL(record(w.at).loc).href;
                if (w.op === "delete") {
                  await site.writer.delete([href], PAST + stamp);
                  model.delete(href);
                } else {
                  const lastmod = `2026-07-${String(1 + (stamp % 28)).padStart(2, "0")}`;
                  await put([{ ...record(w.at), lastmod }], PAST + stamp);
                  model.set(href, lastmod);
                }
              }
            }
            if (kind.run === "killed") {
              const killer = new Killer(kind.at);
              const env = { ...site.env, DB: killer.d1(site.env.DB), SNAPSHOTS: killer.kv(site.env.SNAPSHOTS) } as Env;
              const died = await regenerateSite(depsOf(site, env), site.origin, { leaseId: "chain" }).then(
                () => false,
                () => true,
              );
              if (died) killed++;
            }
            await converge(deps, site.origin);
            if (kind.run === "twice") {
              const again = await regenerateSite(deps, site.origin, { leaseId: "chain" });
              expect({ rendered: again.shardsRendered, published: again.published }).toEqual({ rendered: 0, published: false });
            }

            const manifest = await manifestOf(site);
            const served = new Map<string, string | undefined>();
            const missing: string[] = [];
            for (const key of [manifest.snapshot, ...manifest.shards.map((s) => s.snapshot)]) {
              if (key && (await site.env.SNAPSHOTS.get(key)) === null) missing.push(key);
            }
            expect(missing).toEqual([]);
            for (const shard of listed(manifest)) {
              const name = `${shard.section}-${shard.n}`;
              const stored = await readAll((await deps.snapshots.get(shard.snapshot!))!);
              expect(stored, name).toEqual(await readAll(gzipDocument(renderShard(services(site.env), site.origin, shard))));
              for (const m of text(await gunzip(stored)).matchAll(/<loc>([^<]*)<\/loc>(?:\s*<lastmod>([^<]*)<\/lastmod>)?/g)) {
                served.set(m[1]!.replaceAll("&amp;", "&"), m[2]);
              }
            }
            expect([...served.keys()].sort()).toEqual([...model.keys()].sort());
            // Over HTTP: the snapshot and a live render answer one ETag and the same bytes; the index lists every shard.
            const snapEnv = { ...site.env, EDGE_CACHE_TTL: "0" } as Env;
            const liveEnv = { ...site.env, SNAPSHOTS: undefined, EDGE_CACHE_TTL: "0" } as unknown as Env;
            for (const shard of listed(manifest)) {
              const url = `${site.origin}/sitemap-${shard.section}-${shard.n}.xml.gz`;
              const [a, b] = [await call(snapEnv, url), await call(liveEnv, url)];
              expect([a.headers.get("x-sitemap-source"), a.headers.get("etag")], url).toEqual(["snapshot", b.headers.get("etag")]);
              expect(new Uint8Array(await a.arrayBuffer()), url).toEqual(new Uint8Array(await b.arrayBuffer()));
            }
            const index = locsOf(await (await call(snapEnv, `${site.origin}/sitemap.xml`)).text());
            expect(index.sort()).toEqual(
              listed(manifest)
                .map((s) => `${site.origin}/sitemap-${s.section}-${s.n}.xml`)
                .sort(),
            );
            const stale = [...model].filter(([href, lastmod]) => lastmod !== undefined && !served.get(href)?.startsWith(lastmod));
            expect(stale).toEqual([]);
          }
          const before = listed(await manifestOf(site)).map(plannedEntry);
          let rendered = 0;
          for (let i = 0, full = true; i < 10; i++, full = false) {
            const r = await regenerateSite(deps, site.origin, { full, leaseId: "chain" });
            rendered += r.shardsRendered;
            if (!(r.pendingShards > 0 || r.passPending)) break;
          }
          expect(rendered).toBe(0);
          expect(listed(await manifestOf(site)).map(plannedEntry)).toEqual(before);
        }),
        { numRuns: 6, seed: form.seed, endOnFailure: true },
      );
      expect(killed).toBeGreaterThan(0);
    });
});
