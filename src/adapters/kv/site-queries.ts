/**
 * The reads the writer object answers from its SQLite (site-db.ts), strongly consistent: the change
 * feed (an index on (stamp, key), section moves as `moved` rows, as D1's feed), the regeneration's
 * range scan, news and recent-change indexes, and a record by loc. Each reads what it returns
 * (index ranges, keyset pages), never the whole site.
 */
import type { StoredRecord } from "../../core/types.ts";
import type { Change, ChangeCursor, ChangePage, ChangeStamp, FoundRecord, NewsStats, ScanPosition } from "../../store/port.ts";
import { type BlockEntry, storedRecord } from "./layout.ts";
import type { ScanRow } from "./object-protocol.ts";
import type { RecordRow, SiteDb } from "./site-db.ts";

const COLUMNS = "key, loc, section, stamp, deleted, size, kinds, entry";
/** A scan page stops at this much entry text (the RPC answer stays a few MB) or at its row limit. */
const SCAN_PAGE_CHARS = 4 * 1024 * 1024;

const recordOf = (row: RecordRow): StoredRecord => storedRecord(JSON.parse(row.entry) as BlockEntry, row.section);

const changeOf = (row: RecordRow): Change => ({
  section: row.section,
  key: row.key,
  loc: row.loc,
  updatedAt: row.stamp,
  deleted: row.deleted === 1,
  size: row.size,
  extKinds: row.kinds,
  moved: false,
});

export function findByLoc(db: SiteDb, origin: string, loc: string): FoundRecord | null {
  const row = db.byLoc(loc);
  return row ? { ...recordOf(row), origin, deleted: row.deleted === 1 } : null;
}

/** Changes after a cursor in (stamp, key) order, section moves first (as src/adapters/d1/change-feed.ts). */
export function changesAfter(db: SiteDb, after: ChangeCursor | null, limit: number, until: number): ChangePage {
  if (after === null) {
    const head = db.sql
      .exec<{ stamp: number | null; seq: number | null }>("SELECT (SELECT MAX(stamp) FROM records) AS stamp, (SELECT MAX(seq) FROM moves) AS seq")
      .one();
    return { rows: [], cursor: { stamp: head.stamp ?? 0, key: Number.MAX_SAFE_INTEGER, moveSeq: head.seq ?? 0 }, done: true };
  }
  const moves = db.sql
    .exec<{ seq: number; section: string; key: number; loc: string; stamp: number }>(
      "SELECT m.seq, m.section, m.key, r.loc, m.stamp FROM moves AS m JOIN records AS r ON r.key = m.key WHERE m.seq > ? ORDER BY m.seq LIMIT ?",
      after.moveSeq,
      limit,
    )
    .toArray();
  // The rest of the cursor's stamp by key, then later stamps: two ranges of records_changed.
  const rows = db.sql
    .exec<RecordRow>(
      `SELECT ${COLUMNS} FROM records WHERE stamp = ? AND stamp <= ? AND key > ? ORDER BY key LIMIT ?`,
      after.stamp,
      until,
      Math.min(after.key, Number.MAX_SAFE_INTEGER),
      limit,
    )
    .toArray();
  if (rows.length < limit) {
    rows.push(
      ...db.sql.exec<RecordRow>(
        `SELECT ${COLUMNS} FROM records WHERE stamp > ? AND stamp <= ? ORDER BY stamp, key LIMIT ?`,
        after.stamp,
        until,
        limit - rows.length,
      ),
    );
  }
  const changes: Change[] = moves.map((m) => ({
    section: m.section,
    key: m.key,
    loc: m.loc,
    updatedAt: m.stamp,
    deleted: true,
    size: 0,
    extKinds: 0,
    moved: true,
  }));
  changes.push(...rows.map(changeOf));
  const lastRow = rows[rows.length - 1];
  const lastMove = moves[moves.length - 1];
  return {
    rows: changes,
    cursor: {
      stamp: lastRow ? lastRow.stamp : after.stamp,
      key: lastRow ? lastRow.key : after.key,
      moveSeq: lastMove ? lastMove.seq : after.moveSeq,
    },
    done: rows.length < limit && moves.length < limit,
  };
}

export function newestChange(db: SiteDb, until: number): ChangeStamp | null {
  const row = db.sql
    .exec<{ stamp: number; key: number }>("SELECT stamp, key FROM records WHERE stamp <= ? ORDER BY stamp DESC, key DESC LIMIT 1", until)
    .toArray()[0];
  return row ? { stamp: row.stamp, key: row.key } : null;
}

export function pendingChanges(db: SiteDb, after: ChangeStamp): number {
  return db.sql
    .exec<{ n: number }>(
      "SELECT COUNT(*) AS n FROM records WHERE stamp >= ? AND (stamp > ? OR key > ?)",
      after.stamp,
      after.stamp,
      Math.min(after.key, Number.MAX_SAFE_INTEGER),
    )
    .one().n;
}

