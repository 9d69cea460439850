import type { SnapshotMeta, SnapshotStore } from "../../snapshots/store.ts";

/** Snapshots in the SNAPSHOTS KV namespace (a gzip shard of 50,000 URLs is far below KV's 25 MiB). */
export class KvSnapshotStore implements SnapshotStore {
  readonly #kv: KVNamespace;

  constructor(kv: KVNamespace) {
    this.#kv = kv;
  }

  async put(key: string, gzip: Uint8Array, meta: SnapshotMeta): Promise<void> {
    await this.#kv.put(key, gzip, { metadata: meta });
  }

  async get(key: string): Promise<ReadableStream<Uint8Array> | null> {
    return (await this.#kv.get(key, { type: "stream" })) as ReadableStream<Uint8Array> | null;
  }

  async delete(key: string): Promise<void> {
    await this.#kv.delete(key);
  }
}
