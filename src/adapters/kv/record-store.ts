/**
 * The KV record store (URL_SOURCE=kv): reader, writer, change feed and scan over the block layout
 * of layout.ts. No news index and no feed of recent changes (news sitemaps and the Atom feed 404).
 * Writes go through each site's single writer, the Durable Object bound as KV_WRITERS.
 */
import type { RecordStore } from "../../store/port.ts";
import { KvChangeFeed } from "./change-feed.ts";
import { type KvReadOptions, KvRecordReader } from "./reader.ts";
import { KvRangeScan } from "./scan.ts";
import { SerialisedKvWriter } from "./serialised-writer.ts";
import type { SiteWriters } from "./site-protocol.ts";

export function kvRecordStore(kv: KVNamespace, writers: SiteWriters, options: KvReadOptions = {}): RecordStore {
  return {
    kind: "kv",
    reader: new KvRecordReader(kv, options),
    writer: new SerialisedKvWriter(writers),
    changes: new KvChangeFeed(kv, options.blocksPerGet),
    news: null,
    recent: null,
    scan: new KvRangeScan(kv, options.blocksPerGet),
    freshness: null,
    sync: null,
  };
}
