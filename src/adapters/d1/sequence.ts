/**
 * A database's commit-ordered change feed (migration 0023: `urls.seq`, numbered by trigger in the
 * change's own transaction, so `seq` order is commit order): its queries, written once, for the
 * move's catch-up (row-copy.ts) and for the regeneration's and notifications' feed (change-feed.ts).
 */

/** The database's last committed change number: a read from it on sees every later commit. */
export async function sequenceHead(db: D1Database): Promise<number> {
  const row = await db.prepare("SELECT head FROM url_sequence WHERE id = 1").first<{ head: number }>();
  return row?.head ?? 0;
}

/**
 * `columns` of a site's rows changed after change number ?2, in commit order, ?3 at most (bind
 * origin, after, limit): a range of urls_site_seq, rows read = rows returned.
 */
export const changesAfterStatement = (db: D1Database, columns: string): D1PreparedStatement =>
  db.prepare(`SELECT ${columns} FROM urls WHERE origin = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3`);
