/**
 * D1RecordSync: full sync over the `syncs` and `sync_seen` tables (migrations/0005_sync.sql).
 *
 * A batch under a sync is one D1 transaction: the upsert and the `sync_seen` rows of its records
 * (so a record is seen exactly when it is stored). Nothing is deleted before the commit. The
 * commit first checks the guard, then tombstones the scope's unseen records chunk by chunk in
 * (origin, section, key) order — the order of the index urls_site_section_key_ext — each chunk in
 * one transaction with the cursor that says where the next starts: a retried commit resumes, and
 * repeating a finished one changes nothing.
 */
import type { ValidRecord } from "../../core/validate.ts";
import { SyncEmptyError, SyncNotFoundError, SyncQuotaError, SyncScopeError, SyncStateError, checkSyncGuard } from "../../store/errors.ts";
import type { CommitOptions, RecordSync, StartOptions, SyncCommit, SyncInfo, SyncScope, SyncState, SyncSweep, UpsertResult } from "../../store/port.ts";
import { servedRow } from "./served.ts";
import type { D1RecordWriter } from "./writer.ts";

/** Records examined per commit chunk (one index range, one UPDATE). */
const CHUNK_ROWS = 1000;
/** Locs per `sync_seen` statement (the sync id is the 100th parameter). */
const SEEN_PER_STATEMENT = 99;
/** `sync_seen` rows a sweep deletes per statement, and finished syncs it forgets per statement. */
const FORGET_ROWS = 5_000;
const FORGET_SYNCS = 1_000;
/** A finished sync: its rows are kept for the keep time, what it saw is no longer needed. */
const FINISHED = "state IN ('committed', 'aborted')";
/** A commit its client stopped calling (no batch or call since the expiry): the sweep finishes it (?1: now). */
const ABANDONED = "state = 'committing' AND expires_at < ?1";
/** The sweep's D1 statements per chunk of an abandoned commit: the sync's row, the chunk's keys, its UPDATE and cursor. */
const CHUNK_STATEMENTS = 4;
/**
 * A live sync, given the parameter holding the time: committing, or open and not past its expiry (the sweep ends
 * those). The cap and `active` count only these, so a site whose syncs expired starts a new one at once.
 */
const live = (now: string) => `(state = 'committing' OR (state = 'open' AND expires_at >= ${now}))`;

interface SyncRow {
  id: string;
  scope: string;
  state: SyncState;
  max_delete: number;
  started_at: number;
  expires_at: number;
  cursor: string | null;
  received: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  served_by: number | null;
  /** The database's change-sequence head when the sync opened (migration 0028); null: opened before it. */
  started_seq: number | null;
}

/** Where the commit has got to: the scope's site (index into scope.sites) and the last (section, key) done. */
interface CommitCursor {
  site: number;
  section: string;
  key: number;
}

function infoOf(row: SyncRow): SyncInfo {
  return {
    id: row.id,
    scope: JSON.parse(row.scope) as SyncScope,
    state: row.state,
    maxDelete: row.max_delete,
    startedAt: row.started_at,
    expiresAt: row.expires_at,
    received: row.received,
    inserted: row.inserted,
    updated: row.updated,
    unchanged: row.unchanged,
    deleted: row.deleted,
  };
}

/**
 * The scope's live served records on `urls` (alias u), its parameters numbered from `first`: a row
 * its database does not serve under the sync's partition count (served.ts) is never counted,
 * seen or deleted — the post-flip catch-up would carry such a deletion to the row's new home.
 */
function scopeFilter(row: SyncRow, scope: SyncScope, first: number): { sql: string; params: unknown[] } {
  // The sites as one JSON parameter: a scope of any size stays within D1's 100 bound parameters.
  const params: unknown[] = [JSON.stringify(scope.sites)];
  let n = first;
  let sql = `u.origin IN (SELECT value FROM json_each(?${n++})) AND u.deleted = 0`;
  // A database that is no partition hides nothing: its counts stay within the covering index.
  if (row.served_by !== null) {
    sql += ` AND ${servedRow("u", `?${n++}`)}`;
    params.push(row.served_by);
  }
  if (scope.section !== null) {
    sql += ` AND u.section = ?${n++}`;
    params.push(scope.section);
  }
  if (scope.source !== null) {
    sql += ` AND u.source = ?${n++}`;
    params.push(scope.source);
  }
  return { sql, params };
}

/**
 * "Changed since the sync opened" on `urls` (alias u), its parameter `param`: later in the
 * database's commit order than the open (`seq` past the head read as it opened), whatever stamp
 * the writer put on the row — a PUT acknowledged after the open by a writer whose clock is behind is
 * not the commit's to delete. The guard and the commit use this one test, so they agree. A sync
 * opened before migration 0028 has no head and keeps the stamp test.
 */
