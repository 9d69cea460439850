/**
 * Cron regeneration: change detection, one-pass re-render of only what changed, snapshot bytes
 * equal to live bytes, bounded runs that converge, the scheduled handler and the status endpoint.
 */
import { describe, expect, it } from "vitest";
import { demoSection, withDemoExtensions } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import { buildManifest } from "../../src/manifest/build.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { manifestBuildOptions, rebuildManifest, renderShard } from "../../src/sitemaps.ts";
import type { RecordStore } from "../../src/store/port.ts";
import { fetchPath, listed, liveXml, manifestOf, newSite, observedDeps, readAll, shardName, snapshotGzip, snapshotXml, write } from "./regen-support.ts";
import { drain, runCron, withJobs } from "./support/jobs.ts";
import { call, gunzip, locsOf, text, validRecords } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);

describe("regeneration: only what changed", () => {
  it("re-renders only the changed shard and the index, reading only its rows; deletions and additions show", async () => {
    const site = newSite("regen-one", { MAX_URLS_PER_SHARD: "100" });
    await write(site, demoSection(site.origin, "products", 500), PAST);
    const o = observedDeps(site);

    const first = await regenerateSite(o.deps, site.origin, { trigger: "test" });
    expect(first.mode).toBe("pass");
    expect(first.shardsRendered).toBe(5);
    expect(first.indexRendered).toBe(true);
    expect(first.converged).toBe(true);
    // One pass: every row read once (plus the change feed's head).
    expect(o.rows()).toBeLessThanOrEqual(510);
    const before = await manifestOf(site);
    expect(listed(before).map(shardName)).toEqual(["products-1", "products-2", "products-3", "products-4", "products-5"]);
    const etagsBefore = await Promise.all(listed(before).map(async (s) => (await fetchPath(site, `/sitemap-${shardName(s)}.xml`)).etag));

    // Nothing changed: no shard read, nothing published.
    o.reset();
    const idle = await regenerateSite(o.deps, site.origin, { trigger: "test" });
    expect(idle).toMatchObject({ shardsChecked: 0, shardsRendered: 0, indexRendered: false, published: false, changesRead: 0 });
    expect(o.rows()).toBeLessThanOrEqual(5);

    // Change one record of shard 3 (records 200–299).
    const changed = demoSection(site.origin, "products", 1, 250).map((r) => ({ ...r, lastmod: "2026-02-02" }));
    await write(site, changed);
    o.reset();
    const third = await regenerateSite(o.deps, site.origin, { trigger: "test" });
    expect(third.changed).toEqual(["products-3"]);
    expect(third.shardsChecked).toBe(1);
    expect(third.shardsRendered).toBe(1);
    expect(third.indexRendered).toBe(true);
    expect(third.changesRead).toBe(1);
    // Shard 3's 100 rows and the one changed row: not the site.
    expect(o.rows()).toBeGreaterThanOrEqual(100);
    expect(o.rows()).toBeLessThanOrEqual(110);
    const after = await manifestOf(site);
    for (const [i, shard] of listed(after).entries()) {
      const res = await fetchPath(site, `/sitemap-${shardName(shard)}.xml`);
      // Unchanged shards were fetched before: this location's edge cache has them.
      expect(res.source).toBe(shard.n === 3 ? "snapshot" : "cache");
      if (shard.n === 3) {
        expect(res.etag).not.toBe(etagsBefore[i]);
        expect(res.body).toContain(`<lastmod>2026-02-02</lastmod>`);
      } else {
        expect(res.etag).toBe(etagsBefore[i]);
      }
    }

    // The same changes are not read again by the next run (the settle window remembers them).
    o.reset();
    const again = await regenerateSite(o.deps, site.origin, { trigger: "test" });
    expect(again).toMatchObject({ shardsChecked: 0, published: false });

    // A deletion in shard 2 and 30 new records (appended to shard 5, split into a new shard 6).
    const gone = validRecords(site.env, demoSection(site.origin, "products", 1, 120))[0]!.loc;
    await site.writer.delete([gone]);
    await write(site, demoSection(site.origin, "products", 30, 500));
    const fourth = await regenerateSite(o.deps, site.origin, { trigger: "test" });
    expect(fourth.changed).toEqual(["products-2", "products-6"]);
    const shard2 = await fetchPath(site, "/sitemap-products-2.xml");
    expect(shard2.body).not.toContain(`<loc>${gone.replaceAll("&", "&amp;")}</loc>`);
    expect(locsOf(shard2.body)).toHaveLength(99);
    const shard6 = await fetchPath(site, "/sitemap-products-6.xml");
    expect(shard6.source).toBe("snapshot");
    expect(locsOf(shard6.body)).toHaveLength(30);
    const index = await fetchPath(site, "/sitemap.xml");
    expect(index.source).toBe("snapshot");
    expect(locsOf(index.body)).toHaveLength(6);
  });

  it("follows a record that moves to another section: both shards re-rendered, the URL listed once", async () => {
    const site = newSite("regen-move", { MAX_URLS_PER_SHARD: "50" });
    await write(site, [...demoSection(site.origin, "blog", 100), ...demoSection(site.origin, "pages", 100)], PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const moved = validRecords(
      site.env,
      demoSection(site.origin, "blog", 1, 10).map((r) => ({ ...r, section: "pages" })),
    );
    await site.writer.upsert(moved);
    const run = await regenerateSite(o.deps, site.origin);
    expect(run.changed.some((n) => n.startsWith("blog-"))).toBe(true);
    expect(run.changed.some((n) => n.startsWith("pages-"))).toBe(true);
    const all: string[] = [];
    for (const shard of listed(await manifestOf(site))) all.push(...locsOf((await fetchPath(site, `/sitemap-${shardName(shard)}.xml`)).body));
    expect(all.filter((loc) => loc === moved[0]!.loc)).toHaveLength(1);
    expect(new Set(all).size).toBe(200);
  });
});

describe("regeneration: the commit-ordered cursor", () => {
  it("reads after a site pass only what committed after it, rows written just before it included once", async () => {
    const site = newSite("regen-settle", { MAX_URLS_PER_SHARD: "100" });
    // Written now, in several batches: their stamps are all inside what was the settle window.
    for (let i = 0; i < 400; i += 100) await write(site, demoSection(site.origin, "pages", 100, i));
    const o = observedDeps(site);
    const pass = await regenerateSite(o.deps, site.origin);
    expect(pass.mode).toBe("pass");
    const state = await o.deps.state.load(site.origin);
    // A commit position: nothing past it was handled, so nothing is remembered to skip.
    expect(state.cursor?.seq).toBeGreaterThan(0);
    expect(state.recent).toEqual([]);
    await write(
      site,
      demoSection(site.origin, "pages", 1, 150).map((r) => ({ ...r, priority: 0.4321 })),
    );
    o.reset();
    const next = await regenerateSite(o.deps, site.origin);
    expect(next.changesRead).toBe(1); // no window read again: only the change committed after the pass
    expect(next.changed).toEqual(["pages-2"]);
    expect(next.shardsChecked).toBe(1);
    const again = await regenerateSite(o.deps, site.origin);
    expect(again).toMatchObject({ changesRead: 0, shardsChecked: 0, published: false });
  });
});

describe("snapshots", () => {
  it("hold exactly the live-rendered bytes of every shard and the index, with the same validators", async () => {
    const site = newSite("regen-bytes", { MAX_URLS_PER_SHARD: "120" });
    const now = Date.now();
    await write(
      site,
      [
        ...withDemoExtensions("pages", demoSection(site.origin, "pages", 300), now),
        ...withDemoExtensions("products", demoSection(site.origin, "products", 260), now),
        ...withDemoExtensions("blog", demoSection(site.origin, "blog", 90), now),
      ],
      PAST,
    );
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const manifest = await manifestOf(site);
    expect(listed(manifest).length).toBeGreaterThanOrEqual(6);
    // Without the SNAPSHOTS binding (and without the edge cache) everything is rendered live.
    const liveEnv = { ...site.env, SNAPSHOTS: undefined, EDGE_CACHE_TTL: "0" } as unknown as Env;
    const snapEnv = { ...site.env, EDGE_CACHE_TTL: "0" } as Env;
    for (const shard of listed(manifest)) {
      expect(shard.snapshot).toBeTruthy();
      const stored = await snapshotXml(site, shard.snapshot!);
      const live = await liveXml(site, shard);
      expect(text(stored)).toBe(text(live));
      // The gzip bytes too: the snapshot is what the live path would compress.
      const storedGz = await snapshotGzip(site, shard.snapshot!);
      const liveGz = await readAll(gzipDocument(renderShard(services(site.env), site.origin, shard)));
      expect(storedGz).toEqual(liveGz);
      for (const [suffix, headers] of [
        [".xml", {}],
        [".xml", { "Accept-Encoding": "gzip" }],
        [".xml.gz", {}],
      ] as const) {
        const path = `/sitemap-${shardName(shard)}${suffix}`;
        const a = await call(snapEnv, `${site.origin}${path}`, { headers });
        const b = await call(liveEnv, `${site.origin}${path}`, { headers });
        expect(a.headers.get("x-sitemap-source")).toBe("snapshot");
        expect(b.headers.get("x-sitemap-source")).toBe("live");
        for (const name of ["etag", "last-modified", "content-type", "content-encoding", "vary"])
          expect(a.headers.get(name), name).toBe(b.headers.get(name));
        const aBytes = new Uint8Array(await a.arrayBuffer());
        const bBytes = new Uint8Array(await b.arrayBuffer());
        expect(aBytes).toEqual(bBytes);
        if (suffix === ".xml.gz") expect(text(await gunzip(aBytes))).toBe(text(live));
      }
    }
    const a = await call(snapEnv, `${site.origin}/sitemap.xml`);
    const b = await call(liveEnv, `${site.origin}/sitemap.xml`);
    expect(a.headers.get("x-sitemap-source")).toBe("snapshot");
    expect(a.headers.get("etag")).toBe(b.headers.get("etag"));
    expect(await a.text()).toBe(await b.text());
  });

  it("serves no D1 record read from a snapshot (one manifest read at most)", async () => {
    const site = newSite("regen-noread", { MAX_URLS_PER_SHARD: "100", EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" });
    await write(site, demoSection(site.origin, "pages", 300), PAST);
    await regenerateSite(observedDeps(site).deps, site.origin);
    const prepared: string[] = [];
    const db = new Proxy(site.env.DB, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (prop === "prepare" && typeof value === "function") {
          return (sql: string) => {
            prepared.push(sql);
            return (value as (sql: string) => D1PreparedStatement).call(target, sql);
          };
        }
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const env = { ...site.env, DB: db } as Env;
    const res = await fetchPath(site, "/sitemap-pages-2.xml", {}, env);
    expect(res.source).toBe("snapshot");
    expect(locsOf(res.body)).toHaveLength(100);
    expect(prepared.filter((sql) => /\bFROM urls\b/.test(sql))).toEqual([]);
    expect(prepared.every((sql) => /FROM (manifests|shards)\b/.test(sql))).toBe(true);
  });

  it("plans exactly what a full walk plans (same boundaries, numbers and versions)", async () => {
    const site = newSite("regen-plan", { MAX_URLS_PER_SHARD: "70" });
    await write(site, [...demoSection(site.origin, "pages", 230), ...demoSection(site.origin, "blog", 150)], PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    await site.writer.delete(demoSection(site.origin, "pages", 5, 80).map((r) => r.loc as string));
    await write(site, demoSection(site.origin, "pages", 90, 230));
    await write(
      site,
      demoSection(site.origin, "blog", 3, 10).map((r) => ({ ...r, section: "pages" })),
    );
    await regenerateSite(o.deps, site.origin);
    const regenerated = await manifestOf(site);
    const walked = await buildManifest(o.deps.store.reader, site.origin, regenerated, {
      ...manifestBuildOptions(o.deps.config, site.origin),
      now: Date.now(),
    });
    const strip = (shards: typeof walked.shards) =>
      shards.map(({ section, n, firstKey, lastKey, urlCount, byteCount, version, extKinds }) => ({
        section,
        n,
        firstKey,
        lastKey,
        urlCount,
        byteCount,
        version,
        extKinds,
      }));
    expect(strip(regenerated.shards)).toEqual(strip(walked.shards));
    expect(regenerated.version).toBe(walked.version);
  });

  it("deletes superseded snapshots only after the grace time, never the ones in use", async () => {
    const site = newSite("regen-gc", { MAX_URLS_PER_SHARD: "100", SNAPSHOT_GRACE_SECONDS: "0", MANIFEST_CACHE_TTL: "0" });
    await write(site, demoSection(site.origin, "pages", 200), PAST);
    const o = observedDeps(site);
    let clock = Date.now();
    const now = () => clock;
    await regenerateSite(o.deps, site.origin, { now });
    const old = listed(await manifestOf(site))[0]!.snapshot!;
    await write(
      site,
      demoSection(site.origin, "pages", 1, 5).map((r) => ({ ...r, priority: 0.9 })),
    );
    clock += 1000;
    const publish = await regenerateSite(o.deps, site.origin, { now });
    expect(publish.changed).toEqual(["pages-1"]);
    expect(publish.snapshotsDeleted).toBe(0);
    expect(await site.env.SNAPSHOTS.get(old)).not.toBeNull(); // superseded now, still there
    clock += 1000;
    const later = await regenerateSite(o.deps, site.origin, { now });
    expect(later.snapshotsDeleted).toBe(2); // the old shard and the old index
    expect(await site.env.SNAPSHOTS.get(old)).toBeNull();
    for (const shard of listed(await manifestOf(site))) expect(await site.env.SNAPSHOTS.get(shard.snapshot!)).not.toBeNull();
  });
});

describe("work bound and interruption", () => {
  it("with a bound of 2 shards per run, 5 changed shards converge in 3 runs, every run serving a whole set", async () => {
    const site = newSite("regen-bound", { MAX_URLS_PER_SHARD: "100", REGEN_MAX_SHARDS: "2" });
    await write(site, demoSection(site.origin, "pages", 500), PAST);
    await rebuildManifest(services(site.env), site.origin);
    const o = observedDeps(site);
    // The first runs snapshot the 5 shards the walk planned (2 + 2 + 1).
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await regenerateSite(o.deps, site.origin));
    expect(runs.map((r) => r.shardsRendered)).toEqual([2, 2, 1]);
    expect(runs.map((r) => r.converged)).toEqual([false, false, true]);

    // Change a record in every shard.
    await write(
      site,
      [0, 100, 200, 300, 400].flatMap((i) => demoSection(site.origin, "pages", 1, i).map((r) => ({ ...r, priority: 0.4321 }))),
    );
    const results = [];
    for (let i = 0; i < 3; i++) {
      results.push(await regenerateSite(o.deps, site.origin));
      // Whatever run we are at, every listed shard serves, consistent with the index.
      const index = await fetchPath(site, "/sitemap.xml", {}, { ...site.env, EDGE_CACHE_TTL: "0" } as Env);
      for (const loc of locsOf(index.body)) {
        const res = await call({ ...site.env, EDGE_CACHE_TTL: "0" } as Env, loc);
        expect(res.status).toBe(200);
        expect(locsOf(await res.text())).toHaveLength(100);
      }
    }
    expect(results.map((r) => r.shardsRendered)).toEqual([2, 2, 1]);
    expect(results.map((r) => r.pendingShards)).toEqual([3, 1, 0]);
    expect(results.map((r) => r.converged)).toEqual([false, false, true]);
    expect(results.flatMap((r) => r.changed).sort()).toEqual(["pages-1", "pages-2", "pages-3", "pages-4", "pages-5"]);
    for (const shard of listed(await manifestOf(site))) {
      expect((await fetchPath(site, `/sitemap-${shardName(shard)}.xml`)).body.match(/<priority>0\.4321<\/priority>/g)).toHaveLength(1);
    }
  });

  it("a bulk append larger than the bound is cut at shard boundaries and finished by later runs", async () => {
    const site = newSite("regen-append", { MAX_URLS_PER_SHARD: "50", REGEN_MAX_SHARDS: "2" });
    await write(site, demoSection(site.origin, "pages", 100), PAST);
    const o = observedDeps(site);
    expect((await regenerateSite(o.deps, site.origin)).converged).toBe(true);
    await write(site, demoSection(site.origin, "pages", 260, 100));
    const runs = [];
    for (let i = 0; i < 10; i++) {
      const run = await regenerateSite(o.deps, site.origin);
      runs.push(run);
      expect(run.shardsChecked).toBeLessThanOrEqual(2);
      // Every run publishes a whole set: each listed shard full or the last one, all served.
      const index = await fetchPath(site, "/sitemap.xml", {}, { ...site.env, EDGE_CACHE_TTL: "0" } as Env);
      for (const loc of locsOf(index.body)) expect((await call({ ...site.env, EDGE_CACHE_TTL: "0" } as Env, loc)).status).toBe(200);
      if (run.converged) break;
    }
    expect(runs.at(-1)!.converged).toBe(true);
    const manifest = await manifestOf(site);
    expect(listed(manifest).map((s) => s.urlCount)).toEqual([50, 50, 50, 50, 50, 50, 50, 10]);
    const walked = await buildManifest(o.deps.store.reader, site.origin, null, { ...manifestBuildOptions(o.deps.config, site.origin), now: Date.now() });
    expect(listed(manifest).map((s) => [s.firstKey, s.version])).toEqual(walked.shards.filter((s) => s.urlCount > 0).map((s) => [s.firstKey, s.version]));
    for (const shard of listed(manifest)) expect(text(await snapshotXml(site, shard.snapshot!))).toBe(text(await liveXml(site, shard)));
  });

  it("a site pass bounded by rows resumes where it stopped, across sections, and converges", async () => {
    const site = newSite("regen-pass", { MAX_URLS_PER_SHARD: "40", REGEN_MAX_ROWS: "100" });
    await write(site, [...demoSection(site.origin, "blog", 90), ...demoSection(site.origin, "pages", 130)], PAST);
    const o = observedDeps(site);
    const runs = [];
    for (let i = 0; i < 10; i++) {
      const run = await regenerateSite(o.deps, site.origin);
      runs.push(run);
      if (run.converged) break;
    }
    expect(runs.length).toBeGreaterThan(1);
    expect(runs.at(-1)!.converged).toBe(true);
    // Every row read once overall (the stop row is read again by the run that resumes).
    const manifest = await manifestOf(site);
    expect(listed(manifest).map(shardName)).toEqual(["blog-1", "blog-2", "blog-3", "pages-1", "pages-2", "pages-3", "pages-4"]);
    const walked = await buildManifest(o.deps.store.reader, site.origin, null, { ...manifestBuildOptions(o.deps.config, site.origin), now: Date.now() });
    expect(manifest.shards.filter((s) => s.urlCount > 0).map((s) => [s.section, s.firstKey, s.version])).toEqual(
      walked.shards.filter((s) => s.urlCount > 0).map((s) => [s.section, s.firstKey, s.version]),
    );
    for (const shard of listed(manifest)) expect(text(await snapshotXml(site, shard.snapshot!))).toBe(text(await liveXml(site, shard)));
  });

  it("a run killed after storing its pieces leaves the old version served intact; the next run completes", async () => {
    const site = newSite("regen-kill", { MAX_URLS_PER_SHARD: "100", EDGE_CACHE_TTL: "0" });
    await write(site, demoSection(site.origin, "products", 400), PAST);
    const healthy = observedDeps(site);
    await regenerateSite(healthy.deps, site.origin);
    const before = await manifestOf(site);
    const bodiesBefore = new Map<string, { etag: string | null; body: string }>();
    for (const shard of listed(before)) bodiesBefore.set(shardName(shard), await fetchPath(site, `/sitemap-${shardName(shard)}.xml`));
    const indexBefore = await fetchPath(site, "/sitemap.xml");

    await write(
      site,
      [0, 100, 200, 300].flatMap((i) => demoSection(site.origin, "products", 1, i).map((r) => ({ ...r, priority: 0.4321 }))),
    );
    // Killed after every snapshot was stored, just before the switch.
    const dying = observedDeps(site, {
      manifests: {
        ...bind(healthy.deps.manifests),
        save: async () => {
          throw new Error("killed");
        },
      },
    });
    await expect(regenerateSite(dying.deps, site.origin)).rejects.toThrow("killed");
    expect((await manifestOf(site)).version).toBe(before.version);
    for (const shard of listed(before)) {
      const res = await fetchPath(site, `/sitemap-${shardName(shard)}.xml`);
      expect(res.source).toBe("snapshot");
      expect(res).toMatchObject(bodiesBefore.get(shardName(shard))!);
    }
    expect((await fetchPath(site, "/sitemap.xml")).body).toBe(indexBefore.body);

    // Killed after the switch but before its progress was saved: the next run redoes nothing new.
    const forgetful = observedDeps(site, {
      state: {
        ...bind(healthy.deps.state),
        save: async () => {
          throw new Error("killed after switch");
        },
      },
    });
    await expect(regenerateSite(forgetful.deps, site.origin)).rejects.toThrow("killed after switch");
    const switched = await manifestOf(site);
    expect(switched.version).not.toBe(before.version);

    const next = await regenerateSite(healthy.deps, site.origin);
    expect(next.converged).toBe(true);
    expect(next.shardsRendered).toBe(0); // the versions were stored already
    const after = await manifestOf(site);
    expect(after.version).toBe(switched.version);
    for (const shard of listed(after)) {
      const res = await fetchPath(site, `/sitemap-${shardName(shard)}.xml`);
      expect(res.etag).not.toBe(bodiesBefore.get(shardName(shard))!.etag);
      expect(res.body.match(/<priority>0\.4321<\/priority>/g)).toHaveLength(1);
    }
  });

  it("one run per site at a time: a second run while the lease is held is refused", async () => {
    const site = newSite("regen-lease");
    await write(site, demoSection(site.origin, "pages", 10), PAST);
    const o = observedDeps(site);
    const lease = await o.deps.state.acquire(site.origin, Date.now(), 60_000);
    expect(lease).not.toBeNull();
    await expect(regenerateSite(o.deps, site.origin)).rejects.toThrow(/already running/);
    await o.deps.state.release(site.origin, lease!);
    expect((await regenerateSite(o.deps, site.origin)).converged).toBe(true);
  });
});

describe("stores without a range scan", () => {
  it("regenerate by walking the key rows, and store the same bytes", async () => {
    const site = newSite("regen-walk", { MAX_URLS_PER_SHARD: "100" });
    await write(site, demoSection(site.origin, "pages", 250), PAST);
    const d1 = observedDeps(site).deps.store;
    const minimal: RecordStore = { ...d1, news: null, recent: null, scan: null };
    const o = observedDeps(site, { store: minimal });
    const first = await regenerateSite(o.deps, site.origin);
    expect(first).toMatchObject({ mode: "walk", shardsRendered: 3, converged: true });
    await write(
      site,
      demoSection(site.origin, "pages", 1, 150).map((r) => ({ ...r, lastmod: "2026-03-03" })),
    );
    const second = await regenerateSite(o.deps, site.origin);
    expect(second.changed).toEqual(["pages-2"]);
    expect(second.shardsRendered).toBe(1);
    for (const shard of listed(await manifestOf(site))) expect(text(await snapshotXml(site, shard.snapshot!))).toBe(text(await liveXml(site, shard)));
  });
});

describe("cron and admin endpoints", () => {
  it("the scheduled handler regenerates every site; status shows runs and the manifest, only with the token", async () => {
    const site = newSite("regen-cron", { MAX_URLS_PER_SHARD: "100" });
    await write(site, demoSection(site.origin, "pages", 150), PAST);
    await runCron(site.env);
    const manifest = await manifestOf(site);
    expect(listed(manifest).every((s) => s.snapshot)).toBe(true);
    expect((await fetchPath(site, "/sitemap-pages-2.xml")).source).toBe("snapshot");

    const url = `${site.origin}/sitemap-admin/status`;
    expect((await call(site.env, url)).status).toBe(401);
    expect((await call({ ...site.env, ADMIN_TOKEN: "" } as Env, url)).status).toBe(404);
    const res = await call(site.env, url, { headers: { Authorization: "Bearer test-admin-token-0123456789abcdef" } });
    expect(res.status).toBe(200);
    const status = (await res.json()) as {
      manifest: { shards: number; urls: number; snapshots: number; version: string };
      regeneration: { pendingShards: number };
      runs: { trigger: string; shardsRendered: number; ok: boolean; rowsRead: number; durationMs: number }[];
    };
    expect(status.manifest).toMatchObject({ shards: 2, urls: 150, snapshots: 2, version: manifest.version });
    expect(status.regeneration.pendingShards).toBe(0);
    expect(status.runs[0]).toMatchObject({ trigger: "cron", ok: true, shardsRendered: 2 });
    expect(status.runs[0]!.rowsRead).toBeGreaterThanOrEqual(150);

    await write(
      site,
      demoSection(site.origin, "pages", 1, 3).map((r) => ({ ...r, lastmod: "2026-04-04" })),
    );
    // POST /regenerate queues the job (202) and returns; the job's run shows in status.
    const jobs = withJobs(site.env);
    const post = await call(jobs.env, `${site.origin}/sitemap-admin/regenerate`, {
      method: "POST",
      headers: { Authorization: "Bearer test-admin-token-0123456789abcdef" },
    });
    expect(post.status).toBe(202);
    expect(await post.json()).toMatchObject({ queued: true, site: site.origin, full: false });
    expect(jobs.queue.sent.map((m) => m.body)).toEqual([
      { kind: "regenerate", origin: site.origin, trigger: "admin", step: 0, chain: expect.any(String) },
    ]);
    await drain(jobs.env, jobs.queue);
    const after = await call(site.env, url, { headers: { Authorization: "Bearer test-admin-token-0123456789abcdef" } });
    const runs = ((await after.json()) as { runs: unknown[] }).runs;
    expect(runs[0]).toMatchObject({ trigger: "admin", changed: ["pages-1"], shardsRendered: 1, converged: true });
  });
});

function bind<T extends object>(object: T): T {
  const out: Record<string, unknown> = {};
  for (let proto: object | null = object; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = (object as Record<string, unknown>)[name];
      if (typeof value === "function" && name !== "constructor" && !(name in out)) out[name] = value.bind(object);
    }
  }
  return out as T;
}
