/**
 * Issue 53 ("blocks"), tester break53d, claim 2: two regenerations of one site started together.
 * Under two lease names (two triggers) one must be refused and the other do the work. Under one
 * name (a job step and the retry that takes its lease back while the first attempt still runs: the
 * lease is named by the chain, src/regen/lease.ts) both run; the interleavings below are forced
 * with gates on their D1 calls. Afterwards the write acknowledged between the two feed reads must be
 * served, and nothing the current manifest references may have been deleted by the GC.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import { LeaseLostError, type ShardManifest } from "../../src/manifest/manifest.ts";
import { RegenBusyError } from "../../src/regen/lease.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, readAll, snapshotXml, write } from "./regen-support.ts";

const PAST = Date.UTC(2026, 0, 1);

interface Gate {
  open: () => void;
  /** Resolves once opened, or after 3 s (an interleaving that did not happen must not hang the test). */
  passed: () => Promise<void>;
}
function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, passed: () => Promise.race([opened, new Promise<void>((r) => setTimeout(r, 3_000))]) };
}

/** `target` with `method` wrapped: `before` awaited before the call, `after` run once it resolved. */
function around<T extends object>(target: T, wraps: Record<string, { before?: () => Promise<void>; after?: () => void }>): T {
  return new Proxy(target, {
    get: (t, prop) => {
      const value = Reflect.get(t, prop, t) as unknown;
      if (typeof value !== "function") return value;
      const bound = (value as (...a: unknown[]) => Promise<unknown>).bind(t);
      const wrap = wraps[String(prop)];
      if (!wrap) return bound;
      return async (...args: unknown[]) => {
        await wrap.before?.();
        const result = await bound(...args);
        wrap.after?.();
        return result;
      };
    },
  });
}

/** Each run's end: published, or refused because the other took its lease. */
const outcomes = (settled: PromiseSettledResult<unknown>[]) =>
  settled.map((r) => (r.status === "fulfilled" ? "ran" : r.reason instanceof LeaseLostError ? "lease lost" : String(r.reason)));

const url = (site: Site, i: number) => demoSection(site.origin, "pages", 1, i)[0]!;

/** Every listed shard's snapshot against its whole render, and every snapshot the manifest names present in KV. */
async function check(site: Site, manifest: ShardManifest) {
  const shards = listed(manifest);
  const missing: string[] = [];
  for (const key of [manifest.snapshot, ...shards.map((s) => s.snapshot)]) {
    if (key && (await site.env.SNAPSHOTS.get(key)) === null) missing.push(key.replace(/^.*\/(?=[^/]*\/[^/]*$)/, ""));
  }
  let whole = true;
  for (const shard of shards) {
    if (!shard.snapshot || missing.some((m) => shard.snapshot!.endsWith(m))) continue;
    const stored = await readAll((await services(site.env).snapshots!.get(shard.snapshot))!);
    const live = await readAll(gzipDocument(renderShard(services(site.env), site.origin, shard)));
    whole &&= stored.byteLength === live.byteLength && stored.every((b, i) => b === live[i]);
  }
  return { missing, whole };
}

/**
 * Run A reads the feed (change c1), then waits at its manifest save; c2 is written and
 * acknowledged; run B (same lease name) reads c1 and c2 and publishes; A publishes after it and
 * saves its state first; B's state save comes last. `hold`: A's GC confirmation also waits for B's GC.
 */
