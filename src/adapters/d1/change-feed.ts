/**
 * The D1 change feed: rows of a site changed after a cursor in commit order (`urls.seq`, migration
 * 0023; sequence.ts), tombstones included, and the section moves the writer notes in `url_moves`
 * (migrations/0002_regeneration.sql, numbered in commit order too) as `moved` rows of the section
 * left. A change stamped before the cursor's (a writer whose clock is behind, a sync's commit
 * stamped with its call's start) still commits with a number past it, so no cursor skips it and
 * no settle window is waited for; stamps say when, never where the feed goes on.
 */
import type { Change, ChangeCursor, ChangeFeed, ChangePage, ChangeStamp } from "../../store/port.ts";
import type { D1Observer } from "./rows.ts";
import { changesAfterStatement, sequenceHead } from "./sequence.ts";
import { EVERY_ROW, type ServedUnder, servedRow } from "./served.ts";

interface ChangeRowRaw {
  seq: number;
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

const COLUMNS = "seq, section, id, loc, updated_at, deleted, size, ext_kinds";

/**
 * A cursor saved by stamp (before migration 0024, or by a Worker still running the stamp feed
 * meanwhile) reads on from the first change stamped this long before it: its feed stayed a settle
 * window (REGEN_SETTLE_SECONDS' default) behind the newest change, and a write stamped earlier may
 * have committed after it.
 */
const STAMP_CURSOR_MARGIN_MS = 60_000;

export class D1ChangeFeed implements ChangeFeed {
  readonly indexed = true;
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;
  readonly #servedUnder: ServedUnder;

  constructor(db: D1Database, observe?: D1Observer, servedUnder: ServedUnder = EVERY_ROW) {
    this.#db = db;
    this.#observe = observe;
    this.#servedUnder = servedUnder;
  }

  /** `until` is not read: the cursor is a commit position, and what commits later is numbered past it. */
  async changes(origin: string, after: ChangeCursor | null, limit: number): Promise<ChangePage> {
    if (after === null) {
      const [stamp, moves] = await this.#db.batch<{ head: number | null }>([
        this.#db.prepare("SELECT MAX(updated_at) AS head FROM urls WHERE origin = ?1").bind(origin),
        this.#db.prepare("SELECT MAX(seq) AS head FROM url_moves WHERE origin = ?1").bind(origin),
      ]);
      this.#observe?.(stamp!.meta);
      this.#observe?.(moves!.meta);
      const seq = await sequenceHead(this.#db);
      const cursor = { stamp: stamp!.results[0]?.head ?? 0, key: Number.MAX_SAFE_INTEGER, seq, moveSeq: moves!.results[0]?.head ?? 0 };
      return { rows: [], cursor, done: true };
    }
    const from = after.seq ?? (await this.#fromStamp(origin, after.stamp));
    // The changes and the moves in one batch; a move's loc is the record's (one primary-key read).
    const [changed, moved] = await this.#db.batch<unknown>([
      changesAfterStatement(this.#db, COLUMNS).bind(origin, from, limit),
      this.#db
        .prepare(
          `SELECT m.seq, m.section, m.id, u.loc, m.updated_at FROM url_moves AS m JOIN urls AS u ON u.id = m.id
           WHERE m.origin = ?1 AND m.seq > ?2 ORDER BY m.seq LIMIT ?3`,
        )
        .bind(origin, after.moveSeq, limit),
    ]);
    this.#observe?.(changed!.meta);
    this.#observe?.(moved!.meta);
    const urlRows = changed!.results as ChangeRowRaw[];
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
        seq: lastUrl ? lastUrl.seq : from,
        moveSeq: lastMove ? lastMove.seq : after.moveSeq,
      },
      done: urlRows.length < limit && moveRows.length < limit,
    };
  }

  /**
   * The commit position a stamp cursor stands for (STAMP_CURSOR_MARGIN_MS): just before the first
   * change stamped within the margin before it, else the head. A range of urls_site_changed.
   */
  async #fromStamp(origin: string, stamp: number): Promise<number> {
    const row = await this.#db
      .prepare("SELECT MIN(seq) AS first FROM urls WHERE origin = ?1 AND updated_at >= ?2 AND seq > 0")
      .bind(origin, stamp - STAMP_CURSOR_MARGIN_MS)
      .first<{ first: number | null }>();
    return row?.first != null ? row.first - 1 : sequenceHead(this.#db);
  }

  /** The site's last committed change (`until` is not read, as in `changes`). A range of urls_site_seq. */
  async newest(origin: string): Promise<ChangeStamp | null> {
    const row = await this.#db
      .prepare("SELECT updated_at, id, seq FROM urls WHERE origin = ?1 ORDER BY seq DESC LIMIT 1")
      .bind(origin)
      .first<{ updated_at: number; id: number; seq: number }>();
    return row ? { stamp: row.updated_at, key: row.id, seq: row.seq } : null;
  }

  /**
   * Scans only the changes past the cursor (a range of urls_site_seq; of urls_site_changed for a
   * stamp cursor), counting served rows only (status: the changes a partition has still to
   * announce; a row a move gave away is announced by its new home, a database a move fills announces nothing).
   */
  async pending(origin: string, after: ChangeStamp): Promise<number> {
    const served = await this.#servedUnder();
    if (served === null) return 0;
    // A database that is no partition hides nothing: the count stays within its index.
    const hidden = (at: number) => (served === 0 ? "" : ` AND ${servedRow("urls", `?${at}`)}`);
    const count = served === 0 ? [] : [served];
    const row =
      after.seq === undefined
        ? await this.#db
            .prepare(`SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND updated_at >= ?2 AND (updated_at > ?2 OR id > ?3)${hidden(4)}`)
            .bind(origin, after.stamp, Math.min(after.key, Number.MAX_SAFE_INTEGER), ...count)
            .first<{ n: number }>()
        : await this.#db
            .prepare(`SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND seq > ?2${hidden(3)}`)
            .bind(origin, after.seq, ...count)
            .first<{ n: number }>();
    return row?.n ?? 0;
  }
}
