/** Each database's identity and its record of the partitions of the sites it serves (src/partitions/identity.ts, migration 0019). */
import type { DatabaseIdentityStore, ListedDatabase } from "../../partitions/identity.ts";

interface Row {
  identity: string | null;
  holds: number;
  position: number | null;
  database_id: string | null;
  binding: string | null;
}

/** Bound parameters per statement are at most 100 (D1): two shared, two per recorded position (its number is written in the statement). */
const ROWS_PER_STATEMENT = 32;

export class D1DatabaseIdentity implements DatabaseIdentityStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** One query: the identity, whether the site is here, and the record side by side (one row of nulls when no record exists). */
  async read(origin: string, now: number): Promise<{ id: string; recorded: ListedDatabase[]; holds: boolean }> {
    const { results } = await this.#db
      .prepare(
        `SELECT (SELECT id FROM database_identity WHERE one = 1) AS identity,
           EXISTS (SELECT 1 FROM urls WHERE origin = ?1) OR EXISTS (SELECT 1 FROM partition_layouts WHERE origin = ?1) AS holds,
           p.position, p.database_id, p.binding
         FROM (SELECT 1) LEFT JOIN partition_databases p ON p.origin = ?1 ORDER BY p.position`,
      )
      .bind(origin)
      .all<Row>();
    const recorded = results.flatMap((r) => (r.position === null ? [] : [{ binding: r.binding!, id: r.database_id! }]));
    return { id: results[0]?.identity ?? (await this.#create(now)), recorded, holds: results[0]?.holds === 1 };
  }

  /** The database's first use: a random identity, kept if another isolate made one first. */
  async #create(now: number): Promise<string> {
    await this.#db.prepare("INSERT OR IGNORE INTO database_identity (one, id, created_at) VALUES (1, ?1, ?2)").bind(crypto.randomUUID(), now).run();
    return (await this.#db.prepare("SELECT id FROM database_identity WHERE one = 1").first<{ id: string }>())!.id;
  }

  async record(origin: string, list: readonly ListedDatabase[], now: number): Promise<void> {
    for (let from = 0; from < list.length; from += ROWS_PER_STATEMENT) {
      const rows = list.slice(from, from + ROWS_PER_STATEMENT);
      const values = rows.map((_, i) => `(?1, ${from + i}, ?${3 + 2 * i}, ?${4 + 2 * i}, ?2)`).join(", ");
      await this.#db
        .prepare(`INSERT OR IGNORE INTO partition_databases (origin, position, database_id, binding, recorded_at) VALUES ${values}`)
        .bind(origin, now, ...rows.flatMap((r) => [r.id, r.binding]))
        .run();
    }
  }
}
