/**
 * Snapshots larger than a KV value (stored in parts) and a shard whose store keeps failing: the
 * run still publishes everything else, the shard is listed and served live, and it is retried later.
 */
import { describe, expect, it } from "vitest";
import { KvSnapshotStore } from "../../src/adapters/kv/snapshot-store.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import type { SnapshotStore } from "../../src/snapshots/store.ts";
import { fetchPath, listed, manifestOf, newSite, observedDeps, shardName, write } from "./regen-support.ts";
import { bytesOf, call, gunzip, text } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);
/** KV's value limit in these tests (the real one is 25 MiB) and the part size below it. */
const VALUE_LIMIT = 8192;
const PART_BYTES = 4096;

/** A SNAPSHOTS namespace that refuses values above VALUE_LIMIT as KV does (413), and counts puts. */
function limitedKv(kv: KVNamespace): { kv: KVNamespace; largest: () => number } {
  let largest = 0;
  const limited = Object.create(kv) as KVNamespace;
  limited.put = (async (key: string, value: unknown, options?: KVNamespacePutOptions) => {
    const size = value instanceof Uint8Array ? value.byteLength : value instanceof ArrayBuffer ? value.byteLength : String(value).length;
    if (size > VALUE_LIMIT) throw new Error(`KV PUT failed: 413 Value length of ${size} exceeds limit of ${VALUE_LIMIT}`);
    largest = Math.max(largest, size);
    return kv.put(key, value as ArrayBuffer, options);
  }) as KVNamespace["put"];
  limited.get = kv.get.bind(kv) as KVNamespace["get"];
  limited.getWithMetadata = kv.getWithMetadata.bind(kv) as KVNamespace["getWithMetadata"];
  limited.list = kv.list.bind(kv) as KVNamespace["list"];
  limited.delete = kv.delete.bind(kv);
  return { kv: limited, largest: () => largest };
}

/** High-entropy URLs (random hex paths): their gzip is barely smaller than their XML. */
function randomUrls(origin: string, section: string, count: number, length = 300): object[] {
  return Array.from({ length: count }, (_, i) => {
    const bytes = crypto.getRandomValues(new Uint8Array(length / 2));
    const token = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    return { loc: `${origin}/${section}/${i}?t=${token}`, section };
  });
}

