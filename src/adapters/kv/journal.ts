/**
 * The write-ahead journal of a site's KV writer (site-writer.ts), in the Durable Object's SQLite
 * storage: a batch is saved before its first KV read and cleared after its last write. A batch
 * still in the journal when the next one starts was interrupted (the object was reset, a KV write
 * failed, or the batch outlived its lease); the next writer replays it first. Replaying is safe:
 * the KV writer's write order makes a repeated batch finish what the first run left undone
 * (writer.ts), and the journal keeps the first run's change stamp, so no stamp moves twice.
 */
import type { SiteOp } from "./site-protocol.ts";

export interface JournalEntry {
  id: string;
  op: SiteOp;
  /** Replays tried so far. */
  tries: number;
}

/** SQLite rows stay well under the 2 MB row limit: ≤ 500,000 UTF-16 units is ≤ 1.5 MB of UTF-8. */
const PART_CHARS = 500_000;

export class Journal {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec(
      "CREATE TABLE IF NOT EXISTS journal (id TEXT NOT NULL, part INTEGER NOT NULL, tries INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (id, part))",
    );
  }

  /** Saves a batch; returns its id. */
  save(op: SiteOp): string {
    const id = crypto.randomUUID();
    const text = JSON.stringify(op);
    for (let part = 0; part * PART_CHARS < text.length; part++) {
      this.#sql.exec("INSERT INTO journal (id, part, tries, text) VALUES (?, ?, 0, ?)", id, part, text.slice(part * PART_CHARS, (part + 1) * PART_CHARS));
    }
    return id;
  }

  /** Batches saved and not cleared, oldest first (rowid is the insertion order). */
  pending(): JournalEntry[] {
    const byId = new Map<string, { tries: number; parts: string[] }>();
    for (const row of this.#sql.exec<{ id: string; tries: number; text: string }>("SELECT id, tries, text FROM journal ORDER BY rowid")) {
      const entry = byId.get(row.id) ?? { tries: row.tries, parts: [] };
      entry.parts.push(row.text);
      byId.set(row.id, entry);
    }
    return [...byId].map(([id, e]) => ({ id, tries: e.tries, op: JSON.parse(e.parts.join("")) as SiteOp }));
  }

  tried(id: string): void {
    this.#sql.exec("UPDATE journal SET tries = tries + 1 WHERE id = ?", id);
  }

  clear(id: string): void {
    this.#sql.exec("DELETE FROM journal WHERE id = ?", id);
  }
}
