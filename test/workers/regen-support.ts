/** Helpers for the regeneration tests: a site, observed D1 reads, snapshot bytes, HTTP fetches. */
import { env as baseEnv } from "cloudflare:workers";
import { d1RecordStore } from "../../src/adapters/d1/record-store.ts";
import { D1RegenStore } from "../../src/adapters/d1/regen-store.ts";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { KvSnapshotStore } from "../../src/adapters/kv/snapshot-store.ts";
import { concatBytes } from "../../src/core/bytes.ts";
import type { ShardEntry, ShardManifest } from "../../src/manifest/manifest.ts";
import type { RegenDeps } from "../../src/regen/deps.ts";
import { services } from "../../src/services.ts";
import { renderShard } from "../../src/sitemaps.ts";
import { call, freshOrigin, gunzip, validRecords } from "./support.ts";

export interface Site {
  origin: string;
  env: Env;
  writer: D1RecordWriter;
}

/** A new site (own origin) with the given vars; the regeneration's settle window is the default. */
export function newSite(label: string, vars: Record<string, string> = {}): Site {
  const origin = freshOrigin(label);
  const env = { ...baseEnv, SITES: origin, ...vars } as Env;
  return { origin, env, writer: new D1RecordWriter(env.DB) };
}

export async function write(site: Site, inputs: unknown[], now?: number): Promise<void> {
  await site.writer.upsert(validRecords(site.env, inputs), now);
}

export interface Observed {
  deps: RegenDeps;
  /** D1 rows read by the record store (scans, change feed) since the last reset. */
  rows(): number;
  queries(): number;
  reset(): void;
}

/** Regeneration deps whose record store reports every statement's rows_read. */
export function observedDeps(site: Site, overrides: Partial<RegenDeps> = {}): Observed {
  let rows = 0;
  let queries = 0;
  const s = services(site.env);
  const store = d1RecordStore(site.env.DB, {
    observe: (meta) => {
      rows += meta.rows_read ?? 0;
      queries++;
    },
  });
  const deps: RegenDeps = {
    config: s.config,
    store,
    manifests: s.manifests,
    snapshots: new KvSnapshotStore(site.env.SNAPSHOTS),
    state: new D1RegenStore(site.env.DB),
    ...overrides,
  };
  return {
    deps,
    rows: () => rows,
    queries: () => queries,
    reset: () => {
      rows = 0;
      queries = 0;
    },
  };
}

export async function manifestOf(site: Site): Promise<ShardManifest> {
  const manifest = await services(site.env).manifests.load(site.origin);
  if (!manifest) throw new Error(`no manifest for ${site.origin}`);
  return manifest;
}

export function listed(manifest: ShardManifest): ShardEntry[] {
  return manifest.shards.filter((s) => s.urlCount > 0);
}

/** Uncompressed bytes of a stored snapshot. */
export async function snapshotXml(site: Site, key: string): Promise<Uint8Array> {
  return gunzip(await snapshotGzip(site, key));
}

/** The gzip bytes a stored snapshot serves (a shard's block table, stored after them, left out). */
export async function snapshotGzip(site: Site, key: string): Promise<Uint8Array> {
  const gz = await new KvSnapshotStore(site.env.SNAPSHOTS).get(key);
  if (!gz) throw new Error(`no snapshot ${key}`);
  return readAll(gz);
}

/** Concatenates a stream's chunks. Rejects with the stream's error. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of stream) {
    chunks.push(chunk);
    total += chunk.byteLength;
  }
  return concatBytes(chunks, total);
}

/** A shard rendered live from the records (identity bytes). */
export async function liveXml(site: Site, shard: ShardEntry): Promise<Uint8Array> {
  return readAll(renderShard(services(site.env), site.origin, shard));
}

export interface Fetched {
  status: number;
  etag: string | null;
  source: string | null;
  body: string;
}

/** GET a path of the site with `vars` on top of its env (e.g. EDGE_CACHE_TTL=0 to skip the edge cache). */
export async function fetchPath(site: Site, path: string, init: RequestInit = {}, env: Env = site.env): Promise<Fetched> {
  const res = await call(env, `${site.origin}${path}`, init);
  return { status: res.status, etag: res.headers.get("etag"), source: res.headers.get("x-sitemap-source"), body: await res.text() };
}

export const shardName = (s: ShardEntry): string => `${s.section}-${s.n}`;

/** What a full pass plans for a shard (counts, version, last change, block and page starts): to compare two manifests' entries. */
export const plannedEntry = (s: ShardEntry) => ({
  n: s.n,
  firstKey: s.firstKey,
  urlCount: s.urlCount,
  byteCount: s.byteCount,
  lastChange: s.lastChange,
  version: s.version,
  blockStarts: s.blockStarts,
  pageStarts: s.pageStarts,
});
