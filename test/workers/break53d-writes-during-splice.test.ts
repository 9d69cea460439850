/**
 * Issue 53 ("blocks"), tester break53d, claim 4: a writer that commits while a run is splicing.
 * One URL of block 1 of a 3,000-URL shard changes; the run splicing it is interrupted — while it
 * reads the changed block's rows, or between its render and its snapshot's store — by a write that
 * commits there and then (in the same block, in another block, a deletion, an append of 1,200
 * URLs). The run must not fail, and after the next run the stored shard must be its whole render
 * and serve every acknowledged write.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { RegenDeps } from "../../src/regen/deps.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotGzip, write } from "./regen-support.ts";
import { gunzip, text } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);
const INITIAL = 3_000;

type Hook = () => Promise<void>;

/** `deps` whose first range scan calls `hook` after its first row (the splice reading its block). */
function duringScan(deps: RegenDeps, hook: Hook): RegenDeps {
  let fired = false;
  const scan = deps.store.scan!;
  const scanner = {
    async *scan(...args: Parameters<typeof scan.scan>) {
      let rows = 0;
      for await (const row of scan.scan(...args)) {
        yield row;
        if (++rows === 1 && !fired) {
          fired = true;
          await hook();
        }
      }
    },
  };
  return { ...deps, store: new Proxy(deps.store, { get: (t, p) => (p === "scan" ? scanner : Reflect.get(t, p, t)) }) };
}

/** `deps` whose first snapshot commit calls `hook` first (rendered, not yet stored). */
function beforeCommit(deps: RegenDeps, hook: Hook): RegenDeps {
  let fired = false;
  const snapshots = deps.snapshots;
  return {
    ...deps,
    snapshots: new Proxy(snapshots, {
      get: (t, p) => {
        const value = Reflect.get(t, p, t) as unknown;
        if (typeof value !== "function") return value;
        const bound = (value as (...a: unknown[]) => Promise<unknown>).bind(t);
        if (p !== "commit") return bound;
        return async (...args: unknown[]) => {
          if (!fired) {
            fired = true;
            await hook();
          }
          return bound(...args);
        };
      },
    }),
  };
}

const rec = (site: Site, i: number) => demoSection(site.origin, "pages", 1, i)[0]!;
const href = (site: Site, i: number) => new URL(rec(site, i).loc).href;

/** A write committed mid-run, and what the served sitemap must then show. */
const writes: [string, (site: Site) => Promise<{ present: [string, string | null][]; absent: string[] }>][] = [
  [
    "an update in the block being spliced",
    async (site) => {
      await write(site, [{ ...rec(site, 1_700), lastmod: "2026-10-17" }], PAST + 2_000);
      return { present: [[href(site, 1_700), "2026-10-17"]], absent: [] };
    },
  ],
  [
    "an update in another block",
    async (site) => {
      await write(site, [{ ...rec(site, 100), lastmod: "2026-10-01" }], PAST + 2_000);
      return { present: [[href(site, 100), "2026-10-01"]], absent: [] };
    },
  ],
  [
    "a deletion in the block being spliced",
    async (site) => {
      await site.writer.delete([href(site, 1_600)], PAST + 2_000);
      return { present: [], absent: [href(site, 1_600)] };
    },
  ],
  [
    "1,200 URLs appended",
    async (site) => {
      await write(site, demoSection(site.origin, "pages", 1_200, INITIAL), PAST + 2_000);
      return {
        present: [
          [href(site, INITIAL), null],
          [href(site, INITIAL + 1_199), null],
        ],
        absent: [],
      };
    },
  ],
];

const points: [string, (deps: RegenDeps, hook: Hook) => RegenDeps][] = [
  ["while the block's rows are read", duringScan],
  ["between the render and the store", beforeCommit],
];

describe("break53d: writes that commit while a run splices", () => {
  beforeEach(() => vi.spyOn(console, "log").mockImplementation(() => undefined));
  afterEach(() => vi.restoreAllMocks());

  for (const [when, at] of points) {
    for (const [what, commit] of writes) {
      it(`${what}, ${when}: the next run serves it, the snapshot the whole render`, async () => {
        const site = newSite("b53d-during");
        await write(site, demoSection(site.origin, "pages", INITIAL), PAST);
        const o = observedDeps(site);
        await regenerateSite(o.deps, site.origin);
        await write(site, [{ ...rec(site, 1_500), lastmod: "2026-09-15" }], PAST + 1_000);
        let expected: Awaited<ReturnType<typeof commit>> | null = null;
        const run = await regenerateSite(
          at(o.deps, async () => {
            expected = await commit(site);
          }),
          site.origin,
        );
        expect(run.failed).toEqual([]);
        expect(run.shardsSpliced).toBe(1);
        expect(expected).not.toBeNull();
        const next = await regenerateSite(o.deps, site.origin);
        expect(next.failed).toEqual([]);

        const xmls: string[] = [];
        for (const shard of listed(await manifestOf(site))) {
          const stored = await snapshotGzip(site, shard.snapshot!);
          expect(stored).toEqual(await readAll(gzipDocument(renderShard(services(site.env), site.origin, shard))));
          xmls.push(text(await gunzip(stored)));
        }
        const xml = xmls.join("");
        const { present, absent } = expected!;
        const entry = (u: string) => new RegExp(`<loc>${u.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}</loc>\\s*(?:<lastmod>([^<]*)</lastmod>)?`).exec(xml);
        expect({
          changed: xml.includes("2026-09-15"),
          present: present.map(([u, lastmod]) => (entry(u) !== null && (lastmod === null || entry(u)![1]?.startsWith(lastmod)) ? "served" : u)),
          absent: absent.map((u) => (entry(u) === null ? "gone" : u)),
        }).toEqual({ changed: true, present: present.map(() => "served"), absent: absent.map(() => "gone") });
      });
    }
  }
});
