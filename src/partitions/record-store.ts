/**
 * One site over several record stores (its partitions, SITE_DATABASES "origin=DB_1,DB_2,…"), seen as
 * one store: a loc's reads and writes go to its home partition (home.ts), and while a move takes
 * it elsewhere its writes are forwarded to its new home too (forward.ts); shard reads go to the
 * partition their range's keys name (keys.ts); the news and the feed merge each partition's newest.
 *
 * Regeneration and notification never read through this view: each partition plans, renders and
 * announces its own records with its own change feed (src/services.ts hands them out one by one).
 */

import type { StoredRecord, UrlRow } from "../core/types.ts";
import type { ValidRecord } from "../core/validate.ts";
import type {
  ChangeFeed,
  ChangeSample,
  DeleteResult,
  FoundRecord,
  KeyRow,
  NewsIndex,
  NewsStats,
  RangeFreshness,
  RecentIndex,
  RecordReader,
  RecordStore,
  RecordWriter,
  SampledRecord,
  ShardRange,
  UpsertResult,
} from "../store/port.ts";
import { allParts } from "./all-parts.ts";
import { forwardMoving } from "./forward.ts";
import { partitionKey, siteKey } from "./keys.ts";
import { homeOf } from "./layout.ts";
import { byPartition } from "./route.ts";
import type { LayoutOf } from "./served.ts";
import { PartitionedSync } from "./sync.ts";

/** A partition's range of a site-key range. */
function localRange(range: ShardRange): { partition: number; range: ShardRange } {
  const { partition, key } = partitionKey(range.firstKey);
  return { partition, range: { ...range, firstKey: key, lastKey: range.lastKey - siteKey(partition, 0) } };
}

const withSiteKey = <R extends { key: number }>(partition: number, record: R): R => ({ ...record, key: siteKey(partition, record.key) });

class PartitionedReader implements RecordReader {
  readonly parts: readonly RecordStore[];
  readonly layoutOf: LayoutOf;

  constructor(parts: readonly RecordStore[], layoutOf: LayoutOf) {
    this.parts = parts;
    this.layoutOf = layoutOf;
  }

  async *recordPages(range: ShardRange): AsyncIterable<readonly StoredRecord[]> {
    const local = localRange(range);
    const part = this.parts[local.partition];
    if (!part) return;
    for await (const page of part.reader.recordPages(local.range)) yield page.map((r) => withSiteKey(local.partition, r));
  }

  /** Row arrays with site keys, as records carry them: a shard's deflate blocks are cut by key (its `blockStarts` are the site's). */
  get rowPages(): ((range: ShardRange) => AsyncIterable<readonly UrlRow[]>) | null {
    return this.parts.every((p) => p.reader.rowPages !== null) ? (range) => this.#rowPages(range) : null;
  }

  async *#rowPages(range: ShardRange): AsyncIterable<readonly UrlRow[]> {
    const local = localRange(range);
    const part = this.parts[local.partition];
    if (!part) return;
    const offset = siteKey(local.partition, 0);
    for await (const rows of part.reader.rowPages!(local.range)) {
      yield offset === 0 ? rows : rows.map((row): UrlRow => [row[0] + offset, row[1], row[2], row[3], row[4], row[5]]);
    }
  }

  /** Partition after partition (each in (section, key) order): the site's view never plans from it. */
  async *keyRows(origin: string, limit = Number.POSITIVE_INFINITY): AsyncIterable<KeyRow> {
    let left = limit;
    for (const [p, part] of this.parts.entries()) {
      if (left <= 0) return;
      for await (const row of part.reader.keyRows(origin, left)) {
        left--;
        yield withSiteKey(p, row);
      }
    }
  }

  async find(loc: string): Promise<FoundRecord | null> {
    const p = homeOf(loc, await this.layoutOf());
    const found = await this.parts[p]!.reader.find(loc);
    return found && withSiteKey(p, found);
  }
}

class PartitionedWriter implements RecordWriter {
  readonly parts: readonly RecordStore[];
  readonly layoutOf: LayoutOf;

  constructor(parts: readonly RecordStore[], layoutOf: LayoutOf) {
    this.parts = parts;
    this.layoutOf = layoutOf;
  }

  async upsert(records: readonly ValidRecord[], now?: number): Promise<UpsertResult> {
    const layout = await this.layoutOf();
    const groups = byPartition(records, (r) => r.loc, layout);
    const results = await allParts([...groups].map(([p, group]) => this.parts[p]!.writer.upsert(group, now)));
    await forwardMoving(
      this.parts,
      records.map((r) => r.loc),
      layout,
    );
    return {
      // Each partition's part is one transaction; the batch as a whole is atomic only when it had one part.
      atomic: results.length <= 1 && results.every((r) => r.atomic),
      writes: sum(results, (r) => r.writes),
      inserted: sum(results, (r) => r.inserted),
      updated: sum(results, (r) => r.updated),
      unchanged: sum(results, (r) => r.unchanged),
    };
  }

  async delete(locs: readonly string[], now?: number): Promise<DeleteResult> {
    const layout = await this.layoutOf();
    const groups = byPartition(locs, (loc) => loc, layout);
    const results = await allParts([...groups].map(([p, group]) => this.parts[p]!.writer.delete(group, now)));
    await forwardMoving(this.parts, locs, layout);
    return {
      atomic: results.length <= 1 && results.every((r) => r.atomic),
      writes: sum(results, (r) => r.writes),
      deleted: sum(results, (r) => r.deleted),
      alreadyDeleted: sum(results, (r) => r.alreadyDeleted),
      notFound: sum(results, (r) => r.notFound),
    };
  }
}

