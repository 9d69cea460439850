/** The layout of each partitioned site (src/partitions/layout.ts), in the site's first database. */

import { LayoutChangedError, type LayoutStore, type ManifestBuild, type MoveCursor, type PartitionLayout } from "../../partitions/layout.ts";

interface LayoutRow {
  version: number;
  settled: number;
  target: number;
  flipped_at: number | null;
  flipped_from: number | null;
  partitioned_at: number | null;
  cursor: string | null;
  purge_cursor: string | null;
  purged_at: number | null;
  catch_up: string | null;
}

const cursorOf = (text: string | null): MoveCursor | null => (text === null ? null : (JSON.parse(text) as MoveCursor));
const textOf = (cursor: MoveCursor | null): string | null => (cursor === null ? null : JSON.stringify(cursor));
/** Change numbers (migration 0023); a cursor saved as a stamp before them reads every change numbered since (0). */
const catchUpCursors = (text: string): number[] => (JSON.parse(text) as unknown[]).map((c) => (typeof c === "number" ? c : 0));

/** A compare-and-set save: moves the caller's copy on, or refuses a layout another save overtook. */
function changed(result: D1Result, origin: string, layout: PartitionLayout): void {
  if ((result.meta.changes ?? 0) === 0) {
    throw new LayoutChangedError(`the layout of ${origin} was saved by another step since this one read it (version ${layout.version}): this step stops`);
  }
  layout.version += 1;
}

export class D1LayoutStore implements LayoutStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async load(origin: string): Promise<PartitionLayout | null> {
    const row = await this.#db
      .prepare(
        "SELECT version, settled, target, flipped_at, flipped_from, partitioned_at, cursor, purge_cursor, purged_at, catch_up FROM partition_layouts WHERE origin = ?1",
      )
      .bind(origin)
      .first<LayoutRow>();
    return (
      row && {
        version: row.version,
        settled: row.settled,
        target: row.target,
        flippedAt: row.flipped_at,
        flippedFrom: row.flipped_from,
        partitionedAt: row.partitioned_at,
        cursor: cursorOf(row.cursor),
        purgeCursor: cursorOf(row.purge_cursor),
        purgedAt: row.purged_at,
        catchUp: row.catch_up === null ? null : catchUpCursors(row.catch_up),
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

  /** Compare-and-set on `layout.version`, which moves on with the row; LayoutChangedError when another save came first. */
  async save(origin: string, layout: PartitionLayout, now: number): Promise<void> {
    const result = await this.#db
      .prepare(
        `UPDATE partition_layouts SET settled = ?2, target = ?3, flipped_at = ?4, cursor = ?5, purge_cursor = ?6, purged_at = ?7, updated_at = ?8,
           flipped_from = ?10, catch_up = ?11, partitioned_at = ?12, version = version + 1
         WHERE origin = ?1 AND version = ?9`,
      )
      .bind(
        origin,
        layout.settled,
        layout.target,
        layout.flippedAt,
        textOf(layout.cursor),
        textOf(layout.purgeCursor),
        layout.purgedAt,
        now,
        layout.version,
        layout.flippedFrom ?? null,
        layout.catchUp === null ? null : JSON.stringify(layout.catchUp),
        layout.partitionedAt ?? null,
      )
      .run();
    changed(result, origin, layout);
  }

  async loadBuild(origin: string): Promise<ManifestBuild | null> {
    const row = await this.#db.prepare("SELECT build FROM partition_layouts WHERE origin = ?1").bind(origin).first<{ build: string | null }>();
    return row?.build ? (JSON.parse(row.build) as ManifestBuild) : null;
  }

  /** The build's plan and the layout's cursor, compare-and-set as `save`. */
  async saveBuild(origin: string, layout: PartitionLayout, build: ManifestBuild | null, now: number): Promise<void> {
    const result = await this.#db
      .prepare("UPDATE partition_layouts SET cursor = ?2, build = ?3, updated_at = ?4, version = version + 1 WHERE origin = ?1 AND version = ?5")
      .bind(origin, textOf(layout.cursor), build === null ? null : JSON.stringify(build), now, layout.version)
      .run();
    changed(result, origin, layout);
  }
}
