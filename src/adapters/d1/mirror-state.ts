/**
 * Mirror state in D1 (migrations/0006_mirrors.sql, 0007_mirror_validators.sql), each row its owner's
 * (0031_mirrors_by_site.sql): a store reads and writes only the mirrors of the site it was made for.
 */
import { utf8Length } from "../../core/escape.ts";
import {
  type ChildRead,
  type MirrorChild,
  type MirrorCounts,
  type MirrorState,
  type MirrorStateStore,
  type ReadPrefix,
  type Validators,
  noCounts,
} from "../../mirror/store.ts";

interface MirrorRow {
  url: string;
  etag: string | null;
  last_modified: string | null;
  site: string | null;
  sync_id: string | null;
  pass_etag: string | null;
  pass_last_modified: string | null;
  child: number;
  records_done: number;
  prefix: string | null;
  check_child: number;
  verifying: number;
  top_read_at: number | null;
  children_digest: string | null;
  counts: string;
  checked_at: number | null;
  ok_at: number | null;
  error: string | null;
  error_at: number | null;
}

interface ChildRow {
  child: string;
  etag: string | null;
  last_modified: string | null;
  digest: string | null;
  read_at: number | null;
}

const childOf = (row: ChildRow): MirrorChild => ({
  url: row.child,
  validators: { etag: row.etag, lastModified: row.last_modified },
  digest: row.digest,
  readAt: row.read_at,
});

/**
 * The sitemap list goes to D1 as JSON arrays of at most this many UTF-8 bytes, one parameter of one
 * INSERT … SELECT FROM json_each each: half of D1's 2,000,000 bytes for a value, so an index's
 * 50,000 sitemaps (~4 MB of URLs) take ~5 statements, not 1,500 statements of 33 rows (3 parameters
 * a row, ≤ 100 a statement), which passed the 1,000 queries an invocation may make.
 */
const CHILDREN_CHUNK_BYTES = 1_000_000;

/** `children` as JSON arrays of at most CHILDREN_CHUNK_BYTES UTF-8 bytes each, with the index of each array's first one. */
function childChunks(children: readonly string[]): { first: number; json: string }[] {
  const out: { first: number; json: string }[] = [];
  let chunk: string[] = [];
  let first = 0;
  let bytes = 2;
  for (const [n, child] of children.entries()) {
    const json = JSON.stringify(child);
    const size = utf8Length(json) + 1;
    if (chunk.length > 0 && bytes + size > CHILDREN_CHUNK_BYTES) {
      out.push({ first, json: `[${chunk.join(",")}]` });
      chunk = [];
      first = n;
      bytes = 2;
    }
    chunk.push(json);
    bytes += size;
  }
  if (chunk.length > 0) out.push({ first, json: `[${chunk.join(",")}]` });
  return out;
}

/** A `mirrors` row as the state it stores. */
function stateOf(row: MirrorRow): MirrorState {
  return {
    url: row.url,
    etag: row.etag,
    lastModified: row.last_modified,
    site: row.site,
    syncId: row.sync_id,
    passEtag: row.pass_etag,
    passLastModified: row.pass_last_modified,
    child: row.child,
    recordsDone: row.records_done,
    prefix: row.prefix === null ? null : (JSON.parse(row.prefix) as ReadPrefix),
    checkChild: row.check_child,
    verifying: row.verifying === 1,
    topReadAt: row.top_read_at,
    childrenDigest: row.children_digest,
    // Counts saved before a count existed read as 0.
    counts: { ...noCounts(), ...(JSON.parse(row.counts) as Partial<MirrorCounts>) },
    checkedAt: row.checked_at,
    okAt: row.ok_at,
    error: row.error,
    errorAt: row.error_at,
  };
}

export class D1MirrorStateStore implements MirrorStateStore {
  readonly #db: D1Database;
  readonly owner: string;

  /** `owner`: the registered site whose MIRROR_SITEMAPS these are, '' for the deployment's. */
  constructor(db: D1Database, owner: string) {
    this.#db = db;
    this.owner = owner;
  }

  async load(url: string): Promise<MirrorState | null> {
    const row = await this.#db.prepare("SELECT * FROM mirrors WHERE owner = ?2 AND url = ?1").bind(url, this.owner).first<MirrorRow>();
    return row === null ? null : stateOf(row);
  }

