/** The D1 record store: every capability of the port, over the `urls` and `url_moves` tables. */
import type { RecordStore } from "../../store/port.ts";
import { D1ChangeFeed } from "./change-feed.ts";
import { D1ChangeSample } from "./change-sample.ts";
import { D1RangeFreshness } from "./freshness.ts";
import { D1NewsIndex } from "./news-index.ts";
import { D1RowPurge } from "./purge.ts";
import { D1RecordReader } from "./reader.ts";
import { D1RecentIndex } from "./recent-index.ts";
import { D1RowCopy } from "./row-copy.ts";
import type { D1Observer } from "./rows.ts";
import { D1RangeScan } from "./scan.ts";
import type { ServedUnder } from "./served.ts";
import { D1RecordSync } from "./sync.ts";
import { D1RecordWriter } from "./writer.ts";

interface D1StoreOptions {
  /** Sees every read statement's `meta` (tests, benchmarks). */
  observe?: D1Observer;
  /** Rows per page of shard reads. */
  pageRows?: number;
  /** A partition's: the count its rows are served under (served.ts); absent: every row. */
  servedUnder?: ServedUnder;
}

export function d1RecordStore(db: D1Database, options: D1StoreOptions = {}): RecordStore {
  const { observe, servedUnder } = options;
  const writer = new D1RecordWriter(db);
  const scan = new D1RangeScan(db, observe);
  const changes = new D1ChangeFeed(db, observe, servedUnder);
  return {
    kind: "d1",
    reader: new D1RecordReader(db, options),
    writer,
    changes,
    news: new D1NewsIndex(db, observe, servedUnder),
    recent: new D1RecentIndex(db, observe, servedUnder),
    sample: new D1ChangeSample(db, observe, servedUnder),
    scan,
    freshness: new D1RangeFreshness(db, observe),
    projection: null,
    sync: new D1RecordSync(db, writer),
    purge: new D1RowPurge(db, scan),
    copy: new D1RowCopy(db),
  };
}
