/** The regeneration's state in D1 (migrations/0002_regeneration.sql): state and lease, run log, snapshot GC. */
import { EMPTY_STATE, type Lease, type RegenState, type RegenStore, type RunRecord } from "../../regen/store.ts";

const RUNS_KEPT = 100;

function parseState(text: string | null | undefined): RegenState {
  if (!text) return { ...EMPTY_STATE };
  try {
    const raw = JSON.parse(text) as Partial<RegenState>;
    return {
      cursor: raw.cursor ?? null,
      recent: Array.isArray(raw.recent) ? raw.recent : [],
      pending: Array.isArray(raw.pending) ? raw.pending : [],
      changed: Array.isArray(raw.changed) ? raw.changed : [],
      pass: raw.pass ?? null,
      fingerprint: typeof raw.fingerprint === "string" ? raw.fingerprint : "",
      failed: Array.isArray(raw.failed) ? raw.failed : [],
    };
  } catch {
    return { ...EMPTY_STATE };
  }
}

export class D1RegenStore implements RegenStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /**
   * The lease's id is `name~token`, a fresh token every time: a lease held under `name` is taken
   * back (a killed step's retry), but the holder it was taken from no longer holds it, so its
   * progress and its manifest (D1ManifestStore's fence) are refused even while it still runs. A
   * lease stored by an earlier version under the bare name is taken back too.
   */
  async acquire(origin: string, now: number, ttlMs: number, name?: string): Promise<Lease | null> {
    const token = crypto.randomUUID();
    const lease = { id: name === undefined ? token : `${name}~${token}`, until: now + ttlMs };
    const result = await this.#db
      .prepare(
        `INSERT INTO regen_state (origin, state, lease_id, lease_until, updated_at) VALUES (?1, '', ?2, ?3, ?4)
         ON CONFLICT(origin) DO UPDATE SET lease_id = excluded.lease_id, lease_until = excluded.lease_until
         WHERE regen_state.lease_until < ?4 OR (?5 IS NOT NULL AND (regen_state.lease_id = ?5 OR substr(regen_state.lease_id, 1, length(?5) + 1) = ?5 || '~'))`,
      )
      .bind(origin, lease.id, lease.until, now, name ?? null)
      .run();
    return (result.meta.changes ?? 0) > 0 ? lease : null;
  }

  async release(origin: string, lease: Lease): Promise<void> {
    await this.#db.prepare("UPDATE regen_state SET lease_id = NULL, lease_until = 0 WHERE origin = ?1 AND lease_id = ?2").bind(origin, lease.id).run();
  }

  async load(origin: string): Promise<RegenState> {
    const row = await this.#db.prepare("SELECT state FROM regen_state WHERE origin = ?1").bind(origin).first<{ state: string }>();
    return parseState(row?.state);
  }

  async save(origin: string, lease: Lease, state: RegenState, now: number): Promise<boolean> {
    const result = await this.#db
      .prepare("UPDATE regen_state SET state = ?3, updated_at = ?4 WHERE origin = ?1 AND lease_id = ?2")
      .bind(origin, lease.id, JSON.stringify(state), now)
      .run();
    return (result.meta.changes ?? 0) > 0;
  }

  async peek(origin: string): Promise<{ state: RegenState; leaseUntil: number; updatedAt: number } | null> {
    const row = await this.#db
      .prepare("SELECT state, lease_until, updated_at FROM regen_state WHERE origin = ?1")
      .bind(origin)
      .first<{ state: string; lease_until: number; updated_at: number }>();
    return row ? { state: parseState(row.state), leaseUntil: row.lease_until, updatedAt: row.updated_at } : null;
  }

  async recordRun(origin: string, startedAt: number, ok: boolean, summary: unknown): Promise<void> {
    await this.#db.batch([
      this.#db
        .prepare("INSERT INTO regen_runs (origin, started_at, ok, summary) VALUES (?1, ?2, ?3, ?4)")
        .bind(origin, startedAt, ok ? 1 : 0, JSON.stringify(summary)),
      this.#db
        .prepare(
          `DELETE FROM regen_runs WHERE origin = ?1 AND id <= (
             SELECT id FROM regen_runs WHERE origin = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)`,
        )
        .bind(origin, RUNS_KEPT),
    ]);
  }

  async runs(origin: string, limit: number): Promise<RunRecord[]> {
    const { results } = await this.#db
      .prepare("SELECT id, started_at, ok, summary FROM regen_runs WHERE origin = ?1 ORDER BY id DESC LIMIT ?2")
      .bind(origin, limit)
      .all<{ id: number; started_at: number; ok: number; summary: string }>();
    return results.map((r) => ({ id: r.id, startedAt: r.started_at, ok: r.ok === 1, summary: JSON.parse(r.summary) as unknown }));
  }

  async tentative(origin: string, key: string, now: number): Promise<void> {
    await this.#db
      .prepare("INSERT INTO snapshot_gc (key, origin, since, tentative) VALUES (?1, ?2, ?3, 1) ON CONFLICT(key) DO NOTHING")
      .bind(key, origin, now)
      .run();
  }

  async confirm(keys: readonly string[]): Promise<void> {
    await this.forget(keys);
  }

  async supersede(origin: string, keys: readonly string[], now: number): Promise<void> {
    const statements: D1PreparedStatement[] = [];
    for (let i = 0; i < keys.length; i += 33) {
      const chunk = keys.slice(i, i + 33);
      statements.push(
        this.#db
          .prepare(
            `INSERT INTO snapshot_gc (key, origin, since, tentative) VALUES ${chunk.map(() => "(?, ?, ?, 0)").join(",")}
             ON CONFLICT(key) DO UPDATE SET since = excluded.since, tentative = 0`,
          )
          .bind(...chunk.flatMap((key) => [key, origin, now])),
      );
    }
    if (statements.length > 0) await this.#db.batch(statements);
  }

  async due(origin: string, before: number, limit: number): Promise<string[]> {
    const { results } = await this.#db
      .prepare("SELECT key FROM snapshot_gc WHERE origin = ?1 AND since < ?2 ORDER BY since LIMIT ?3")
      .bind(origin, before, limit)
      .all<{ key: string }>();
    return results.map((r) => r.key);
  }

  async forget(keys: readonly string[]): Promise<void> {
    const statements: D1PreparedStatement[] = [];
    for (let i = 0; i < keys.length; i += 99) {
      const chunk = keys.slice(i, i + 99);
      statements.push(this.#db.prepare(`DELETE FROM snapshot_gc WHERE key IN (${chunk.map(() => "?").join(",")})`).bind(...chunk));
    }
    if (statements.length > 0) await this.#db.batch(statements);
  }
}
