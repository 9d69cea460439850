/**
 * One partition's store as it is served: after a move, rows the partition gave away (or holds for
 * a move not yet flipped) are left out of everything that renders, plans or announces, so that
 * each loc is served by exactly one partition, decided by the one layout row (layout.ts).
 *
 * The news, the feed, the change sample and the count of changes still to announce (status's
 * `pending`) leave them out in SQL (`servedUnder`, the partition count handed to the D1 store:
 * src/adapters/d1/served.ts, migration 0025). Shard pages, the regeneration's scan and key rows,
 * lookups and the change feed's pages are still filtered here, by the hash (exact: the hash is
 * what makes a row served; the SQL marker follows it); until a site's first move, and from the
 * purge of what a move left behind (purge.ts) until the next flip, nothing is filtered and nothing
 * is computed per row.
 */
import type { ChangeFeed, KeyRow, RangeScan, RecordReader, RecordStore, ShardRange } from "../store/port.ts";
import { type PartitionLayout, hidesRows, isServedBy } from "./layout.ts";

/** The layout of the partition's site, read for each operation (one small query in the site's first database). */
export type LayoutOf = () => Promise<PartitionLayout>;

type Served = (loc: string) => boolean;

/**
 * The partition count partition `partition`'s rows are served under, for its store's queries: the
 * layout's `settled`; null while a move fills it (its rows are copies, served from the flip on).
 */
export const servedUnder =
  (layoutOf: LayoutOf, partition: number): (() => Promise<number | null>) =>
  async () => {
    const { settled } = await layoutOf();
    return partition < settled ? settled : null;
  };

async function servedTest(layoutOf: LayoutOf, partition: number): Promise<Served | null> {
  const layout = await layoutOf();
  return hidesRows(layout) ? (loc) => isServedBy(loc, partition, layout) : null;
}

export function servedStore(store: RecordStore, partition: number, layoutOf: LayoutOf): RecordStore {
  const served = () => servedTest(layoutOf, partition);
  const scan: RangeScan | null = store.scan && {
    async *scan(origin, from, until) {
      const test = await served();
      for await (const row of store.scan!.scan(origin, from, until)) if (!test || test(row.loc)) yield row;
    },
  };
  const rowPages = store.reader.rowPages;
  const reader: RecordReader = {
    async *recordPages(range: ShardRange) {
      const test = await served();
      for await (const page of store.reader.recordPages(range)) yield test ? page.filter((r) => test(r.loc)) : page;
    },
    rowPages:
      rowPages &&
      async function* (range: ShardRange) {
        const test = await served();
        for await (const page of rowPages(range)) yield test ? page.filter((r) => test(r[1])) : page;
      },
    async *keyRows(origin: string, limit = Number.POSITIVE_INFINITY): AsyncIterable<KeyRow> {
      const test = await served();
      // Key rows carry no loc: once rows are hidden, they come from the scan, which does (a page of it past the limit at most).
      if (!test || !scan) {
        yield* store.reader.keyRows(origin, limit);
        return;
      }
      let left = limit;
      if (left <= 0) return;
      for await (const row of scan.scan(origin, { section: "", key: -1 }, null)) {
        yield { section: row.section, key: row.key, updatedAt: row.updatedAt, deleted: row.deleted, size: row.size, extKinds: row.extKinds };
        if (--left <= 0) return;
      }
    },
    async find(loc: string) {
      const test = await served();
      const found = await store.reader.find(loc);
      return found && (!test || test(loc)) ? found : null;
    },
  };
  const changes: ChangeFeed = {
    indexed: store.changes.indexed,
    async changes(origin, after, limit, until) {
      const layout = await layoutOf();
      const page = await store.changes.changes(origin, after, limit, until);
      // A database being filled by a move announces nothing: its rows are copies, served from the flip on.
      if (partition >= layout.settled) return { ...page, rows: [] };
      if (!hidesRows(layout)) return page;
      return { ...page, rows: page.rows.filter((r) => isServedBy(r.loc, partition, layout)) };
    },
    newest: (origin, until) => store.changes.newest(origin, until),
    pending: (origin, after) => store.changes.pending(origin, after),
  };
  return { ...store, reader, scan, changes };
}