async function raceOneLease(site: Site, hold: boolean) {
  const aAtSave = gate();
  const bPublished = gate();
  const aSaved = gate();
  const bCollected = gate();
  const base = observedDeps(site).deps;
  const a = observedDeps(site, {
    manifests: around(base.manifests, {
      save: {
        before: async () => {
          aAtSave.open();
          await bPublished.passed();
        },
      },
    }),
    state: around(base.state, { save: { after: aSaved.open }, ...(hold ? { confirm: { before: bCollected.passed } } : {}) }),
  });
  const b = observedDeps(site, {
    manifests: around(base.manifests, { save: { after: bPublished.open } }),
    state: around(base.state, { save: { before: aSaved.passed }, forget: { after: bCollected.open } }),
  });
  const runA = regenerateSite(a.deps, site.origin, { leaseId: "chain" });
  await aAtSave.passed();
  await write(site, [{ ...url(site, 2_500), lastmod: "2026-09-02" }], PAST + 2_000);
  const runB = regenerateSite(b.deps, site.origin, { leaseId: "chain" });
  return Promise.allSettled([runA, runB]);
}

async function seeded(label: string, vars: Record<string, string> = {}) {
  const site = newSite(label, vars);
  await write(site, demoSection(site.origin, "pages", 3_000), PAST);
  const o = observedDeps(site);
  await regenerateSite(o.deps, site.origin);
  await write(site, [{ ...url(site, 100), lastmod: "2026-09-01" }], PAST + 1_000);
  return { site, o };
}

describe("break53d: two regenerations of one site at once", () => {
  beforeEach(() => vi.spyOn(console, "log").mockImplementation(() => undefined));
  afterEach(() => vi.restoreAllMocks());

  it("control: under two lease names one is refused, and the site ends as a full pass plans it", async () => {
    const { site, o } = await seeded("b53d-race-two");
    const [x, y] = await Promise.allSettled([regenerateSite(o.deps, site.origin), regenerateSite(o.deps, site.origin)]);
    const outcomes = [x, y].map((r) => (r.status === "fulfilled" ? "ran" : r.reason instanceof RegenBusyError ? "busy" : String(r.reason)));
    expect(outcomes.sort()).toEqual(["busy", "ran"]);
    await write(site, [{ ...url(site, 2_500), lastmod: "2026-09-02" }], PAST + 2_000);
    await regenerateSite(o.deps, site.origin);
    const manifest = await manifestOf(site);
    expect(await check(site, manifest)).toEqual({ missing: [], whole: true });
    const xml = new TextDecoder().decode(await snapshotXml(site, listed(manifest)[0]!.snapshot!));
    expect([xml.includes("2026-09-01"), xml.includes("2026-09-02")]).toEqual([true, true]);
    expect((await regenerateSite(o.deps, site.origin, { full: true })).shardsRendered).toBe(0);
  });

  // Broke claim 2 (and 4) before the fence: the later publish of the run that read less won, the
  // other's cursor was kept, and write c2 was lost. Now A, whose lease B took back, publishes nothing.
  it("one lease name, a write between the two feed reads: after a further run the write is served", async () => {
    const { site, o } = await seeded("b53d-race-one");
    const settled = await raceOneLease(site, false);
    expect(outcomes(settled)).toEqual(["lease lost", "ran"]);
    const later = await regenerateSite(o.deps, site.origin);
    expect(later.failed).toEqual([]);
    const manifest = await manifestOf(site);
    const xml = new TextDecoder().decode(await snapshotXml(site, listed(manifest)[0]!.snapshot!));
    expect({ c1: xml.includes("2026-09-01"), c2: xml.includes("2026-09-02"), ...(await check(site, manifest)) }).toEqual({
      c1: true,
      c2: true,
      missing: [],
      whole: true,
    });
  });

  // Broke claim 2 before the fence: run B's GC (grace 0) deleted what run A wrote, and A's manifest, published last, named it.
  it("one lease name, grace 0: nothing the current manifest names is deleted", async () => {
    const { site } = await seeded("b53d-race-gc", { MANIFEST_CACHE_TTL: "0", SNAPSHOT_GRACE_SECONDS: "0" });
    const settled = await raceOneLease(site, true);
    expect(outcomes(settled)).toEqual(["lease lost", "ran"]);
    expect((await check(site, await manifestOf(site))).missing).toEqual([]);
  });
});
