/**
 * KvManifestStore: the manifest as one JSON value in the URLS namespace (`m#{origin}`), for
 * deployments without D1 (URL_SOURCE=kv with MANIFEST_STORE=kv).
 *
 * One key holds the whole manifest, and a KV write of one key is atomic, so a reader sees the old
 * manifest or the new one, never a mix. What KV does not give is global agreement: for up to
 * ~60 s after a save, other locations may still read the previous manifest. That is safe here
 * because shard boundaries never move (an older manifest's ranges are still valid ranges of the
 * same shards) and because the records themselves, in KV, are just as eventually consistent: a
 * D1 pointer would be strongly consistent about a version whose record reads are not. The cost is
 * an index whose shard list and lastmods lag by up to a minute in some locations. Keep D1
 * (MANIFEST_STORE=d1, the default) when several writers may rebuild in quick succession from
 * different locations: a rebuild plans from the previous manifest, and a stale one could plan
 * different splits.
 */
import type { ManifestStore, ShardEntry, ShardManifest } from "../../manifest/manifest.ts";
import { manifestName } from "./layout.ts";

/** Format tag of the stored JSON, so a future change of shape is detected, not misread. */
const FORMAT = 1;

interface StoredManifest extends ShardManifest {
  format: number;
}

function isShard(value: unknown): value is ShardEntry {
  if (typeof value !== "object" || value === null) return false;
  const s = value as Record<string, unknown>;
  return (
    typeof s["section"] === "string" &&
    ["n", "firstKey", "lastKey", "urlCount", "byteCount", "lastChange"].every((k) => typeof s[k] === "number") &&
    typeof s["version"] === "string"
  );
}

export class KvManifestStore implements ManifestStore {
  readonly #kv: KVNamespace;

  constructor(kv: KVNamespace) {
    this.#kv = kv;
  }

  /** One KV read. A value in an unknown format counts as no manifest (it is rebuilt). */
  async load(origin: string): Promise<ShardManifest | null> {
    const stored = await this.#kv.get<StoredManifest>(manifestName(origin), "json");
    if (!stored || stored.format !== FORMAT || stored.origin !== origin || !Array.isArray(stored.shards) || !stored.shards.every(isShard)) {
      return null;
    }
    const { format: _format, ...manifest } = stored;
    return manifest;
  }

  /** One KV write of one key: atomic for every reader. */
  async save(manifest: ShardManifest): Promise<void> {
    const stored: StoredManifest = { format: FORMAT, ...manifest };
    await this.#kv.put(manifestName(manifest.origin), JSON.stringify(stored));
  }
}
