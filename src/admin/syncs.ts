/**
 * `/sitemap-admin/syncs`: full sync as a resource (docs/sync.md). Start one for a scope, send the
 * whole input under it in batches, commit (the scope's records the sync did not see become
 * tombstones), or abort. Nothing is deleted before the commit.
 */
import type { RouteHandler } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { normalizeOrigin } from "../core/url.ts";
import type { ValidRecord } from "../core/validate.ts";
import type { AppEnv } from "../http/app-env.ts";
import { publishWrites } from "../jobs/writes.ts";
import { shownSource } from "../mirror/failure.ts";
import { SyncEmptyError, SyncGuardError, SyncNotFoundError, SyncQuotaError, SyncScopeError, SyncStateError } from "../store/errors.ts";
import type { RecordSync, SyncInfo } from "../store/port.ts";
import { AdminError, validationFailed } from "./errors.ts";
import { jsonResponse } from "./json.ts";
import type { deleteSync, getSync, postSync, postSyncCommit, putSyncUrls } from "./routes.ts";
import { DEFAULT_MAX_DELETE, type SyncBody, SyncIdParamsSchema } from "./schemas.ts";
import { readValidBatch, written } from "./urls.ts";

/**
 * Open (or committing) syncs a site may have at once. A full sync is one per section or per feed, run
 * one after the other; each open one keeps what it saw in the shared database until it commits or
 * expires (SYNC_TTL_SECONDS). Ten leave room for a site's sections and a crashed client's leftovers,
 * and keep one tenant from filling a shared database with abandoned syncs.
 */
export const MAX_OPEN_SYNCS_PER_SITE = 10;

/** Commit chunks (≤ 1,000 records examined each) per request; a larger commit answers 202 and is called again. */
const COMMIT_CHUNKS_PER_REQUEST = 40;

type Ctx = Context<AppEnv>;

function syncOf(c: Ctx): RecordSync {
  const sync = c.var.services.store.sync;
  if (sync === null) throw new AdminError(501, { error: "not_supported", message: "full sync needs the D1 record source (URL_SOURCE=d1)" });
  return sync;
}

function syncBody(info: SyncInfo): SyncBody {
  return {
    id: info.id,
    state: info.state,
    sites: [...info.scope.sites],
    section: info.scope.section,
    source: shownSource(info.scope.source),
    maxDelete: info.maxDelete,
    startedAt: new Date(info.startedAt).toISOString(),
    expiresAt: new Date(info.expiresAt).toISOString(),
    received: info.received,
    inserted: info.inserted,
    updated: info.updated,
    unchanged: info.unchanged,
    deleted: info.deleted,
  };
}

/** Sync errors as answers (`records`: the batch, for out-of-scope issues); anything else propagates. */
async function answered<T>(work: Promise<T>, records: readonly ValidRecord[] = []): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof SyncScopeError) {
      const message = err.message;
      const issues = err.indexes.map((index) => ({ index, loc: records[index]?.loc ?? "", field: "loc", rule: "scope" as const, message }));
      throw validationFailed(issues, "nothing was written");
    }
    if (err instanceof SyncNotFoundError) throw new AdminError(404, { error: "not_found", message: err.message });
    if (err instanceof SyncQuotaError) {
      throw new AdminError(429, {
        error: "too_many_syncs",
        message: `${err.message} (${MAX_OPEN_SYNCS_PER_SITE}): commit or abort one, or let it expire`,
      });
    }
    if (err instanceof SyncStateError) throw new AdminError(409, { error: "sync_not_open", message: err.message });
    if (err instanceof SyncEmptyError) throw new AdminError(422, { error: "empty_sync", message: err.message });
    if (err instanceof SyncGuardError) {
      throw new AdminError(409, {
        error: "delete_guard",
        message: err.message,
        wouldDelete: err.wouldDelete,
        inScope: err.inScope,
        maxDelete: err.maxDelete,
      });
    }
    throw err;
  }
}

/** An origin this host does not serve is another site's (or none): a scope naming it is not this credential's to start. */
function refuseOthers(c: Context<AppEnv>, raw: string, origin: string): void {
  if (!c.var.services.config.sites.has(origin)) {
    throw new AdminError(403, { error: "forbidden", message: `${raw.slice(0, 200)} is not a site of this host: a sync covers this host's sites only` });
  }
}

/**
 * Before the route's validator: a start whose scope names another site is refused as such (403) whatever
 * else its body breaks, so the schema's 400 never answers for another site's sync. Reads only `sites`;
 * a body that is not JSON, or entries that are not origins, are left to the validator and the handler.
 */
export const syncScopeOwnership: MiddlewareHandler<AppEnv> = async (c, next) => {
  const body: unknown = await c.req.json().catch(() => null);
  const sites = typeof body === "object" && body !== null ? (body as { sites?: unknown }).sites : undefined;
  if (Array.isArray(sites)) {
    for (const raw of sites) {
      const origin = typeof raw === "string" ? normalizeOrigin(raw) : null;
      if (origin !== null) refuseOthers(c, raw as string, origin);
    }
  }
  await next();
};

