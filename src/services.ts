/** Wires adapters to config, once per `env`: the only place that knows which store backs what. */
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { D1ManifestStore } from "./manifest/d1-store.ts";
import { KvManifestStore } from "./manifest/kv-store.ts";
import type { ManifestStore } from "./manifest/manifest.ts";
import { D1UrlSource } from "./sources/d1.ts";
import { D1UrlWriter } from "./sources/d1-writer.ts";
import { FaultyUrlSource } from "./sources/faulty.ts";
import { KvUrlSource } from "./sources/kv.ts";
import { KvUrlWriter } from "./sources/kv-writer.ts";
import type { UrlSource } from "./sources/source.ts";
import { InvalidatingManifestStore } from "./cache/manifest-cache.ts";
import { D1RegenStore, type RegenStore } from "./regen/store.ts";
import { KvSnapshotStore, type SnapshotStore } from "./snapshots/store.ts";

/** Writes records into the configured source (D1UrlWriter or KvUrlWriter: same methods and summaries). */
export type UrlWriter = Pick<D1UrlWriter, "upsert" | "delete" | "find">;

export interface Services {
  config: Config;
  source: UrlSource;
  manifests: ManifestStore;
  writer: UrlWriter;
  /** Pre-rendered documents (KV namespace SNAPSHOTS); null without that binding (always live). */
  snapshots: SnapshotStore | null;
  /** Regeneration state, lease and run log (D1); null without a DB binding (no regeneration). */
  regen: RegenStore | null;
}

/** A binding the configuration needs, or a ConfigError naming it. */
function binding<T>(env: Env, name: "DB" | "URLS", why: string): T {
  const value = (env as unknown as Record<string, unknown>)[name];
  if (!value) throw new ConfigError(name, `binding is missing: ${why}`);
  return value as T;
}

const cache = new WeakMap<object, Services>();

/** Throws ConfigError for a bad variable. */
export function services(env: Env): Services {
  let s = cache.get(env);
  if (!s) {
    const config = loadConfig(env);
    const kv = config.urlSource === "kv" ? binding<KVNamespace>(env, "URLS", "URL_SOURCE=kv reads records from the KV namespace bound as URLS") : null;
    const db = config.urlSource === "d1" ? binding<D1Database>(env, "DB", "URL_SOURCE=d1 reads records from the D1 database bound as DB") : null;
    let source: UrlSource = kv ? new KvUrlSource(kv) : new D1UrlSource(db!);
    if (config.faultAfterRecords !== null) source = new FaultyUrlSource(source, config.faultAfterRecords);
    const manifests: ManifestStore =
      config.manifestStore === "kv"
        ? new KvManifestStore(binding<KVNamespace>(env, "URLS", "MANIFEST_STORE=kv keeps manifests in the KV namespace bound as URLS"))
        : new D1ManifestStore(binding<D1Database>(env, "DB", "MANIFEST_STORE=d1 keeps manifests in the D1 database bound as DB"));
    const snapshotKv = (env as unknown as Record<string, unknown>)["SNAPSHOTS"] as KVNamespace | undefined;
    const regenDb = (env as unknown as Record<string, unknown>)["DB"] as D1Database | undefined;
    s = {
      config,
      source,
      // Saving a manifest also drops the location's cached copy of it (src/cache/manifest-cache.ts).
      manifests: new InvalidatingManifestStore(manifests),
      writer: kv ? new KvUrlWriter(kv) : new D1UrlWriter(db!),
      snapshots: snapshotKv ? new KvSnapshotStore(snapshotKv) : null,
      regen: regenDb ? new D1RegenStore(regenDb) : null,
    };
    cache.set(env, s);
  }
  return s;
}
