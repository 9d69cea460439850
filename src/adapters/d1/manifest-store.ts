/** D1ManifestStore: the manifest lives in D1, the strongly consistent store, read on every request. */
import { LeaseLostError, type ManifestFence, type ManifestStore, type ShardEntry, type ShardManifest } from "../../manifest/manifest.ts";

interface ShardRow {
  section: string;
  n: number;
  first_key: number;
  last_key: number;
  url_count: number;
  byte_count: number;
  last_change: number;
  version: string;
  ext_kinds: number;
  snapshot: string | null;
  page_starts: string | null;
  block_starts: string | null;
}

/** The columns of a shard's row after its origin, in the order each row's JSON array holds them. */
const SHARD_FIELDS = [
  "section",
  "n",
  "first_key",
  "last_key",
  "url_count",
  "byte_count",
  "last_change",
  "version",
  "ext_kinds",
  "snapshot",
  "page_starts",
  "block_starts",
] as const;

/** `page_starts` and `block_starts` are keys joined by commas: ~7 bytes a page or block, ~350 bytes each for a full shard. */
const pageStartsOf = (text: string): number[] => (text === "" ? [] : text.split(",").map(Number));
/**
 * Shards per INSERT: their JSON is one bound value, at most ~950 bytes a shard (its page and block
 * starts the most of it), so ~950 KB, within D1's 2,000,000 bytes a value.
 */
const ROWS_PER_INSERT = 1_000;

export class D1ManifestStore implements ManifestStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** The site's manifest, or null when none was built yet. Two small reads in one round trip. */
  async load(origin: string): Promise<ShardManifest | null> {
    const [head, shards] = await this.#db.batch<unknown>([
      this.#db.prepare("SELECT version, built_at, snapshot, partial FROM manifests WHERE origin = ?1").bind(origin),
      this.#db
        .prepare(
          `SELECT section, n, first_key, last_key, url_count, byte_count, last_change, version, ext_kinds, snapshot, page_starts, block_starts
           FROM shards WHERE origin = ?1 ORDER BY section, first_key`,
        )
        .bind(origin),
    ]);
    const row = head?.results[0] as { version: string; built_at: number; snapshot: string | null; partial: number } | undefined;
    if (!row) return null;
    return {
      origin,
      version: row.version,
      builtAt: row.built_at,
      snapshot: row.snapshot,
      ...(row.partial === 1 ? { partial: true } : {}),
      shards: ((shards?.results ?? []) as ShardRow[]).map((s) => ({
        section: s.section,
        n: s.n,
        firstKey: s.first_key,
        lastKey: s.last_key,
        urlCount: s.url_count,
        byteCount: s.byte_count,
        lastChange: s.last_change,
        version: s.version,
        extKinds: s.ext_kinds,
        snapshot: s.snapshot,
        ...(s.page_starts === null ? {} : { pageStarts: pageStartsOf(s.page_starts) }),
        ...(s.block_starts === null ? {} : { blockStarts: pageStartsOf(s.block_starts) }),
      })),
    };
  }

  /**
   * Replaces the site's manifest in one transaction (D1 batch): readers see the old or the new. The
   * shards go as JSON, ROWS_PER_INSERT a statement, so a manifest of 5,000 shards is a handful of
   * statements (a publish step's cost must not grow with the site: docs/capacity.md). Only what
   * differs is written: rows of shards gone are deleted, and a shard's row is updated only when one
   * of its columns changed. A run that splices 3 shards of 2,000 writes 3 rows, not 4,000 (D1 bills
   * rows written; BENCHMARKS.md "What a month costs").
   *
   * With a `fence`, every statement also requires the regeneration's lease (regen_state, the same
   * database) to be still the fence's: in one transaction that is all or nothing, and the last
   * statement says which, so a run whose lease was taken writes nothing and gets LeaseLostError.
   */
  async save(manifest: ShardManifest, fence?: ManifestFence): Promise<void> {
    const keys = JSON.stringify(manifest.shards.map((s) => [s.section, s.n]));
    const leaseId = fence?.leaseId ?? null;
    const held = (p: number) => `(?${p} IS NULL OR EXISTS (SELECT 1 FROM regen_state WHERE origin = ?1 AND lease_id = ?${p}))`;
    const statements: D1PreparedStatement[] = [
      this.#db
        .prepare(
          `DELETE FROM shards WHERE origin = ?1 AND (section, n) NOT IN (
             SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?2)) AND ${held(3)}`,
        )
        .bind(manifest.origin, keys, leaseId),
    ];
    const columns = SHARD_FIELDS.map((_, i) => `json_extract(value, '$[${i}]')`).join(", ");
    const updated = SHARD_FIELDS.slice(2);
    // `WHERE true`: SQLite's upsert after a SELECT needs it (else ON CONFLICT reads as a join's ON).
    const insert = this.#db.prepare(
      `INSERT INTO shards (origin, section, n, first_key, last_key, url_count, byte_count, last_change, version, ext_kinds, snapshot, page_starts, block_starts)
       SELECT ?1, ${columns} FROM json_each(?2) WHERE ${held(3)}
       ON CONFLICT (origin, section, n) DO UPDATE SET ${updated.map((c) => `${c} = excluded.${c}`).join(", ")}
       WHERE ${updated.map((c) => `shards.${c} IS NOT excluded.${c}`).join(" OR ")}`,
    );
    for (let i = 0; i < manifest.shards.length; i += ROWS_PER_INSERT) {
      const rows = manifest.shards
        .slice(i, i + ROWS_PER_INSERT)
        .map((s: ShardEntry) => [
          s.section,
          s.n,
          s.firstKey,
          s.lastKey,
          s.urlCount,
          s.byteCount,
          s.lastChange,
          s.version,
          s.extKinds ?? 0,
          s.snapshot ?? null,
          s.pageStarts ? s.pageStarts.join(",") : null,
          s.blockStarts ? s.blockStarts.join(",") : null,
        ]);
      statements.push(insert.bind(manifest.origin, JSON.stringify(rows), leaseId));
    }
    statements.push(
      this.#db
        .prepare(
          `INSERT INTO manifests (origin, version, built_at, snapshot, partial) SELECT ?1, ?2, ?3, ?4, ?5 WHERE ${held(6)}
           ON CONFLICT(origin) DO UPDATE SET version = excluded.version, built_at = excluded.built_at, snapshot = excluded.snapshot, partial = excluded.partial`,
        )
        .bind(manifest.origin, manifest.version, manifest.builtAt, manifest.snapshot ?? null, manifest.partial ? 1 : 0, leaseId),
    );
    if (leaseId === null) {
      await this.#db.batch(statements);
      return;
    }
    statements.push(this.#db.prepare(`SELECT ${held(2)} AS held`).bind(manifest.origin, leaseId));
    const results = await this.#db.batch<{ held: number }>(statements);
    if (results.at(-1)?.results[0]?.held !== 1) {
      throw new LeaseLostError(`another regeneration of ${manifest.origin} took the lease: this run's manifest was not saved`);
    }
  }
}