function changedBefore(row: SyncRow, param: string): { sql: string; value: number } {
  return row.started_seq === null ? { sql: `u.updated_at < ${param}`, value: row.started_at } : { sql: `u.seq <= ${param}`, value: row.started_seq };
}

export class D1RecordSync implements RecordSync {
  readonly #db: D1Database;
  readonly #writer: D1RecordWriter;

  constructor(db: D1Database, writer: D1RecordWriter) {
    this.#db = db;
    this.#writer = writer;
  }

  async start(scope: SyncScope, options: StartOptions, now = Date.now()): Promise<SyncInfo> {
    if (scope.sites.length === 0) throw new SyncScopeError("a sync needs at least one site", []);
    const id = crypto.randomUUID();
    const stored: SyncScope = { sites: [...scope.sites], section: scope.section, source: scope.source };
    // The scope's open syncs past their expiry end here, as the sweep would end them: the cap counts
    // live syncs only (as `active` lists them), and one it no longer counts can no longer be written to.
    // The cap in the insert itself: D1 runs one statement at a time, so concurrent starts cannot pass it together.
    const [, insert] = await this.#db.batch<{ id: string }>([
      this.#db
        .prepare(
          `UPDATE syncs SET state = 'aborted', finished_at = ?2 WHERE state = 'open' AND expires_at < ?2
             AND EXISTS (SELECT 1 FROM json_each(syncs.scope, '$.sites') AS mine JOIN json_each(?1, '$.sites') AS wanted ON mine.value = wanted.value)`,
        )
        .bind(JSON.stringify(stored), now),
      this.#db
        .prepare(
          `INSERT INTO syncs (id, scope, state, max_delete, started_at, expires_at, served_by, started_seq)
           SELECT ?1, ?2, 'open', ?3, ?4, ?5, ?7, (SELECT head FROM url_sequence WHERE id = 1)
           WHERE ?6 IS NULL OR NOT EXISTS (
             SELECT 1 FROM json_each(?2, '$.sites') AS site
             WHERE (SELECT COUNT(*) FROM syncs WHERE ${live("?4")}
                    AND EXISTS (SELECT 1 FROM json_each(syncs.scope, '$.sites') WHERE value = site.value)) >= ?6)
           RETURNING id`,
        )
        .bind(id, JSON.stringify(stored), options.maxDelete, now, now + options.ttlMs, options.maxOpenPerSite ?? null, options.servedBy ?? null),
    ]);
    const inserted = insert?.results[0] ?? null;
    if (inserted === null) throw new SyncQuotaError(`a site of the scope has ${options.maxOpenPerSite} open syncs, the most a site may have`);
    return (await this.get(id))!;
  }

  async get(id: string): Promise<SyncInfo | null> {
    const row = await this.#row(id);
    return row === null ? null : infoOf(row);
  }

  async #row(id: string): Promise<SyncRow | null> {
    return this.#db.prepare("SELECT * FROM syncs WHERE id = ?1").bind(id).first<SyncRow>();
  }

  async #open(id: string): Promise<SyncRow> {
    const row = await this.#row(id);
    if (row === null) throw new SyncNotFoundError(`no sync ${id} (never started, or expired and swept)`);
    if (row.state !== "open") throw new SyncStateError(`sync ${id} is ${row.state}, not open`);
    return row;
  }

  async upsert(id: string, records: readonly ValidRecord[], now = Date.now()): Promise<UpsertResult> {
    const row = await this.#open(id);
    const scope = JSON.parse(row.scope) as SyncScope;
    const inScope = this.#inScope(scope, records);
    const ttl = row.expires_at - row.started_at;
    const seen: D1PreparedStatement[] = [];
    for (let i = 0; i < inScope.length; i += SEEN_PER_STATEMENT) {
      const chunk = inScope.slice(i, i + SEEN_PER_STATEMENT);
      seen.push(
        this.#db
          .prepare(`INSERT OR IGNORE INTO sync_seen (sync, id) SELECT ?1, id FROM urls WHERE loc IN (${chunk.map((_, j) => `?${j + 2}`).join(",")})`)
          .bind(id, ...chunk.map((r) => r.loc)),
      );
    }
    // An open sync that keeps receiving batches never expires under its sender.
    const touch = this.#db
      .prepare("UPDATE syncs SET received = received + ?2, expires_at = MAX(expires_at, ?3) WHERE id = ?1")
      .bind(id, inScope.length, now + ttl);
    const result = await this.#writer.upsert(inScope, now, { source: scope.source, after: [...seen, touch] });
    await this.#db
      .prepare("UPDATE syncs SET inserted = inserted + ?2, updated = updated + ?3, unchanged = unchanged + ?4 WHERE id = ?1")
      .bind(id, result.inserted, result.updated, result.unchanged)
      .run();
    return result;
  }

  async keep(id: string, locs: readonly string[], now = Date.now()): Promise<number> {
    const row = await this.#open(id);
    const sites = new Set((JSON.parse(row.scope) as SyncScope).sites);
    const inScope = locs.filter((loc) => sites.has(new URL(loc).origin));
    const ttl = row.expires_at - row.started_at;
    const statements: D1PreparedStatement[] = [];
    for (let i = 0; i < inScope.length; i += SEEN_PER_STATEMENT) {
      const chunk = inScope.slice(i, i + SEEN_PER_STATEMENT);
      statements.push(
        this.#db
          .prepare(
            `INSERT OR IGNORE INTO sync_seen (sync, id) SELECT ?1, id FROM urls WHERE deleted = 0 AND loc IN (${chunk.map((_, j) => `?${j + 2}`).join(",")})`,
          )
          .bind(id, ...chunk),
      );
    }
    statements.push(
      this.#db.prepare("UPDATE syncs SET received = received + ?2, expires_at = MAX(expires_at, ?3) WHERE id = ?1").bind(id, inScope.length, now + ttl),
    );
    const results = await this.#db.batch(statements);
    return results.slice(0, -1).reduce((n, r) => n + (r.meta.changes ?? 0), 0);
  }

  /** The records as the scope writes them; throws SyncScopeError naming those outside it. */
  #inScope(scope: SyncScope, records: readonly ValidRecord[]): ValidRecord[] {
    const sites = new Set(scope.sites);
    const outside: number[] = [];
    const out = records.map((r, i) => {
      if (!sites.has(r.origin)) outside.push(i);
      else if (scope.section !== null && r.section !== scope.section) {
        // A record that names no section belongs to the sync's section; one that names another is outside.
        if (r.sectionDefaulted === true) return { ...r, section: scope.section, sectionDefaulted: false };
        outside.push(i);
      }
      return r;
    });
    if (outside.length > 0) {
      const where = scope.section === null ? `sites ${scope.sites.join(", ")}` : `section "${scope.section}" of ${scope.sites.join(", ")}`;
      throw new SyncScopeError(`${outside.length} of the records are outside this sync's scope (${where})`, outside);
    }
    return out;
  }

  async commit(id: string, options: CommitOptions, now = Date.now()): Promise<SyncCommit> {
    let row = await this.#row(id);
    if (row === null) throw new SyncNotFoundError(`no sync ${id} (never started, or expired and swept)`);
    if (row.state === "committed") return { sync: infoOf(row), done: true };
    if (row.state === "aborted") throw new SyncStateError(`sync ${id} was aborted; start a new one`);
    const scope = JSON.parse(row.scope) as SyncScope;
    if (row.state === "open") {
      if (options.siteGuard !== "passed") await this.#guard(row, scope, options.maxDelete ?? row.max_delete, options.partOfNonEmpty === true);
      if (options.siteGuard === "probe") return { sync: infoOf(row), done: false };
      const cursor: CommitCursor = { site: 0, section: scope.section ?? "", key: -1 };
      await this.#db
        .prepare("UPDATE syncs SET state = 'committing', cursor = ?2, max_delete = ?3 WHERE id = ?1 AND state = 'open'")
        .bind(id, JSON.stringify(cursor), options.maxDelete ?? row.max_delete)
        .run();
      row = (await this.#row(id))!;
    }
    for (let chunk = 0; chunk < options.maxChunks; chunk++) {
      const cursor = JSON.parse(row.cursor!) as CommitCursor;
      if (cursor.site < scope.sites.length) await this.#chunk(row, scope, cursor, now);
      row = (await this.#row(id))!;
      if ((JSON.parse(row.cursor!) as CommitCursor).site >= scope.sites.length) {
        await this.#db.prepare("UPDATE syncs SET state = 'committed', finished_at = ?2 WHERE id = ?1").bind(id, now).run();
        return { sync: infoOf((await this.#row(id))!), done: true };
      }
    }
    return { sync: infoOf(row), done: false };
  }

  /** Refuses an empty sync and one deleting more than the guard's share; nothing is written either way. */
  async #guard(row: SyncRow, scope: SyncScope, maxDelete: number, partOfNonEmpty: boolean): Promise<void> {
    if (row.received === 0 && !partOfNonEmpty)
      throw new SyncEmptyError("this sync received no record: an empty input never empties a scope, so nothing was deleted");
    const live = scopeFilter(row, scope, 1);
    const unseen = scopeFilter(row, scope, 3);
    const before = changedBefore(row, "?2");
    const [total, gone] = await this.#db.batch<{ n: number }>([
      this.#db.prepare(`SELECT COUNT(*) AS n FROM urls AS u WHERE ${live.sql}`).bind(...live.params),
      this.#db
        .prepare(
          `SELECT COUNT(*) AS n FROM urls AS u WHERE ${unseen.sql} AND ${before.sql}
             AND NOT EXISTS (SELECT 1 FROM sync_seen AS s WHERE s.sync = ?1 AND s.id = u.id)`,
        )
        .bind(row.id, before.value, ...unseen.params),
    ]);
    const inScope = total!.results[0]?.n ?? 0;
    const wouldDelete = gone!.results[0]?.n ?? 0;
    checkSyncGuard(wouldDelete, inScope, maxDelete);
  }

  /** Tombstones the unseen records of one chunk of the scope and moves the cursor past it, in one transaction. */
  async #chunk(row: SyncRow, scope: SyncScope, cursor: CommitCursor, now: number): Promise<void> {
    const origin = scope.sites[cursor.site]!;
    const section = scope.section === null ? "" : " AND section = ?4";
    const params = scope.section === null ? [origin, cursor.section, cursor.key] : [origin, cursor.section, cursor.key, scope.section];
    const { results: keys } = await this.#db
      .prepare(`SELECT section, id FROM urls WHERE origin = ?1 AND (section, id) > (?2, ?3)${section} ORDER BY section, id LIMIT ${CHUNK_ROWS}`)
      .bind(...params)
      .all<{ section: string; id: number }>();
    const last = keys.at(-1) ?? null;
    // A short chunk is the site's last: the next one starts at the next site.
    const next: CommitCursor =
      keys.length < CHUNK_ROWS
        ? { site: cursor.site + 1, section: scope.section ?? "", key: -1 }
        : { site: cursor.site, section: last!.section, key: last!.id };
    const statements: D1PreparedStatement[] = [];
    if (last !== null) {
      const extra: unknown[] = [];
      let where = "";
      if (row.served_by !== null) {
        extra.push(row.served_by);
        where += ` AND ${servedRow("u", `?${8 + extra.length}`)}`;
      }
      if (scope.source !== null) {
        extra.push(scope.source);
        where += ` AND u.source = ?${8 + extra.length}`;
      }
      const before = changedBefore(row, "?7");
      statements.push(
        this.#db
          .prepare(
            `UPDATE urls AS u SET deleted = 1, updated_at = ?1
             WHERE u.origin = ?2 AND (u.section, u.id) > (?3, ?4) AND (u.section, u.id) <= (?5, ?6)
               AND u.deleted = 0 AND ${before.sql}${where}
               AND NOT EXISTS (SELECT 1 FROM sync_seen AS s WHERE s.sync = ?8 AND s.id = u.id)`,
          )
          .bind(now, origin, cursor.section, cursor.key, last.section, last.id, before.value, row.id, ...extra),
      );
    }
    // The section scope narrows the range through the (section, id) bounds: both ends lie in it.
    // changes() is the row count of the UPDATE just before it in this transaction.
    statements.push(
      this.#db
        .prepare(`UPDATE syncs SET cursor = ?2, deleted = deleted + ${last === null ? "0" : "changes()"} WHERE id = ?1`)
        .bind(row.id, JSON.stringify(next)),
    );
    await this.#db.batch(statements);
  }

  /**
   * The site's own open and committing syncs, found by site in SQL: a move's flip waits for every
   * one of them, so no limit may leave one out however many other sites have syncs open.
   */
  async active(origin: string, now = Date.now()): Promise<SyncInfo[]> {
    const { results } = await this.#db
      .prepare(
        `SELECT * FROM syncs WHERE ${live("?2")}
           AND EXISTS (SELECT 1 FROM json_each(syncs.scope, '$.sites') WHERE value = ?1) ORDER BY started_at DESC`,
      )
      .bind(origin, now)
      .all<SyncRow>();
    return results.map(infoOf);
  }

  async abort(id: string, now = Date.now()): Promise<SyncInfo> {
    const row = await this.#row(id);
    if (row === null) throw new SyncNotFoundError(`no sync ${id} (never started, or expired and swept)`);
    if (row.state === "committing" || row.state === "committed") throw new SyncStateError(`sync ${id} is ${row.state}: a commit cannot be aborted`);
    if (row.state === "open")
      await this.#db.prepare("UPDATE syncs SET state = 'aborted', finished_at = ?2 WHERE id = ?1 AND state = 'open'").bind(id, now).run();
    return (await this.get(id))!;
  }

  /**
   * One read says what is due (open syncs past their expiry: a range of syncs_expiry; a finished sync
   * whose `sync_seen` rows remain, and finished syncs past the keep time: the kept syncs read, each
   * with one primary-key probe of sync_seen), then only the statements that have work run.
   */
  async sweep(now: number, keepMs: number, maxStatements: number): Promise<SyncSweep> {
    const out: SyncSweep = { expired: 0, finished: 0, forgotten: 0, seenRows: 0, statements: 0, moreLeft: false };
    const left = () => maxStatements - out.statements;
    if (left() < 1) return { ...out, moreLeft: true };
    const due = await this.#db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM syncs WHERE state = 'open' AND expires_at < ?1) AS expired,
           EXISTS (SELECT 1 FROM syncs WHERE ${FINISHED} AND EXISTS (SELECT 1 FROM sync_seen WHERE sync = syncs.id)) AS seen,
           EXISTS (SELECT 1 FROM syncs WHERE ${FINISHED} AND COALESCE(finished_at, 0) < ?2) AS old,
           EXISTS (SELECT 1 FROM syncs WHERE ${ABANDONED}) AS abandoned`,
      )
      .bind(now, now - keepMs)
      .first<{ expired: number; seen: number; old: number; abandoned: number }>();
    out.statements++;
    let seen = Boolean(due?.seen);
    if (due?.expired) {
      if (left() < 1) return { ...out, moreLeft: true };
      const expired = await this.#db
        .prepare("UPDATE syncs SET state = 'aborted', finished_at = ?1 WHERE state = 'open' AND expires_at < ?1")
        .bind(now)
        .run();
      out.statements++;
      out.expired = expired.meta.changes ?? 0;
      seen ||= out.expired > 0;
    }
    // A commit's guard passed, so its deletions are decided (what it did not see, changed before it
    // opened): one its client abandoned is finished here, chunk by chunk, so that it frees the
    // site's open-sync slot and no move's flip waits for it for ever. A chunk is idempotent, so a
    // client still calling meanwhile only repeats work.
    while (due?.abandoned) {
      if (left() < CHUNK_STATEMENTS) return { ...out, moreLeft: true };
      const row = await this.#db.prepare(`SELECT * FROM syncs WHERE ${ABANDONED} LIMIT 1`).bind(now).first<SyncRow>();
      out.statements++;
      if (row === null) break;
      const scope = JSON.parse(row.scope) as SyncScope;
      const cursor = JSON.parse(row.cursor!) as CommitCursor;
      if (cursor.site < scope.sites.length) {
        await this.#chunk(row, scope, cursor, now);
        out.statements += CHUNK_STATEMENTS - 1;
        continue;
      }
      await this.#db.prepare("UPDATE syncs SET state = 'committed', finished_at = ?2 WHERE id = ?1").bind(row.id, now).run();
      out.statements++;
      out.finished++;
      seen = true;
    }
    // What finished syncs saw is no longer needed: forgotten FORGET_ROWS rows a statement across them all, so
    // thousands of small syncs take a few statements (not two each) and a huge one several runs.
    while (seen) {
      if (left() < 1) return { ...out, moreLeft: true };
      const gone = await this.#db
        .prepare(
          `DELETE FROM sync_seen WHERE (sync, id) IN (
             SELECT s.sync, s.id FROM syncs JOIN sync_seen AS s ON s.sync = syncs.id WHERE ${FINISHED} LIMIT ${FORGET_ROWS})`,
        )
        .run();
      out.statements++;
      out.seenRows += gone.meta.changes ?? 0;
      seen = (gone.meta.changes ?? 0) >= FORGET_ROWS;
    }
    if (due?.old) {
      if (left() < 1) return { ...out, moreLeft: true };
      const forgotten = await this.#db
        .prepare(
          `DELETE FROM syncs WHERE id IN (
             SELECT id FROM syncs WHERE ${FINISHED} AND COALESCE(finished_at, 0) < ?1
               AND NOT EXISTS (SELECT 1 FROM sync_seen WHERE sync = syncs.id) LIMIT ${FORGET_SYNCS})`,
        )
        .bind(now - keepMs)
        .run();
      out.statements++;
      out.forgotten = forgotten.meta.changes ?? 0;
      if (out.forgotten >= FORGET_SYNCS) out.moreLeft = true;
    }
    return out;
  }
}