/**
 * Records from `from` to `until` (inclusive, null: the end) in (section, key) order, tombstones
 * too; `next` continues. Two index ranges, as the change feed reads: the rest of `from`'s section
 * by key, then later sections (a row-value comparison would seek on the section alone and re-read
 * the section's rows before the key on every page).
 */
export function scanPage(db: SiteDb, from: ScanPosition, until: ScanPosition | null, limit: number): { rows: ScanRow[]; next: ScanPosition | null } {
  type Row = { section: string; key: number; stamp: number; deleted: number; size: number; kinds: number; entry: string };
  const columns = "section, key, stamp, deleted, size, kinds, entry";
  const lastKey = until === null || until.section > from.section ? Number.MAX_SAFE_INTEGER : until.section === from.section ? until.key : -1;
  const sameSection = db.sql.exec<Row>(
    `SELECT ${columns} FROM records WHERE section = ? AND key >= ? AND key <= ? ORDER BY key LIMIT ?`,
    from.section,
    from.key,
    lastKey,
    limit + 1,
  );
  const rows: ScanRow[] = [];
  let chars = 0;
  const take = (row: Row): ScanPosition | null => {
    if (rows.length === limit || chars > SCAN_PAGE_CHARS) return { section: row.section, key: row.key };
    rows.push([row.section, row.key, row.stamp, row.deleted, row.size, row.kinds, row.entry]);
    chars += row.entry.length;
    return null;
  };
  for (const row of sameSection) {
    const next = take(row);
    if (next) return { rows, next };
  }
  if (until !== null && until.section <= from.section) return { rows, next: null };
  // Later sections up to `until`'s: one index range; rows of `until`'s section past its key end the page.
  const later = until
    ? db.sql.exec<Row>(
        `SELECT ${columns} FROM records WHERE section > ? AND section <= ? ORDER BY section, key LIMIT ?`,
        from.section,
        until.section,
        limit + 1 - rows.length,
      )
    : db.sql.exec<Row>(`SELECT ${columns} FROM records WHERE section > ? ORDER BY section, key LIMIT ?`, from.section, limit + 1 - rows.length);
  for (const row of later) {
    if (until && row.section === until.section && row.key > until.key) break;
    const next = take(row);
    if (next) return { rows, next };
  }
  return { rows, next: null };
}

/** The news window's counts (and one window before it, to date the last article that left it), as D1's. */
export function newsStats(db: SiteDb, sinceMs: number, untilMs: number): NewsStats {
  const since = Math.ceil(sinceMs / 1000);
  const until = Math.floor(untilMs / 1000);
  const row = db.sql
    .exec<{ count: number; last_updated: number | null; newest: number | null; last_expired: number | null }>(
      `SELECT COUNT(CASE WHEN news_at >= ? AND deleted = 0 THEN 1 END) AS count,
              MAX(CASE WHEN news_at >= ? THEN stamp END) AS last_updated,
              MAX(CASE WHEN news_at >= ? AND deleted = 0 THEN news_at END) AS newest,
              MAX(CASE WHEN news_at < ? AND deleted = 0 THEN news_at END) AS last_expired
       FROM records WHERE news_at >= ? AND news_at <= ?`,
      since,
      since,
      since,
      since,
      since - (until - since),
      until,
    )
    .one();
  return {
    count: row.count,
    lastUpdated: row.last_updated ?? 0,
    newestPublication: (row.newest ?? 0) * 1000,
    lastExpiredPublication: (row.last_expired ?? 0) * 1000,
  };
}

/** Articles published in [sinceMs, untilMs], newest first. */
export function newsRecords(db: SiteDb, sinceMs: number, untilMs: number, offset: number, limit: number): StoredRecord[] {
  return db.sql
    .exec<RecordRow>(
      `SELECT ${COLUMNS} FROM records WHERE news_at >= ? AND news_at <= ? AND deleted = 0 ORDER BY news_at DESC, key DESC LIMIT ? OFFSET ?`,
      Math.ceil(sinceMs / 1000),
      Math.floor(untilMs / 1000),
      limit,
      offset,
    )
    .toArray()
    .map(recordOf);
}

/** The most recently changed live records, newest change first. */
export function recentRecords(db: SiteDb, limit: number): StoredRecord[] {
  return db.sql.exec<RecordRow>(`SELECT ${COLUMNS} FROM records WHERE deleted = 0 ORDER BY stamp DESC, key DESC LIMIT ?`, limit).toArray().map(recordOf);
}

/**
 * Has a record of a section's key range changed after `stamp` (ms)? One range of the change index
 * (stamp, key): rows read = the site's changes after the stamp (those since the last regeneration),
 * not the range's rows; as D1's RangeFreshness.
 */
export function rangeChangedAfter(db: SiteDb, section: string, firstKey: number, lastKey: number, stamp: number): boolean {
  return (
    db.sql
      .exec(
        "SELECT 1 FROM records INDEXED BY records_changed WHERE stamp > ? AND section = ? AND key BETWEEN ? AND ? LIMIT 1",
        stamp,
        section,
        firstKey,
        lastKey,
      )
      .toArray().length > 0
  );
}