describe("snapshots larger than a KV value", () => {
  it("are stored in parts below the limit, served as one stream with the live bytes and ETag, and collected together", async () => {
    const site = newSite("regen-parts", { EDGE_CACHE_TTL: "0", SNAPSHOT_GRACE_SECONDS: "0", MANIFEST_CACHE_TTL: "0" });
    await write(site, randomUrls(site.origin, "tokens", 120), PAST);
    const limited = limitedKv(site.env.SNAPSHOTS);
    const store = new KvSnapshotStore(limited.kv, { partBytes: PART_BYTES });
    const o = observedDeps(site, { snapshots: store });
    // Without parts, the same store fails the shard (the 413 of the issue).
    const whole = observedDeps(site, { snapshots: new KvSnapshotStore(limited.kv, { partBytes: 1 << 30 }) });
    const refused = await regenerateSite(whole.deps, site.origin);
    expect(refused.failed).toEqual([{ document: "tokens-1", error: expect.stringContaining("413") }]);

    const summary = await regenerateSite(o.deps, site.origin, { now: () => Date.now() + 3600_000 });
    expect(summary.failed).toEqual([]);
    const manifest = await manifestOf(site);
    const [shard] = listed(manifest);
    const key = shard!.snapshot!;
    // The head owns one more key: the prefix of its parts.
    const [, prefix] = store.ownedKeys(key);
    expect(prefix).toBeDefined();
    expect(summary.bytesStored).toBeGreaterThan(2 * VALUE_LIMIT);
    const parts = (await site.env.SNAPSHOTS.list({ prefix: prefix! })).keys.map((k) => k.name);
    // The gzip's parts, the shard's block table after it (in the last part when both fit it, else one more).
    const { gzBytes, table } = await storedLengths(site, key);
    const tail = gzBytes % PART_BYTES;
    expect(parts.length).toBe(Math.ceil(gzBytes / PART_BYTES) + (table > 0 && (tail === 0 || tail + table > PART_BYTES) ? 1 : 0));
    expect(limited.largest()).toBeLessThanOrEqual(PART_BYTES);

    const served = await fetchPath(site, `/sitemap-${shardName(shard!)}.xml`);
    expect(served.source).toBe("snapshot");
    const live = await fetchPath(site, `/sitemap-${shardName(shard!)}.xml`, {}, { ...site.env, SNAPSHOTS: undefined } as unknown as Env);
    expect(live.source).toBe("live");
    expect(served.body).toBe(live.body);
    expect(served.etag).toBe(live.etag);
    expect(served.body.match(/<loc>/g)).toHaveLength(120);
    // gzip as stored (the parts concatenated) is what a gzip client gets, byte for byte.
    const gz = await call(site.env, `${site.origin}/sitemap-${shardName(shard!)}.xml`, { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers.get("x-sitemap-source")).toBe("snapshot");
    expect(text(await gunzip(await bytesOf(gz)))).toBe(live.body);

    // A new version supersedes the head; the GC deletes it and its parts together.
    await write(site, randomUrls(site.origin, "tokens", 1), Date.now());
    await regenerateSite(o.deps, site.origin, { now: () => Date.now() + 7200_000 });
    await regenerateSite(o.deps, site.origin, { now: () => Date.now() + 10_800_000 });
    expect(await site.env.SNAPSHOTS.get(key)).toBeNull();
    expect((await site.env.SNAPSHOTS.list({ prefix: prefix! })).keys).toEqual([]);
    const next = listed(await manifestOf(site))[0]!;
    expect(next.snapshot).not.toBe(key);
    expect((await fetchPath(site, `/sitemap-${shardName(next)}.xml`)).source).toBe("snapshot");
  });
});

async function storedLengths(site: { env: Env }, key: string): Promise<{ gzBytes: number; table: number }> {
  const head = await site.env.SNAPSHOTS.getWithMetadata<{ gzBytes: number; table?: number }>(key);
  return { gzBytes: head.metadata!.gzBytes, table: head.metadata!.table ?? 0 };
}

describe("a shard whose store keeps failing", () => {
  it("does not block another section's change; it is listed, served live, shown in status and retried with backoff", async () => {
    const site = newSite("regen-isolate", { EDGE_CACHE_TTL: "0", ADMIN_TOKEN: "regen-isolation-token-0123456789abcdef" });
    await write(site, randomUrls(site.origin, "big", 30), PAST);
    await write(site, [{ loc: `${site.origin}/pages/a`, section: "pages" }], PAST);
    const healthy = observedDeps(site);
    await regenerateSite(healthy.deps, site.origin, { now: () => PAST + 1000 });

    // Every later store of a "big" shard fails.
    let attempts = 0;
    const failing = observedDeps(site, {
      snapshots: {
        stage: (gzip, before) => healthy.deps.snapshots.stage(gzip, before),
        commit: async (document, staged, meta, before, blocks) => {
          if (document.kind === "shard" && document.section === "big") {
            attempts++;
            throw new Error("KV PUT failed: 500 internal");
          }
          return healthy.deps.snapshots.commit(document, staged, meta, before, blocks);
        },
        withBlocks: (handle, max) => healthy.deps.snapshots.withBlocks(handle, max),
        get: (handle) => healthy.deps.snapshots.get(handle),
        ownedKeys: (handle) => healthy.deps.snapshots.ownedKeys(handle),
        holds: (handle, document) => healthy.deps.snapshots.holds(handle, document),
        intact: (handle) => healthy.deps.snapshots.intact(handle),
        delete: (key) => healthy.deps.snapshots.delete(key),
        storedBytes: (origin, keys) => healthy.deps.snapshots.storedBytes(origin, keys),
        siteHandles: (origin, limit, cursor) => healthy.deps.snapshots.siteHandles(origin, limit, cursor),
      },
    });
    const t0 = Date.now();
    await write(site, [{ loc: `${site.origin}/big/new`, section: "big" }], t0 - 600_000);
    await write(site, [{ loc: `${site.origin}/pages/b`, section: "pages" }], t0 - 600_000);
    const first = await regenerateSite(failing.deps, site.origin, { now: () => t0 });
    expect(attempts).toBe(1);
    expect(first.failed).toEqual([{ document: "big-1", error: "Error: KV PUT failed: 500 internal" }]);
    expect(first.published).toBe(true);
    expect(first.converged).toBe(false);

    const manifest = await manifestOf(site);
    const big = listed(manifest).find((s) => s.section === "big")!;
    const pages = listed(manifest).find((s) => s.section === "pages")!;
    expect(big.snapshot ?? null).toBeNull();
    expect(big.urlCount).toBe(31);
    expect(pages.snapshot).toBeTruthy();
    expect(first.changed).toEqual(["big-1", "pages-1"]);
    const index = await fetchPath(site, "/sitemap.xml");
    expect(index.source).toBe("snapshot");
    expect(index.body).toContain("/sitemap-big-1.xml");
    const pagesDoc = await fetchPath(site, "/sitemap-pages-1.xml");
    expect(pagesDoc.source).toBe("snapshot");
    expect(pagesDoc.body).toContain(`${site.origin}/pages/b`);
    const bigDoc = await fetchPath(site, "/sitemap-big-1.xml");
    expect(bigDoc.source).toBe("live");
    expect(bigDoc.body).toContain(`${site.origin}/big/new`);

    const status = await call(site.env, `${site.origin}/sitemap-admin/status`, {
      headers: { authorization: "Bearer regen-isolation-token-0123456789abcdef" },
    });
    const body = (await status.json()) as {
      manifest: { snapshotBytes: Record<string, number | null> };
      regeneration: { failed: { document: string; error: string; attempts: number; retryAt: string }[] };
    };
    expect(body.manifest.snapshotBytes).toEqual({ index: expect.any(Number), "big-1": null, "pages-1": expect.any(Number) });
    expect(body.regeneration.failed).toEqual([
      {
        document: "big-1",
        error: "Error: KV PUT failed: 500 internal",
        attempts: 1,
        failedAt: new Date(t0).toISOString(),
        retryAt: new Date(t0 + 60_000).toISOString(),
      },
    ]);

    // Before the retry time: left alone. After it: retried, and the next wait is longer.
    const early = await regenerateSite(failing.deps, site.origin, { now: () => t0 + 30_000 });
    expect(attempts).toBe(1);
    expect(early.failed).toEqual([]);
    await regenerateSite(failing.deps, site.origin, { now: () => t0 + 61_000 });
    expect(attempts).toBe(2);
    const state = await healthy.deps.state.load(site.origin);
    expect(state.failed).toMatchObject([{ document: "big-1", attempts: 2, retryAt: t0 + 61_000 + 120_000 }]);

    // Once the store works again, the retry stores it and the failure is gone.
    const healed = await regenerateSite(healthy.deps, site.origin, { now: () => t0 + 61_000 + 121_000 });
    expect(healed.failed).toEqual([]);
    expect(listed(await manifestOf(site)).find((s) => s.section === "big")!.snapshot).toBeTruthy();
    expect((await healthy.deps.state.load(site.origin)).failed).toEqual([]);
    expect((await fetchPath(site, "/sitemap-big-1.xml")).body).toBe(bigDoc.body);
  });
});

describe("a shard whose render breaks off", () => {
  it("is still planned from all its rows (same shards as a healthy run), listed and served live; the others are stored", async () => {
    // Shards large enough that the render is cut while rows of the shard are still unread.
    const site = newSite("regen-render-fails", { MAX_URLS_PER_SHARD: "2000", EDGE_CACHE_TTL: "0" });
    await write(site, demoSection(site.origin, "products", 6000), PAST);
    const healthy = observedDeps(site);
    // The second shard's render stops after its first gzip chunk (the render's stream is cancelled).
    let renders = 0;
    const breaking = observedDeps(site, {
      snapshots: {
        ...bindStore(healthy.deps.snapshots),
        stage: async (gzip, before) => {
          if (++renders !== 2) return healthy.deps.snapshots.stage(gzip, before);
          const reader = gzip.getReader();
          await reader.read();
          await reader.cancel();
          throw new Error("render broke off");
        },
      },
    });
    const run = await regenerateSite(breaking.deps, site.origin);
    expect(run.failed).toEqual([{ document: "products-2", error: "Error: render broke off" }]);
    const broken = await manifestOf(site);
    expect(listed(broken).map((s) => [shardName(s), s.urlCount, !!s.snapshot])).toEqual([
      ["products-1", 2000, true],
      ["products-2", 2000, false],
      ["products-3", 2000, true],
    ]);
    const live = await fetchPath(site, "/sitemap-products-2.xml");
    expect(live.source).toBe("live");
    expect(live.body.match(/<loc>/g)).toHaveLength(2000);

    // A healthy site pass plans exactly the same versions, and stores the missing snapshot.
    await regenerateSite(healthy.deps, site.origin, { full: true });
    const fixed = await manifestOf(site);
    expect(listed(fixed).map((s) => [shardName(s), s.version])).toEqual(listed(broken).map((s) => [shardName(s), s.version]));
    expect(listed(fixed).every((s) => s.snapshot)).toBe(true);
    const stored = await fetchPath(site, "/sitemap-products-2.xml");
    expect(stored).toMatchObject({ source: "snapshot", body: live.body, etag: live.etag });
  });
});

function bindStore(store: SnapshotStore): SnapshotStore {
  return {
    stage: (gzip, before) => store.stage(gzip, before),
    commit: (document, staged, meta, before, blocks) => store.commit(document, staged, meta, before, blocks),
    withBlocks: (handle, max) => store.withBlocks(handle, max),
    get: (handle) => store.get(handle),
    ownedKeys: (handle) => store.ownedKeys(handle),
    holds: (handle, document) => store.holds(handle, document),
    intact: (handle) => store.intact(handle),
    delete: (key) => store.delete(key),
    storedBytes: (origin, keys) => store.storedBytes(origin, keys),
    siteHandles: (origin, limit, cursor) => store.siteHandles(origin, limit, cursor),
  };
}

describe("lastmod sanity", () => {
  it("a lastmod more than 24 hours ahead of the server's clock is a 422 naming field and rule", async () => {
    const site = newSite("lastmod-future", { ADMIN_TOKEN: "regen-isolation-token-0123456789abcdef" });
    const ahead = new Date(Date.now() + 5 * 365 * 86400_000).toISOString().slice(0, 10);
    const soon = new Date(Date.now() + 3600_000).toISOString();
    const send = (records: object[]) =>
      call(site.env, `${site.origin}/sitemap-admin/urls`, {
        method: "PUT",
        headers: { authorization: "Bearer regen-isolation-token-0123456789abcdef", "content-type": "application/json" },
        body: JSON.stringify(records),
      });
    const rejected = await send([
      { loc: `${site.origin}/a`, lastmod: soon },
      { loc: `${site.origin}/b`, lastmod: ahead },
    ]);
    expect(rejected.status).toBe(422);
    const body = (await rejected.json()) as { issues: unknown[] };
    expect(body.issues).toEqual([
      { index: 1, line: 1, loc: `${site.origin}/b`, field: "lastmod", rule: "future-date", message: expect.stringContaining(ahead) },
    ]);
    // An hour ahead (clock skew, time zones) is accepted.
    expect((await send([{ loc: `${site.origin}/a`, lastmod: soon }])).status).toBe(200);
  });
});