const sum = <T>(items: readonly T[], of: (item: T) => number): number => items.reduce((total, item) => total + of(item), 0);

/** Newest first over every partition: each gives its first `offset + limit`, the merge keeps `limit` from `offset`. */
class PartitionedNews implements NewsIndex {
  readonly parts: readonly NewsIndex[];

  constructor(parts: readonly NewsIndex[]) {
    this.parts = parts;
  }

  async stats(origin: string, sinceMs: number, untilMs: number): Promise<NewsStats> {
    const all = await Promise.all(this.parts.map((p) => p.stats(origin, sinceMs, untilMs)));
    return {
      count: sum(all, (s) => s.count),
      lastUpdated: Math.max(0, ...all.map((s) => s.lastUpdated)),
      newestPublication: Math.max(0, ...all.map((s) => s.newestPublication)),
      lastExpiredPublication: Math.max(0, ...all.map((s) => s.lastExpiredPublication)),
    };
  }

  async records(origin: string, sinceMs: number, untilMs: number, offset: number, limit: number): Promise<StoredRecord[]> {
    const all = await Promise.all(this.parts.map((p) => p.records(origin, sinceMs, untilMs, 0, offset + limit)));
    const published = (r: StoredRecord): number => Date.parse(r.ext?.news?.publication_date ?? "") || 0;
    return all
      .flat()
      .sort((a, b) => published(b) - published(a) || (a.loc < b.loc ? -1 : 1))
      .slice(offset, offset + limit);
  }
}

class PartitionedRecent implements RecentIndex {
  readonly parts: readonly RecentIndex[];

  constructor(parts: readonly RecentIndex[]) {
    this.parts = parts;
  }

  async records(origin: string, limit: number): Promise<StoredRecord[]> {
    const all = await Promise.all(this.parts.map((p) => p.records(origin, limit)));
    return all
      .flat()
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.loc < b.loc ? -1 : 1))
      .slice(0, limit);
  }
}

/**
 * The site's newest changes within the same bound as one store's: each partition reads its share
 * (locs spread by hash, so each one's newest stand for the site's), merged newest first.
 */
class PartitionedSample implements ChangeSample {
  readonly parts: readonly ChangeSample[];

  constructor(parts: readonly ChangeSample[]) {
    this.parts = parts;
  }

  async newest(origin: string, limit: number): Promise<SampledRecord[]> {
    const share = Math.floor(limit / this.parts.length);
    if (share <= 0) return [];
    const all = await Promise.all(this.parts.map((p) => p.newest(origin, share)));
    return all.flat().sort((a, b) => b.updatedAt - a.updatedAt || (a.loc < b.loc ? -1 : 1));
  }
}

class PartitionedFreshness implements RangeFreshness {
  readonly parts: readonly (RangeFreshness | null)[];

  constructor(parts: readonly (RangeFreshness | null)[]) {
    this.parts = parts;
  }

  async changedAfter(range: ShardRange, stamp: number): Promise<boolean> {
    const local = localRange(range);
    return (await this.parts[local.partition]?.changedAfter(local.range, stamp)) ?? false;
  }
}

/**
 * The site's change feed is its partitions' feeds, each read by that partition's own regeneration
 * and notification with its own cursor; the site's view answers only what status asks.
 */
class PartitionedChanges implements ChangeFeed {
  readonly indexed: boolean;

  readonly parts: readonly ChangeFeed[];

  constructor(parts: readonly ChangeFeed[]) {
    this.parts = parts;
    this.indexed = parts.every((p) => p.indexed);
  }

  changes(): never {
    throw new Error("a partitioned site's change feed is read partition by partition");
  }

  async newest(origin: string, until: number) {
    const all = (await Promise.all(this.parts.map((p) => p.newest(origin, until)))).filter((s) => s !== null);
    return all.reduce<(typeof all)[number] | null>((best, s) => (best === null || s.stamp > best.stamp ? s : best), null);
  }

  async pending(origin: string, after: { stamp: number; key: number }): Promise<number> {
    return sum(await Promise.all(this.parts.map((p) => p.pending(origin, { stamp: after.stamp, key: 0 }))), (n) => n);
  }
}

/**
 * The site's view of its partitions' stores (all of one kind, each as served.ts serves it), every
 * configured one: those past the layout's `settled` count take records only through a move.
 */
export function partitionedRecordStore(parts: readonly RecordStore[], layoutOf: LayoutOf): RecordStore {
  const news = parts.map((p) => p.news);
  const recent = parts.map((p) => p.recent);
  const samples = parts.map((p) => p.sample);
  const syncs = parts.map((p) => p.sync);
  return {
    kind: parts[0]!.kind,
    reader: new PartitionedReader(parts, layoutOf),
    writer: new PartitionedWriter(parts, layoutOf),
    changes: new PartitionedChanges(parts.map((p) => p.changes)),
    news: news.every((n) => n !== null) ? new PartitionedNews(news) : null,
    recent: recent.every((r) => r !== null) ? new PartitionedRecent(recent) : null,
    sample: samples.every((r) => r !== null) ? new PartitionedSample(samples) : null,
    scan: null,
    freshness: parts.every((p) => p.freshness !== null) ? new PartitionedFreshness(parts.map((p) => p.freshness)) : null,
    sync: syncs.every((s) => s !== null) ? new PartitionedSync(parts, layoutOf) : null,
    projection: null,
    // Each partition purges its own rows (purge.ts); the site as a whole never does.
    purge: null,
    copy: null,
  };
}
