/**
 * A write's check at its commit (issue 50): the site middleware resolves the site once, before the
 * body is read, and a body may stream for as long as its client likes, longer than the purge waits
 * after a DELETE. So once the body is read, right before the commit, the registry row is read again
 * (one query): a site deleted meanwhile, or moved to another database by a PATCH of DATABASE, takes
 * no write (409), so nothing lands after its purge nor in a database its settings no longer name.
 */
import type { Context } from "hono";
import { loadConfig } from "../config.ts";
import type { AppEnv } from "../http/app-env.ts";
import { DATABASE_SETTING } from "../registry/settings.ts";
import { registryResolver, siteRegistry } from "../services.ts";
import { AdminError } from "./errors.ts";

const databaseOf = (settings: Record<string, unknown>): unknown => settings[DATABASE_SETTING] ?? "DB";

/** The database the request's services were wired to (from the resolver's record, no query); null for a site of the variables. */
export async function servedDatabase(c: Context<AppEnv>): Promise<unknown> {
  if (loadConfig(c.env).sites.has(c.var.origin)) return null;
  const site = await registryResolver(c.env)?.resolve(c.var.origin, Date.now(), () => undefined);
  return site ? databaseOf(site.settings) : null;
}

/** Throws 409 when the registered site is no longer live, or its records moved from `database`. */
export async function confirmStillRegistered(c: Context<AppEnv>, database: unknown): Promise<void> {
  if (database === null) return;
  const row = await siteRegistry(c.env)?.get(c.var.origin);
  if (!row || row.deletedAt !== null) {
    c.set("siteGone", true);
    throw new AdminError(409, { error: "site_deleted", message: `${c.var.origin} was deleted while this request was read: nothing was written` });
  }
  if (databaseOf(row.settings) !== database) {
    throw new AdminError(409, {
      error: "database_changed",
      message: `${c.var.origin} moved to another DATABASE while this request was read: nothing was written, send it again`,
    });
  }
}
