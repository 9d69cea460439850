/**
 * The writer object's SQLite (one database per site, in the Durable Object KvSiteWriter): the
 * source of truth for the site's writes. KV holds only what the request path reads (blocks,
 * overflow values, the manifest), projected from here (projection.ts).
 *
 *   records   one row per loc ever stored: its stable key, section, change stamp, tombstone flag,
 *             the sizes the manifest needs, and `entry`, the full block entry as JSON (layout.ts
 *             BlockEntry: k, u, s, d?, loc, lastmod?, …, ext?). The projection builds a block from
 *             these rows alone; nothing is read back from KV.
 *   moves     a record that changed section: a row for the section it left (regeneration
 *             re-renders that shard), numbered by `seq`, as D1's url_moves.
 *   pending   blocks and overflow values whose KV copy is behind the rows: the projection's work.
 *   site      one value per name: the next key, the last change stamp, adoption progress.
 *
 * Indexes: loc (a loc keeps its key), (section, key) (blocks, scans), (stamp, key) (the change
 * feed, the Atom feed), news_at (news sitemaps; the same expression as D1's urls.news_at).
 */

import { type BlockEntry, entryKinds, entrySize } from "./layout.ts";

/** Values kept in the `site` table. */
type SiteValue =
  | "origin"
  | "next_key"
  | "last_stamp"
  | "adopted"
  // Adoption's progress (adopt.ts): the pass under way, where it stands, what it has read.
  | "adopt_pass"
  | "adopt_pass_at"
  | "adopt_resume_at"
  | "adopt_cursor"
  | "adopt_after"
  | "adopt_counts"
  // Left by the version that kept a position in a list() page: read as "restart the pass".
  | "adopt_blocks";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS records (
     key INTEGER PRIMARY KEY, loc TEXT NOT NULL, section TEXT NOT NULL, stamp INTEGER NOT NULL,
     deleted INTEGER NOT NULL, size INTEGER NOT NULL, kinds INTEGER NOT NULL, entry TEXT NOT NULL,
     news_at INTEGER GENERATED ALWAYS AS (unixepoch(json_extract(entry, '$.ext.news.publication_date'))) VIRTUAL)`,
  "CREATE UNIQUE INDEX IF NOT EXISTS records_loc ON records (loc)",
  "CREATE INDEX IF NOT EXISTS records_section ON records (section, key)",
  "CREATE INDEX IF NOT EXISTS records_changed ON records (stamp, key)",
  "CREATE INDEX IF NOT EXISTS records_news ON records (news_at, deleted, stamp) WHERE news_at IS NOT NULL",
  "CREATE TABLE IF NOT EXISTS moves (seq INTEGER PRIMARY KEY AUTOINCREMENT, section TEXT NOT NULL, key INTEGER NOT NULL, stamp INTEGER NOT NULL)",
  `CREATE TABLE IF NOT EXISTS pending (
     kind TEXT NOT NULL, section TEXT NOT NULL, n INTEGER NOT NULL, version INTEGER NOT NULL, since INTEGER NOT NULL,
     put_version INTEGER, put_at INTEGER, put_by TEXT, failures INTEGER NOT NULL DEFAULT 0, retry_at INTEGER NOT NULL DEFAULT 0,
     error TEXT, PRIMARY KEY (kind, section, n))`,
  "CREATE TABLE IF NOT EXISTS site (name TEXT PRIMARY KEY, value)",
];

/** A record row as the object reads it back. */
export type RecordRow = {
  key: number;
  loc: string;
  section: string;
  stamp: number;
  deleted: number;
  size: number;
  kinds: number;
  entry: string;
};

export class SiteDb {
  readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
    for (const statement of SCHEMA) sql.exec(statement);
  }

  get(name: SiteValue): string | number | null {
    const row = this.sql.exec<{ value: string | number | null }>("SELECT value FROM site WHERE name = ?", name).toArray()[0];
    return row?.value ?? null;
  }

  set(name: SiteValue, value: string | number | null): void {
    this.sql.exec("INSERT INTO site (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", name, value);
  }

  number(name: SiteValue, fallback: number): number {
    const value = this.get(name);
    return typeof value === "number" ? value : value === null ? fallback : Number(value);
  }

  /**
   * The stamp of a batch committing now: never earlier than the last one, so no change can land
   * behind a cursor that has already passed the site's newest change. Without an explicit `now`
   * (every write through the admin API) it is the object's clock, and strictly after the last
   * stamp; an explicit one (tests, tools replaying a history) is kept when it is not earlier.
   */
  commitStamp(now: number | undefined): number {
    const last = this.number("last_stamp", 0);
    const stamp = now === undefined ? Math.max(Date.now(), last + 1) : Math.max(now, last);
    this.set("last_stamp", stamp);
    return stamp;
  }

  /** Reserves the next stable key. */
  nextKey(): number {
    const key = this.number("next_key", 1);
    this.set("next_key", key + 1);
    return key;
  }

  /**
   * Writes the record row of `entry` in `section`, storing `stored` as its JSON (default: the entry
   * itself). On a key or loc already there, "keep" leaves the row as it is, "update" replaces it
   * (on the key). Returns the rows written.
   */
  writeRecord(entry: BlockEntry, section: string, onConflict: "keep" | "update", stored: object = entry): number {
    const conflict =
      onConflict === "keep"
        ? "ON CONFLICT DO NOTHING"
        : `ON CONFLICT (key) DO UPDATE SET section = excluded.section, stamp = excluded.stamp, deleted = excluded.deleted,
             size = excluded.size, kinds = excluded.kinds, entry = excluded.entry`;
    return this.sql.exec(
      `INSERT INTO records (key, loc, section, stamp, deleted, size, kinds, entry) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ${conflict}`,
      entry.k,
      entry.loc,
      section,
      entry.u,
      entry.d === 1 ? 1 : 0,
      entrySize(entry),
      entryKinds(entry),
      JSON.stringify(stored),
    ).rowsWritten;
  }

  byLoc(loc: string): RecordRow | undefined {
    return this.sql.exec<RecordRow>("SELECT key, loc, section, stamp, deleted, size, kinds, entry FROM records WHERE loc = ?", loc).toArray()[0];
  }

  /** Marks a block (`kind` "b", n = block) or an overflow value ("v", n = key) as behind its rows. */
  markPending(kind: "b" | "v", section: string, n: number, now: number): void {
    this.sql.exec(
      `INSERT INTO pending (kind, section, n, version, since) VALUES (?, ?, ?, 1, ?)
       ON CONFLICT (kind, section, n) DO UPDATE SET version = version + 1`,
      kind,
      section,
      n,
      now,
    );
  }
}
