/** The site registry in D1 (migrations/0022_site_registry.sql, 0026_registry_site_hosts.sql, src/registry/store.ts): one statement per method. */
import { siteHost } from "../../registry/own-host.ts";
import type { ListedSite, RegisteredSite, SiteRegistry, SiteSettings } from "../../registry/store.ts";

interface SiteRow {
  origin: string;
  settings: string;
  token_hash: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

const COLUMNS = "origin, settings, token_hash, created_at, updated_at, deleted_at";

/**
 * A row at the host ?1: its host, or a twin of it (`<host> <origin>`, migration 0027), found by one range of
 * the host's index (a space sorts just below `!`).
 */
const AT_HOST = "SELECT 1 FROM registry_sites WHERE host = ?1 OR (host >= ?1 || ' ' AND host < ?1 || '!') LIMIT 1";

/** The stored JSON object of settings; only string values are settings (anything else was never written here). */
function settingsOf(text: string): SiteSettings {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
  return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string"));
}

const siteOf = (r: SiteRow): RegisteredSite => ({
  origin: r.origin,
  settings: settingsOf(r.settings),
  tokenHash: r.token_hash,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

export class D1SiteRegistry implements SiteRegistry {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async live(): Promise<{ origin: string; updatedAt: number }[]> {
    const { results } = await this.#db
      .prepare("SELECT origin, updated_at AS updatedAt FROM registry_sites WHERE deleted_at IS NULL")
      .all<{ origin: string; updatedAt: number }>();
    return results;
  }

  async liveSites(settingsBytes: number): Promise<ListedSite[]> {
    // Large settings never leave the database here: at 20,000 sites of 16 KB each the rows alone would be 320 MB.
    const { results } = await this.#db
      .prepare(
        `SELECT origin, CASE WHEN length(CAST(settings AS BLOB)) <= ?1 THEN settings END AS settings, token_hash, created_at, updated_at, deleted_at
         FROM registry_sites WHERE deleted_at IS NULL`,
      )
      .bind(settingsBytes)
      .all<Omit<SiteRow, "settings"> & { settings: string | null }>();
    return results.map((r) => (r.settings === null ? { ...siteOf({ ...r, settings: "{}" }), settings: null } : siteOf({ ...r, settings: r.settings })));
  }

  async get(origin: string): Promise<RegisteredSite | null> {
    const r = await this.#db.prepare(`SELECT ${COLUMNS} FROM registry_sites WHERE origin = ?1`).bind(origin).first<SiteRow>();
    return r ? siteOf(r) : null;
  }

  async byTokenHash(tokenHash: string): Promise<string | null> {
    return this.#db.prepare("SELECT origin FROM registry_sites WHERE token_hash = ?1 AND deleted_at IS NULL").bind(tokenHash).first<string>("origin");
  }

  async create(site: RegisteredSite): Promise<boolean> {
    // One statement: D1 runs a database's statements one at a time, so of two concurrent registrations of one host
    // (another scheme or port) the second finds the first's row and inserts nothing; the host's UNIQUE index
    // (migration 0027) holds it whatever runs. A row's host `<host> <origin>` is a twin 0027 found sharing the
    // host with an earlier row: the host stays taken while it is left.
    const { meta } = await this.#db
      .prepare(
        `INSERT INTO registry_sites (${COLUMNS}, host)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE NOT EXISTS (${AT_HOST.replaceAll("?1", "?7")})
         ON CONFLICT DO NOTHING`,
      )
      .bind(site.origin, JSON.stringify(site.settings), site.tokenHash, site.createdAt, site.updatedAt, site.deletedAt, siteHost(site.origin))
      .run();
    return meta.changes > 0;
  }

  async atHost(host: string): Promise<RegisteredSite | null> {
    const r = await this.#db
      .prepare(AT_HOST.replace("SELECT 1", `SELECT ${COLUMNS}`))
      .bind(host)
      .first<SiteRow>();
    return r ? siteOf(r) : null;
  }

  async update(origin: string, settings: SiteSettings, now: number): Promise<RegisteredSite | null> {
    const r = await this.#db
      .prepare(`UPDATE registry_sites SET settings = ?2, updated_at = ?3 WHERE origin = ?1 AND deleted_at IS NULL RETURNING ${COLUMNS}`)
      .bind(origin, JSON.stringify(settings), now)
      .first<SiteRow>();
    return r ? siteOf(r) : null;
  }

  async rotateToken(origin: string, tokenHash: string, now: number): Promise<boolean> {
    // The update time moves too: each isolate's list of sites (src/registry/resolve.ts) then reads the record again.
    const { meta } = await this.#db
      .prepare("UPDATE registry_sites SET token_hash = ?2, updated_at = ?3 WHERE origin = ?1 AND deleted_at IS NULL")
      .bind(origin, tokenHash, now)
      .run();
    return meta.changes > 0;
  }

  async markDeleted(origin: string, now: number): Promise<boolean> {
    const { meta } = await this.#db.prepare("UPDATE registry_sites SET deleted_at = ?2 WHERE origin = ?1 AND deleted_at IS NULL").bind(origin, now).run();
    return meta.changes > 0;
  }

  async page(after: string | null, limit: number, contains: string | null, except: readonly string[] = []): Promise<RegisteredSite[]> {
    // Keyset paging by the primary key; `contains` filters the walk (instr: a plain substring, no LIKE patterns).
    const { results } = await this.#db
      .prepare(
        `SELECT ${COLUMNS} FROM registry_sites
         WHERE origin > ?1 AND deleted_at IS NULL AND (?3 IS NULL OR instr(origin, ?3) > 0)
           AND origin NOT IN (SELECT value FROM json_each(?4))
         ORDER BY origin LIMIT ?2`,
      )
      .bind(after ?? "", limit, contains, JSON.stringify(except))
      .all<SiteRow>();
    return results.map(siteOf);
  }

  async deleting(limit: number): Promise<string[]> {
    const { results } = await this.#db
      .prepare("SELECT origin FROM registry_sites WHERE deleted_at IS NOT NULL ORDER BY deleted_at, origin LIMIT ?1")
      .bind(limit)
      .all<{ origin: string }>();
    return results.map((r) => r.origin);
  }

  async remove(origin: string): Promise<void> {
    await this.#db.prepare("DELETE FROM registry_sites WHERE origin = ?1 AND deleted_at IS NOT NULL").bind(origin).run();
  }
}
