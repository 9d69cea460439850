/**
 * Issue 53 ("blocks"), tester break53d, claim 3: a shard snapshot stored in parts (the KV store
 * given a 4 KiB part size, so a 3,000-URL shard's ~40 KB gzip takes several parts, the block table
 * after the gzip in the last one). A splice of it must give the whole render, as one in a single
 * value does; damage to any part must make the next change render the shard whole; and a part
 * lost must never be served as a broken file, nor outlive a full regeneration.
 */
import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { decodeBlocks } from "../../src/adapters/kv/snapshot-blocks.ts";
import { KvSnapshotStore } from "../../src/adapters/kv/snapshot-store.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { gzipDocument } from "../../src/documents/gzip.ts";
import type { ShardEntry } from "../../src/manifest/manifest.ts";
import type { RegenDeps } from "../../src/regen/deps.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import type { RunSummary } from "../../src/regen/summary.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import type { SnapshotMeta } from "../../src/snapshots/store.ts";
import { type Site, listed, manifestOf, newSite, observedDeps, plannedEntry, readAll, shardName, write } from "./regen-support.ts";
import { call } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);
const PART_BYTES = 4096;

/** A 3,000-URL site whose shard snapshot is stored in 4 KiB parts; returns its deps and the shard. */
async function partedSite(label: string) {
  const site = newSite(label);
  await write(site, demoSection(site.origin, "pages", 3_000), PAST);
  const o = observedDeps(site, { snapshots: new KvSnapshotStore(site.env.SNAPSHOTS, { partBytes: PART_BYTES }) });
  await regenerateSite(o.deps, site.origin);
  const [shard] = listed(await manifestOf(site));
  const meta = (await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard!.snapshot!, "arrayBuffer")).metadata!;
  expect(meta.parts).toBeGreaterThan(3);
  expect(meta.table).toBeGreaterThan(0);
  return { site, o, shard: shard!, meta, prefix: partsPrefixOf(shard!.snapshot!) };
}

const partsPrefixOf = (head: string): string => `s1/_parts/${/\+([0-9a-f]{32})$/.exec(head)![1]}/`;

async function part(site: Site, key: string): Promise<Uint8Array> {
  const value = await site.env.SNAPSHOTS.get(key, "arrayBuffer");
  if (value === null) throw new Error(`no part ${key}`);
  return new Uint8Array(value);
}

/** What a shard's snapshot holds against its whole render: whether any gunzip reads it, and whether it is those bytes. */
/** One URL of block 1 given a new lastmod, then one run, which must fail nothing. */
async function changeInBlockOne(site: Site, deps: RegenDeps): Promise<RunSummary> {
  const [one] = demoSection(site.origin, "pages", 1, 1_500);
  await write(site, [{ ...one, lastmod: "2026-09-09" }], PAST + 1_000);
  const run = await regenerateSite(deps, site.origin);
  expect(run.failed).toEqual([]);
  return run;
}

async function verdict(site: Site, shard: ShardEntry): Promise<{ readable: boolean; whole: boolean }> {
  const live = await readAll(gzipDocument(renderShard(services(site.env), site.origin, shard)));
  let stored: Uint8Array;
  try {
    const stream = await new KvSnapshotStore(site.env.SNAPSHOTS).get(shard.snapshot!);
    if (!stream) return { readable: false, whole: false };
    stored = await readAll(stream);
  } catch {
    return { readable: false, whole: false };
  }
  let readable = true;
  try {
    gunzipSync(stored);
  } catch {
    readable = false;
  }
  return { readable, whole: stored.byteLength === live.byteLength && stored.every((b, i) => b === live[i]) };
}

type PartDamage = (site: Site, prefix: string, meta: SnapshotMeta, head: string) => Promise<void>;

const damages: [string, PartDamage][] = [
  ["part 1 deleted", (site, prefix) => site.env.SNAPSHOTS.delete(`${prefix}1`)],
  [
    "a byte flipped in part 2",
    async (site, prefix) => {
      const bytes = await part(site, `${prefix}2`);
      bytes[100] = bytes[100]! ^ 0x40;
      await site.env.SNAPSHOTS.put(`${prefix}2`, bytes);
    },
  ],
  [
    "parts 0 and 1 swapped",
    async (site, prefix) => {
      const [a, b] = [await part(site, `${prefix}0`), await part(site, `${prefix}1`)];
      await site.env.SNAPSHOTS.put(`${prefix}0`, b);
      await site.env.SNAPSHOTS.put(`${prefix}1`, a);
    },
  ],
  [
    "the last part (gzip tail and table) cut by one byte",
    async (site, prefix, meta) => {
      const key = `${prefix}${meta.parts! - 1}`;
      const bytes = await part(site, key);
      await site.env.SNAPSHOTS.put(key, bytes.subarray(0, bytes.byteLength - 1));
    },
  ],
  [
    "the head's part count one short",
    async (site, _prefix, meta, head) => {
      await site.env.SNAPSHOTS.put(head, new Uint8Array(0), { metadata: { ...meta, parts: meta.parts! - 1 } });
    },
  ],
];

