/**
 * A partitioned site's database list, checked at run time against the identities recorded for its
 * partitions (identity.ts). The check runs before the site's layout is read, and every read and
 * write by partition reads the layout first. That covers the site's reads, writes, syncs and
 * mirror commits, each partition's regeneration and notification, and every move step. So a list
 * that reorders, repoints, replaces, drops or repeats a database stops them all with a
 * DatabaseListError naming SITE_DATABASES: no row is written into the wrong database, and no share
 * is left out of the index without a word.
 *
 * A site listed with one database is checked the same way before each write and sync
 * (`checkedWriter`), so a one-database site relisted without its database is refused too.
 *
 * The record is made at the site's first use: the databases the layout counts (all of the list
 * for a new site; its one database for a site listed alone). Before it, the site lived in one
 * database: if the list's first holds nothing of the site while another listed one does, or any
 * bound database the list leaves out holds its rows (DB, any other), the list is refused
 * (identity.ts checkFirstRecord) before anything is recorded or written. It is extended by the first layout read after a move
 * started onto an appended database, before any copy or write reaches that database.
 *
 * Cost: the result is kept per isolate for CHECK_TTL_MS, so a request pays no query. A miss pays
 * one query per listed database (its identity and its copy of the record), one per other bound
 * database while nothing is recorded (does it hold the site?) and, at most once per database, two
 * more (its identity is made). Recording writes one statement per database.
 */
import { DatabaseListError } from "../store/errors.ts";
import type { RecordSync, RecordWriter } from "../store/port.ts";
import { type DatabaseIdentityStore, type DatabaseListCheck, type ListedDatabase, checkDatabaseList, checkFirstRecord } from "./identity.ts";
import type { PartitionLayout } from "./layout.ts";
import type { LayoutOf } from "./served.ts";

/**
 * How long an isolate trusts its check. Bindings cannot change within an isolate (a new list is a
 * new deployment, in new isolates); the record only grows (another isolate's move start). A minute
 * bounds how long a record fixed by hand in D1 goes unseen.
 */
const CHECK_TTL_MS = 60_000;

interface Checked {
  /** The longest record any listed database holds. */
  recorded: readonly ListedDatabase[];
  /** The list as configured, each binding with its database's identity. */
  current: readonly ListedDatabase[];
  check: DatabaseListCheck;
}

/** Per isolate: one check per site and list, shared by every request and job in the isolate. */
const checks = new Map<string, { at: number; checked: Promise<Checked> }>();

/** What status and the dashboard show of the list. */
interface DatabaseListStatus {
  ok: boolean;
  /** What is wrong, naming SITE_DATABASES; null when the list is the recorded one or an append to it. */
  problem: string | null;
  /** How many partitions' databases are recorded. */
  recorded: number;
  /** The list as configured: each binding and the identity of its database. */
  listed: readonly ListedDatabase[];
}

export class DatabaseList {
  readonly origin: string;
  readonly databases: readonly { binding: string; store: DatabaseIdentityStore }[];
  readonly #key: string;

  /** The bound databases the list leaves out (DB, those other sites list): read for a site with nothing recorded, any of which may have been its home. */
  readonly #others: readonly { binding: string; store: DatabaseIdentityStore }[];

  /** `databases`: the site's SITE_DATABASES list in order, each binding with its database; `bound`: every bound database the site may have lived in. */
  constructor(
    origin: string,
    databases: readonly { binding: string; store: DatabaseIdentityStore }[],
    bound: readonly { binding: string; store: DatabaseIdentityStore }[] = [],
  ) {
    this.origin = origin;
    this.databases = databases;
    this.#others = bound.filter((b) => !databases.some((d) => d.binding === b.binding));
    this.#key = `${origin}=${databases.map((d) => d.binding).join(",")}`;
  }

