/** What the local D1 holds, read from outside the Worker (`wrangler d1 execute`). */
import { createHash } from "node:crypto";
import type { DevServer } from "./dev-server.ts";

export interface LiveRecord {
  id: number;
  loc: string;
  lastmod: string | null;
  section: string;
  ext_kinds: number;
  updated_at: number;
  /** news publication date, when the record has news data. */
  pub: string | null;
}

const quote = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** Every live (not deleted) record of the site. */
function liveRecords(server: DevServer): Promise<LiveRecord[]> {
  return server.query<LiveRecord>(
    `SELECT id, loc, lastmod, section, ext_kinds, updated_at, json_extract(ext, '$.news.publication_date') AS pub
       FROM urls WHERE deleted = 0 AND origin = ${quote(server.origin)} ORDER BY id`,
  );
}

/**
 * The site's live records, kept up to date cheaply: one full read (~126,000 rows through
 * `wrangler d1 execute` takes seconds), then only the rows whose change stamp moved since the last
 * read (with a margin), tombstones included. Every answer still comes from the database.
 */
export class DbMirror {
  readonly #server: DevServer;
  readonly #rows = new Map<number, LiveRecord>();
  #readAt: number | null = null;

  constructor(server: DevServer) {
    this.#server = server;
  }

  async records(): Promise<LiveRecord[]> {
    const startedAt = Date.now();
    if (this.#readAt === null) {
      for (const row of await liveRecords(this.#server)) this.#rows.set(row.id, row);
    } else {
      const since = this.#readAt - 10_000;
      const rows = await this.#server.query<LiveRecord & { deleted: number }>(
        `SELECT id, loc, lastmod, section, ext_kinds, updated_at, deleted, json_extract(ext, '$.news.publication_date') AS pub
           FROM urls WHERE origin = ${quote(this.#server.origin)} AND updated_at >= ${since}`,
      );
      for (const { deleted, ...row } of rows) {
        if (deleted) this.#rows.delete(row.id);
        else this.#rows.set(row.id, row);
      }
    }
    this.#readAt = startedAt;
    return [...this.#rows.values()].sort((a, b) => a.id - b.id);
  }
}

/** The feed's expectation: the `size` most recently changed live records, newest first. */
export function newestChanged(records: readonly LiveRecord[], size: number): LiveRecord[] {
  return [...records].sort((a, b) => b.updated_at - a.updated_at || b.id - a.id).slice(0, size);
}

/** Articles in the news window (published in the last 2 days, not in the future). */
export function inNewsWindow(records: readonly LiveRecord[], now = Date.now()): LiveRecord[] {
  return records.filter((r) => r.pub !== null && Date.parse(r.pub) <= now && Date.parse(r.pub) >= now - 2 * 86_400_000);
}

/** A checksum of every record row (all columns, tombstones included) and the row count. */
export async function recordsChecksum(server: DevServer): Promise<{ rows: number; sha256: string }> {
  const rows = await server.query<Record<string, unknown>>(
    "SELECT id, origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at, deleted FROM urls ORDER BY id",
  );
  const hash = createHash("sha256");
  for (const row of rows) hash.update(JSON.stringify(row)).update("\n");
  return { rows: rows.length, sha256: hash.digest("hex") };
}

export { quote as sqlQuote };