  async loadMany(urls: readonly string[]): Promise<Map<string, MirrorState>> {
    // One query for any number of mirrors: the URLs as one JSON parameter.
    const { results } = await this.#db
      .prepare("SELECT * FROM mirrors WHERE owner = ?2 AND url IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(urls), this.owner)
      .all<MirrorRow>();
    return new Map(results.map((row) => [row.url, stateOf(row)]));
  }

  async save(s: MirrorState, reads: readonly ChildRead[] = []): Promise<void> {
    const state = this.#db
      .prepare(
        `INSERT OR REPLACE INTO mirrors (owner, url, etag, last_modified, sync_id, pass_etag, pass_last_modified, child, records_done, counts, checked_at, ok_at, error, error_at, site, prefix, check_child, verifying, top_read_at, children_digest)
         VALUES (?20, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)`,
      )
      .bind(
        s.url,
        s.etag,
        s.lastModified,
        s.syncId,
        s.passEtag,
        s.passLastModified,
        s.child,
        s.recordsDone,
        JSON.stringify(s.counts),
        s.checkedAt,
        s.okAt,
        s.error,
        s.errorAt,
        s.site,
        s.prefix === null ? null : JSON.stringify(s.prefix),
        s.checkChild,
        s.verifying ? 1 : 0,
        s.topReadAt,
        s.childrenDigest,
        this.owner,
      );
    if (reads.length === 0) await state.run();
    else await this.#db.batch([state, this.#childReads(s.url, reads)]);
  }

  /** How these sitemaps were read, as one JSON parameter (a pass saves up to 500 at once: src/mirror/pass-writes.ts). */
  #childReads(url: string, reads: readonly ChildRead[]): D1PreparedStatement {
    const rows = reads.map((r) => [r.n, r.validators.etag, r.validators.lastModified, r.digest, r.readAt]);
    return this.#db
      .prepare(
        `UPDATE mirror_children SET etag = r.value ->> 1, last_modified = r.value ->> 2, digest = r.value ->> 3, read_at = r.value ->> 4
         FROM json_each(?2) AS r WHERE mirror_children.owner = ?3 AND mirror_children.url = ?1 AND mirror_children.n = r.value ->> 0`,
      )
      .bind(url, JSON.stringify(rows), this.owner);
  }

  async setChildren(url: string, children: readonly string[]): Promise<void> {
    // One transaction of a few statements: the list is replaced whole or not at all.
    await this.#db.batch([
      this.#db.prepare("DELETE FROM mirror_children WHERE owner = ?2 AND url = ?1").bind(url, this.owner),
      ...childChunks(children).map(({ first, json }) =>
        this.#db
          .prepare("INSERT INTO mirror_children (owner, url, n, child) SELECT ?4, ?1, ?2 + key, value FROM json_each(?3)")
          .bind(url, first, json, this.owner),
      ),
    ]);
  }

  async child(url: string, n: number): Promise<MirrorChild | null> {
    const row = await this.#db
      .prepare("SELECT child, etag, last_modified, digest, read_at FROM mirror_children WHERE owner = ?3 AND url = ?1 AND n = ?2")
      .bind(url, n, this.owner)
      .first<ChildRow>();
    return row === null ? null : childOf(row);
  }

  async children(url: string, from: number, limit: number): Promise<MirrorChild[]> {
    const { results } = await this.#db
      .prepare("SELECT child, etag, last_modified, digest, read_at FROM mirror_children WHERE owner = ?4 AND url = ?1 AND n >= ?2 ORDER BY n LIMIT ?3")
      .bind(url, from, limit, this.owner)
      .all<ChildRow>();
    return results.map(childOf);
  }

  async setChildRead(url: string, n: number, validators: Validators, digest: string, readAt: number): Promise<void> {
    await this.#childReads(url, [{ n, validators, digest, readAt }]).run();
  }

  async forgetChildReads(url: string): Promise<void> {
    await this.#db
      .prepare(
        "UPDATE mirror_children SET etag = NULL, last_modified = NULL, digest = NULL, read_at = NULL WHERE owner = ?2 AND url = ?1 AND digest IS NOT NULL",
      )
      .bind(url, this.owner)
      .run();
  }

  async childCount(url: string): Promise<number> {
    return (
      (await this.#db.prepare("SELECT COUNT(*) AS n FROM mirror_children WHERE owner = ?2 AND url = ?1").bind(url, this.owner).first<{ n: number }>())
        ?.n ?? 0
    );
  }
}
