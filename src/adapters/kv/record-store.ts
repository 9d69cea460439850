/**
 * The KV record store (URL_SOURCE=kv). Writes, and every read that must be exact (the change feed,
 * the regeneration's scan, news and recent-change indexes, a record by loc, whether a shard's rows
 * moved past its version), go to each site's
 * writer object (writer-object.ts, the Durable Object bound as KV_WRITERS), whose SQLite is the
 * source of truth; the request path reads the blocks it projects to KV (reader.ts).
 */
import type { RecordStore } from "../../store/port.ts";
import { KvObjectChangeFeed } from "./object-feed.ts";
import { KvObjectFreshness } from "./object-freshness.ts";
import { KvObjectNewsIndex, KvObjectRecentIndex } from "./object-indexes.ts";
import type { SiteWriters } from "./object-protocol.ts";
import { writerOf } from "./object-protocol.ts";
import { KvObjectChangeSample } from "./object-sample.ts";
import { KvObjectScan } from "./object-scan.ts";
import { type KvReadOptions, KvRecordReader } from "./reader.ts";
import { KvWriterClient } from "./writer-client.ts";

export function kvRecordStore(kv: KVNamespace, writers: SiteWriters, options: KvReadOptions = {}): RecordStore {
  return {
    kind: "kv",
    reader: new KvRecordReader(kv, writers, options),
    writer: new KvWriterClient(writers),
    changes: new KvObjectChangeFeed(writers),
    news: new KvObjectNewsIndex(writers),
    recent: new KvObjectRecentIndex(writers),
    sample: new KvObjectChangeSample(writers),
    scan: new KvObjectScan(writers),
    freshness: new KvObjectFreshness(writers),
    sync: null,
    projection: { status: (origin) => writerOf(writers, origin).status(origin) },
    purge: null,
    copy: null,
  };
}
