/** The layout of each partitioned site (src/partitions/layout.ts), in the site's first database. */
import type { LayoutStore, MoveCursor, PartitionLayout } from "../../partitions/layout.ts";

interface LayoutRow {
  settled: number;
  target: number;
  flipped_at: number | null;
  cursor: string | null;
}

export class D1LayoutStore implements LayoutStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async load(origin: string): Promise<PartitionLayout | null> {
    const row = await this.#db
      .prepare("SELECT settled, target, flipped_at, cursor FROM partition_layouts WHERE origin = ?1")
      .bind(origin)
      .first<LayoutRow>();
    return (
      row && {
        settled: row.settled,
        target: row.target,
        flippedAt: row.flipped_at,
        cursor: row.cursor === null ? null : (JSON.parse(row.cursor) as MoveCursor),
      }
    );
  }

  async create(origin: string, settled: number): Promise<PartitionLayout> {
    await this.#db
      .prepare("INSERT OR IGNORE INTO partition_layouts (origin, settled, target, updated_at) VALUES (?1, ?2, ?2, ?3)")
      .bind(origin, settled, Date.now())
      .run();
    return (await this.load(origin))!;
  }

  async save(origin: string, layout: PartitionLayout, now: number): Promise<void> {
    await this.#db
      .prepare("UPDATE partition_layouts SET settled = ?2, target = ?3, flipped_at = ?4, cursor = ?5, updated_at = ?6 WHERE origin = ?1")
      .bind(origin, layout.settled, layout.target, layout.flippedAt, layout.cursor === null ? null : JSON.stringify(layout.cursor), now)
      .run();
  }
}
