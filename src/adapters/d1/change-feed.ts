/**
 * The D1 change feed: rows of a site changed after a cursor in (updated_at, id) order (index
 * urls_site_changed), tombstones included, and the section moves the writer notes in `url_moves`
 * (migrations/0002_regeneration.sql) as `moved` rows of the section left.
 */
import type { Change, ChangeCursor, ChangeFeed, ChangePage, ChangeStamp } from "../../store/port.ts";
import type { D1Observer } from "./rows.ts";

interface ChangeRowRaw {
  section: string;
  id: number;
  loc: string;
  updated_at: number;
  deleted: number;
  size: number;
  ext_kinds: number;
}

interface MoveRowRaw {
  seq: number;
  section: string;
  id: number;
  loc: string;
  updated_at: number;
}

const COLUMNS = "section, id, loc, updated_at, deleted, size, ext_kinds";

export class D1ChangeFeed implements ChangeFeed {
  readonly indexed = true;
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;

  constructor(db: D1Database, observe?: D1Observer) {
    this.#db = db;
    this.#observe = observe;
  }

  async changes(origin: string, after: ChangeCursor | null, limit: number, until = Number.MAX_SAFE_INTEGER): Promise<ChangePage> {
    if (after === null) {
      const [stamp, moves] = await this.#db.batch<{ head: number | null }>([
        this.#db.prepare("SELECT MAX(updated_at) AS head FROM urls WHERE origin = ?1").bind(origin),
        this.#db.prepare("SELECT MAX(seq) AS head FROM url_moves WHERE origin = ?1").bind(origin),
      ]);
      this.#observe?.(stamp!.meta);
      this.#observe?.(moves!.meta);
      const cursor = { stamp: stamp!.results[0]?.head ?? 0, key: Number.MAX_SAFE_INTEGER, moveSeq: moves!.results[0]?.head ?? 0 };
      return { rows: [], cursor, done: true };
    }
    // (updated_at, id) > (stamp, key) as two index ranges, so rows read = rows returned: the rest
    // of the cursor's stamp by id, then later stamps (a row-value comparison would re-read ties).
    // Both reads and the moves go in one batch; a move's loc is the record's (one primary-key read).
    const [sameStamp, moved] = await this.#db.batch<unknown>([
      this.#db
        .prepare(`SELECT ${COLUMNS} FROM urls WHERE origin = ?1 AND updated_at = ?2 AND updated_at <= ?5 AND id > ?3 ORDER BY id LIMIT ?4`)
        .bind(origin, after.stamp, Math.min(after.key, Number.MAX_SAFE_INTEGER), limit, until),
      this.#db
        .prepare(
          `SELECT m.seq, m.section, m.id, u.loc, m.updated_at FROM url_moves AS m JOIN urls AS u ON u.id = m.id
           WHERE m.origin = ?1 AND m.seq > ?2 ORDER BY m.seq LIMIT ?3`,
        )
        .bind(origin, after.moveSeq, limit),
    ]);
    this.#observe?.(sameStamp!.meta);
    this.#observe?.(moved!.meta);
    const urlRows = [...(sameStamp!.results as ChangeRowRaw[])];
    if (urlRows.length < limit) {
      const later = await this.#db
        .prepare(`SELECT ${COLUMNS} FROM urls WHERE origin = ?1 AND updated_at > ?2 AND updated_at <= ?4 ORDER BY updated_at, id LIMIT ?3`)
        .bind(origin, after.stamp, limit - urlRows.length, until)
        .all<ChangeRowRaw>();
      this.#observe?.(later.meta);
      urlRows.push(...later.results);
    }
    const moveRows = moved!.results as MoveRowRaw[];
    const rows: Change[] = moveRows.map((m) => ({
      section: m.section,
      key: m.id,
      loc: m.loc,
      updatedAt: m.updated_at,
      deleted: true,
      size: 0,
      extKinds: 0,
      moved: true,
    }));
    for (const r of urlRows) {
      rows.push({
        section: r.section,
        key: r.id,
        loc: r.loc,
        updatedAt: r.updated_at,
        deleted: r.deleted === 1,
        size: r.size,
        extKinds: r.ext_kinds,
        moved: false,
      });
    }
    const lastUrl = urlRows[urlRows.length - 1];
    const lastMove = moveRows[moveRows.length - 1];
    return {
      rows,
      cursor: {
        stamp: lastUrl ? lastUrl.updated_at : after.stamp,
        key: lastUrl ? lastUrl.id : after.key,
        moveSeq: lastMove ? lastMove.seq : after.moveSeq,
      },
      done: urlRows.length < limit && moveRows.length < limit,
    };
  }

  async newest(origin: string, until: number): Promise<ChangeStamp | null> {
    const row = await this.#db
      .prepare("SELECT updated_at, id FROM urls WHERE origin = ?1 AND updated_at <= ?2 ORDER BY updated_at DESC, id DESC LIMIT 1")
      .bind(origin, until)
      .first<{ updated_at: number; id: number }>();
    return row ? { stamp: row.updated_at, key: row.id } : null;
  }

  /** Scans only the changes past the cursor (a range of urls_site_changed). */
  async pending(origin: string, after: ChangeStamp): Promise<number> {
    const row = await this.#db
      .prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND updated_at >= ?2 AND (updated_at > ?2 OR id > ?3)")
      .bind(origin, after.stamp, Math.min(after.key, Number.MAX_SAFE_INTEGER))
      .first<{ n: number }>();
    return row?.n ?? 0;
  }
}