  /** The check, from this isolate's cache while it is fresh. */
  #checked(now: number): Promise<Checked> {
    const cached = checks.get(this.#key);
    if (cached && now - cached.at < CHECK_TTL_MS) return cached.checked;
    const checked = this.#read(now);
    checks.set(this.#key, { at: now, checked });
    // A failed read is not kept: the next call reads again.
    checked.catch(() => {
      if (checks.get(this.#key)?.checked === checked) checks.delete(this.#key);
    });
    return checked;
  }

  async #read(now: number): Promise<Checked> {
    const read = await Promise.all(this.databases.map((d) => d.store.read(this.origin, now)));
    const current = read.map((r, i) => ({ binding: this.databases[i]!.binding, id: r.id }));
    // Every database holds the whole record; one that missed the last extension holds a shorter one.
    const recorded = read.reduce<ListedDatabase[]>((longest, r) => (r.recorded.length > longest.length ? r.recorded : longest), []);
    if (recorded.length === 0) {
      // Nothing recorded: the site's first use under a list. Where did it live until now?
      const others = await Promise.all(this.#others.map((o) => o.store.read(this.origin, now)));
      const holders = [
        ...current.filter((_, i) => read[i]!.holds),
        // A binding that names a listed database under another name is that database.
        ...others.flatMap((o, i) => (o.holds && !current.some((c) => c.id === o.id) ? [{ binding: this.#others[i]!.binding, id: o.id }] : [])),
      ];
      const first = checkFirstRecord(this.origin, current, holders);
      if (first.state === "problem") return { recorded, current, check: first };
    }
    return { recorded, current, check: checkDatabaseList(this.origin, recorded, current) };
  }

  /** Throws DatabaseListError unless the list keeps every recorded database in its place. */
  async assert(now = Date.now()): Promise<void> {
    const { check } = await this.#checked(now);
    if (check.state === "problem") throw new DatabaseListError(check.problem);
  }

  /**
   * Records the first `count` listed databases as the site's partitions, if fewer are recorded: at
   * the site's first use (its layout's count), and once a move has started onto an appended
   * database (its target). Never over a recorded position; a count above the list's length is a
   * dropped database.
   */
  async cover(count: number, now = Date.now()): Promise<void> {
    const checked = await this.#checked(now);
    if (checked.check.state === "problem") throw new DatabaseListError(checked.check.problem);
    if (count > checked.current.length) {
      // A layout from before identities were recorded, over more databases than are listed now.
      throw new DatabaseListError(
        `SITE_DATABASES for ${this.origin} lists ${checked.current.length} databases, but the site's records are spread over ${count}: a database was dropped from the list, and its records would no longer be served; list it again in its place. Removing a database from a site is not supported`,
      );
    }
    if (checked.recorded.length >= count) return;
    const list = checked.current.slice(0, count);
    for (const d of this.databases.slice(0, count)) await d.store.record(this.origin, list, now);
    const recorded = list.length >= checked.recorded.length ? list : checked.recorded;
    checks.set(this.#key, {
      at: now,
      checked: Promise.resolve({ ...checked, recorded, check: checkDatabaseList(this.origin, recorded, checked.current) }),
    });
  }

  async status(now = Date.now()): Promise<DatabaseListStatus> {
    const { recorded, current, check } = await this.#checked(now);
    return { ok: check.state !== "problem", problem: check.state === "problem" ? check.problem : null, recorded: recorded.length, listed: current };
  }
}

/**
 * The site's layout as every partition read and write takes it: only under a list that keeps the
 * recorded databases in their places, and with the record extended to the layout's count first.
 */
export function checkedLayoutOf(list: DatabaseList, read: () => Promise<PartitionLayout>): LayoutOf {
  return async () => {
    await list.assert();
    const layout = await read();
    await list.cover(layout.target);
    return layout;
  };
}

/**
 * The site's full syncs under the same check. A batch reads the layout (checked), but a commit
 * and an abort go to each partition by position without it: they are checked here, so a sync
 * opened before the list changed deletes nothing under the new one. Reads (a sync's state, those
 * under way, the sweep that expires abandoned ones, deleting nothing) stay open to status and housekeeping.
 */
export function checkedSync(list: DatabaseList, sync: RecordSync): RecordSync {
  const checked =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await list.assert();
      return write(...args);
    };
  return {
    start: checked((scope, options, now) => sync.start(scope, options, now)),
    get: (id) => sync.get(id),
    upsert: checked((id, records, now) => sync.upsert(id, records, now)),
    keep: checked((id, locs, now) => sync.keep(id, locs, now)),
    commit: checked((id, options, now) => sync.commit(id, options, now)),
    abort: checked((id, now) => sync.abort(id, now)),
    active: (origin) => sync.active(origin),
    sweep: (now, keepMs, maxStatements) => sync.sweep(now, keepMs, maxStatements),
  };
}

/**
 * A site listed with one database: its writes and syncs under the same check, its first write
 * recording the database as its first partition's. Reads are left open: they write nothing.
 */
export function checkedWriter(list: DatabaseList, writer: RecordWriter): RecordWriter {
  return {
    upsert: async (records, now) => {
      await list.cover(1);
      return writer.upsert(records, now);
    },
    delete: async (locs, now) => {
      await list.cover(1);
      return writer.delete(locs, now);
    },
  };
}