export const startSync: RouteHandler<typeof postSync, AppEnv> = async (c) => {
  const sync = syncOf(c);
  const body = c.req.valid("json");
  const { config } = c.var.services;
  const sites: string[] = [];
  for (const raw of body.sites) {
    const origin = normalizeOrigin(raw);
    if (origin === null) throw new AdminError(422, { error: "validation_failed", message: `${raw.slice(0, 200)} is not an origin` });
    refuseOthers(c, raw, origin);
    if (!sites.includes(origin)) sites.push(origin);
  }
  for (const origin of sites) {
    const open = (await sync.active(origin)).length;
    if (open >= MAX_OPEN_SYNCS_PER_SITE) {
      throw new AdminError(429, {
        error: "too_many_syncs",
        message: `${origin} has ${open} open syncs, the most a site may have (${MAX_OPEN_SYNCS_PER_SITE}): commit or abort one (DELETE /sitemap-admin/syncs/{id}), or let it expire`,
      });
    }
  }
  const info = await answered(
    sync.start(
      { sites, section: body.section ?? null, source: null },
      { maxDelete: body.maxDelete ?? DEFAULT_MAX_DELETE, ttlMs: config.syncTtlMs, maxOpenPerSite: MAX_OPEN_SYNCS_PER_SITE },
    ),
  );
  return jsonResponse(syncBody(info), 201);
};

/**
 * The sync named by id, if it belongs to the sites this request's host serves (every site of its
 * scope is one of them), else null: a sync id found in a shared database is no way into another
 * tenant's sync. Answered as if it did not exist (404), so an id reveals nothing.
 */
async function ownSync(c: Ctx, sync: RecordSync, id: string): Promise<SyncInfo | null> {
  const info = readBefore.has(c.req.raw) ? (readBefore.get(c.req.raw) ?? null) : await sync.get(id);
  return info !== null && owned(c, info) ? info : null;
}

/** Whether every site of the sync's scope is one this request's host serves. */
const owned = (c: Ctx, info: SyncInfo): boolean => info.scope.sites.every((origin) => c.var.services.config.sites.has(origin));

/** The sync `syncOwnership` read for a request (null: none found), so that its handler reads it once. */
const readBefore = new WeakMap<Request, SyncInfo | null>();

/**
 * Runs before a sync route's validators (src/admin/app.ts): another site's sync is 404 whatever the
 * request's body or query, so a malformed body tells nothing of it either. A missing one is left to
 * the handler (whose own answer says why: not found, or a database list that no longer matches: 503);
 * an unparsable id is the validator's.
 */
export const syncOwnership: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = c.req.param("id");
  const sync = c.var.services.store.sync;
  if (id !== undefined && SyncIdParamsSchema.shape.id.safeParse(id).success && sync !== null) {
    const info = await sync.get(id);
    if (info !== null && !owned(c, info)) throw notFound(id);
    readBefore.set(c.req.raw, info);
  }
  await next();
};

const notFound = (id: string) => new AdminError(404, { error: "not_found", message: `no sync ${id} (never started, or expired and swept)` });

export const readSync: RouteHandler<typeof getSync, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const info = await ownSync(c, syncOf(c), id);
  if (info === null) throw notFound(id);
  return jsonResponse(syncBody(info), 200);
};

export const upsertSyncUrls: RouteHandler<typeof putSyncUrls, AppEnv> = async (c) => {
  const sync = syncOf(c);
  const { id } = c.req.valid("param");
  // Before reading the body: a batch for a sync that cannot take it costs no parsing.
  const info = await ownSync(c, sync, id);
  if (info === null) throw notFound(id);
  if (info.state !== "open") throw new AdminError(409, { error: "sync_not_open", message: `sync ${id} is ${info.state}, not open` });
  const records = await readValidBatch(c, "nothing was written");
  const s = await written(answered(sync.upsert(id, records), records));
  await publishWrites(
    c.var.services,
    records.map((r) => r.origin),
  );
  return jsonResponse({ received: records.length, inserted: s.inserted, updated: s.updated, unchanged: s.unchanged }, 200);
};

export const commitSync: RouteHandler<typeof postSyncCommit, AppEnv> = async (c) => {
  const sync = syncOf(c);
  const { id } = c.req.valid("param");
  // The body is optional: without a JSON Content-Type it is not read, and the sync's own guard applies.
  const { maxDelete } = c.req.valid("json") ?? {};
  // Another site's sync was answered 404 before the body was read (`syncOwnership`).
  const result = await answered(sync.commit(id, { ...(maxDelete === undefined ? {} : { maxDelete }), maxChunks: COMMIT_CHUNKS_PER_REQUEST }));
  await publishWrites(c.var.services, result.sync.scope.sites);
  return jsonResponse({ ...syncBody(result.sync), done: result.done }, result.done ? 200 : 202);
};

export const abortSync: RouteHandler<typeof deleteSync, AppEnv> = async (c) => {
  const sync = syncOf(c);
  const { id } = c.req.valid("param");
  // Another site's sync was answered 404 before this (`syncOwnership`).
  const info = await answered(sync.abort(id));
  return jsonResponse(syncBody(info), 200);
};

/** Open or committing syncs whose scope includes `origin` (the status endpoint). */
export async function syncStatus(sync: RecordSync | null, origin: string): Promise<SyncBody[]> {
  if (sync === null) return [];
  return (await sync.active(origin)).map(syncBody);
}
