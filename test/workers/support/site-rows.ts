/**
 * What every bound D1 database holds of one site: its rows in each table with an `origin` column
 * (read from each database's own schema, so a table added by a migration is counted without anyone
 * listing it), the syncs whose scope names it, what given syncs saw, and the mirrors it is remembered for.
 */
import { boundDatabases } from "../../../src/services.ts";

const databaseOf = (e: Env, name: string): D1Database => (e as unknown as Record<string, D1Database>)[name]!;

/** Every table of `db` with an `origin` column. */
async function tablesWithOrigin(db: D1Database): Promise<string[]> {
  // Each table's CREATE statement as SQLite keeps it (columns added later included); pragma functions are not allowed in D1.
  const { results } = await db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{ name: string; sql: string }>();
  return results.filter((r) => /(^|[(,])\s*origin\s+TEXT/im.test(r.sql)).map((r) => r.name);
}

/** `table` (or `binding.table`) → rows naming `origin` in the database bound as `binding`, only those with rows. */
export async function siteRowsIn(e: Env, binding: string, origin: string, syncIds: readonly string[] = []): Promise<Record<string, number>> {
  const db = databaseOf(e, binding);
  const out: Record<string, number> = {};
  const count = async (what: string, sql: string, ...params: unknown[]): Promise<void> => {
    const n =
      (await db
        .prepare(sql)
        .bind(...params)
        .first<number>("n")) ?? 0;
    if (n > 0) out[`${binding}.${what}`] = n;
  };
  for (const table of await tablesWithOrigin(db)) await count(table, `SELECT COUNT(*) AS n FROM ${table} WHERE origin = ?1`, origin);
  await count("syncs", "SELECT COUNT(*) AS n FROM syncs, json_each(syncs.scope, '$.sites') AS s WHERE s.value = ?1", origin);
  await count("sync_seen", "SELECT COUNT(*) AS n FROM sync_seen WHERE sync IN (SELECT value FROM json_each(?1))", JSON.stringify(syncIds));
  await count("mirrors", "SELECT COUNT(*) AS n FROM mirrors WHERE site = ?1", origin);
  return out;
}

/** The same over every D1 database `e` binds. */
export async function siteRowsEverywhere(e: Env, origin: string, syncIds: readonly string[] = []): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const binding of boundDatabases(e)) Object.assign(out, await siteRowsIn(e, binding, origin, syncIds));
  return out;
}