describe("break53d: snapshots stored in parts", () => {
  beforeEach(() => vi.spyOn(console, "log").mockImplementation(() => undefined));
  afterEach(() => vi.restoreAllMocks());

  it("control: a change in block 1 splices the parted file into the whole render, the entry what a pass plans", async () => {
    const { site, o } = await partedSite("b53d-parts");
    const run = await changeInBlockOne(site, o.deps);
    expect(run.shardsSpliced).toBe(1);
    const [after] = listed(await manifestOf(site));
    expect((await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(after!.snapshot!)).metadata!.parts).toBeGreaterThan(3);
    expect(await verdict(site, after!)).toEqual({ readable: true, whole: true });
    const full = await regenerateSite(o.deps, site.origin, { full: true });
    expect(full.shardsRendered).toBe(0);
    expect(listed(await manifestOf(site)).map(plannedEntry)).toEqual([plannedEntry(after!)]);
  });

  for (const [name, damage] of damages) {
    it(`${name}, then a change: the shard is stored whole again`, async () => {
      const { site, o, shard, meta, prefix } = await partedSite("b53d-parts-dmg");
      await damage(site, prefix, meta, shard.snapshot!);
      await changeInBlockOne(site, o.deps);
      const [after] = listed(await manifestOf(site));
      expect(after!.version).not.toBe(shard.version);
      expect(await verdict(site, after!)).toEqual({ readable: true, whole: true });
    });
  }

  // Breaks claim 3: a lost part is served as a 200 whose body fails, and a full regeneration keeps the snapshot.
  it("a part lost and no change: not served broken over HTTP, and a full regeneration stores the shard again", async () => {
    const { site, o, shard, meta, prefix } = await partedSite("b53d-parts-lost");
    await site.env.SNAPSHOTS.delete(`${prefix}${meta.parts! - 1}`);
    const env = { ...site.env, EDGE_CACHE_TTL: "0" } as Env;
    const liveEnv = { ...site.env, SNAPSHOTS: undefined, EDGE_CACHE_TTL: "0" } as unknown as Env;
    const path = `${site.origin}/sitemap-${shardName(shard)}.xml.gz`;
    const live = new Uint8Array(await (await call(liveEnv, path)).arrayBuffer());
    // What a crawler gets: the answer's status and whether its whole body arrived as the shard's bytes.
    const served = await call(env, path);
    let body: string;
    try {
      const bytes = new Uint8Array(await served.arrayBuffer());
      body = bytes.byteLength === live.byteLength && bytes.every((b, i) => b === live[i]) ? "the shard" : `other bytes (${bytes.byteLength})`;
    } catch (err) {
      body = `body failed: ${String(err).slice(0, 80)}`;
    }
    const full = await regenerateSite(o.deps, site.origin, { full: true });
    const [after] = listed(await manifestOf(site));
    expect({ status: served.status, body, failed: full.failed, afterFull: await verdict(site, after!) }).toEqual({
      status: 200,
      body: "the shard",
      failed: [],
      afterFull: { readable: true, whole: true },
    });
  });

  it("the block table in a part of its own (the gzip's tail too long to share one), then a change: spliced into the whole render", async () => {
    const site = newSite("b53d-parts-table");
    await write(site, demoSection(site.origin, "pages", 3_000), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const manifest = await manifestOf(site);
    const shard = listed(manifest)[0]!;
    const head = await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard.snapshot!, "arrayBuffer");
    const meta = head.metadata!;
    const value = new Uint8Array(head.value!);
    const gzip = value.slice(0, meta.gzBytes);
    const table = decodeBlocks(new TextDecoder().decode(value.subarray(meta.gzBytes)))!;
    // A part size whose last part cannot take the gzip's tail and the table together.
    let size = 2_000;
    while (!(meta.gzBytes % size > 0 && (meta.gzBytes % size) + meta.table! > size)) size++;
    const store = new KvSnapshotStore(site.env.SNAPSHOTS, { partBytes: size });
    const staged = await store.stage(new Blob([gzip]).stream(), async () => undefined);
    const document = { kind: "shard", origin: site.origin, section: shard.section, n: shard.n, version: shard.version } as const;
    const handle = await store.commit(document, staged, { ...meta, table: undefined }, async () => undefined, table);
    const parts = (await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(handle)).metadata!.parts!;
    expect(await part(site, `${partsPrefixOf(handle)}${parts - 1}`)).toEqual(value.subarray(meta.gzBytes));
    await services(site.env).manifests.save({ ...manifest, shards: manifest.shards.map((s) => (s === shard ? { ...s, snapshot: handle } : s)) });

    const run = await changeInBlockOne(site, o.deps);
    expect(run.shardsSpliced).toBe(1);
    const [after] = listed(await manifestOf(site));
    expect(await verdict(site, after!)).toEqual({ readable: true, whole: true });
  });
});
