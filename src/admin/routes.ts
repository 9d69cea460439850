/**
 * Every admin route, defined once: method, path, parameters, bodies and answers. The handlers are
 * bound to these in src/admin/app.ts, and the OpenAPI document is generated from them.
 *
 * Batch bodies are described by reference, not by a zod schema: zod-openapi reads and validates a
 * JSON body described with zod itself, which would bypass the bounded streaming reader
 * (src/admin/body.ts: byte and record limits, line numbers, NDJSON). The reader reads them; the
 * core validator checks the records.
 */
import { createRoute } from "@hono/zod-openapi";
import {
  ApiErrorSchema,
  DeleteResultSchema,
  RegenerateQuerySchema,
  RegenerateQueuedSchema,
  SiteCreateSchema,
  SiteCreatedSchema,
  SiteDeletedSchema,
  SiteHostParamsSchema,
  SiteListQuerySchema,
  SiteListSchema,
  SiteSchema,
  SiteTokenSchema,
  SiteUpdateSchema,
  StatusSchema,
  StoredRecordSchema,
  SyncCommitBodySchema,
  SyncCommitSchema,
  SyncIdParamsSchema,
  SyncSchema,
  SyncStartSchema,
  UnauthorizedSchema,
  UpsertResultSchema,
  UrlQuerySchema,
} from "./schemas.ts";

/**
 * Who may call a route: its one declaration, carried by the OpenAPI document as `x-access`, from
 * which src/admin/app.ts wires the platform's guard and test/workers/authorization-matrix.test.ts
 * derives every route's expected answer to every credential (a route without it fails that test).
 * The admin's HTML pages carry the same declaration in src/admin/dashboard/routes.ts (`pageRoutes`).
 * - `public`: anyone, with no credential (this API's description; the stylesheet, the sign-in form);
 * - `site`: a credential of the request's own site — the platform's token, or the site's own token on
 *   its own host; a resource found by id (a sync) answers 404 unless it is that site's;
 * - `platform`: the platform's credential only, on the platform's hosts only (src/admin/sites.ts `platformOnly`).
 */
export type RouteAccess = "public" | "site" | "platform";
const access = (who: RouteAccess): RouteAccess => who;

const json = <T>(schema: T) => ({ "application/json": { schema } });
const error = (description: string) => ({ description, content: json(ApiErrorSchema) });
const ref = (component: string) => ({ $ref: `#/components/schemas/${component}` });

/** Every admin path answers these. */
const common = {
  401: {
    description: "missing or wrong bearer token",
    headers: { "WWW-Authenticate": { schema: { type: "string" as const } } },
    content: json(UnauthorizedSchema),
  },
  403: error(
    "signed in by the session cookie or a person's Access JWT, which read only the dashboard and status (writes need the bearer token or an Access service token), or a cross-site request (docs/dashboard.md)",
  ),
  404: { description: "no ADMIN_TOKEN is configured: the admin API does not exist (plain text)" },
  429: {
    description:
      'too many failed sign-ins from this client, or (`too_many_writes`, `too_many_reads`) a registered site\'s calls past its quota (120 writes, 300 reads a minute: docs/tenants.md "Quotas"): try again after Retry-After seconds',
    headers: { "Retry-After": { schema: { type: "string" as const } } },
    content: json(ApiErrorSchema),
  },
};

function batchBody(component: string, description: string) {
  return {
    required: true,
    description: `${description} At most ADMIN_MAX_RECORDS records and ADMIN_MAX_BYTES bytes per request (in force: the document's info).`,
    content: {
      "application/json": { schema: { type: "array" as const, items: ref(component) } },
      "application/x-ndjson": { schema: ref(component), description: "one JSON value per line; blank lines are skipped" },
    },
  };
}

/** A write the store could not take now, or a partitioned site's list that does not match its partitions (src/partitions/database-list.ts). */
const unavailable = error(
  "busy or unavailable: nothing written, send it again after Retry-After; database_list: the site's SITE_DATABASES list does not keep its partitions' databases in their places, and nothing is written until a deploy fixes it (docs/capacity.md \"The database list is checked\")",
);

const batchErrors = {
  400: error("malformed JSON or NDJSON (`line` names the line) or not UTF-8"),
  413: error("more records or bytes than the limits allow"),
  415: error("Content-Type is neither application/json nor application/x-ndjson"),
  422: error("one or more records are invalid; nothing was written"),
  500: error("the database write failed; nothing was written (safe to retry)"),
  503: unavailable,
};

export const putUrls = createRoute({
  method: "put",
  path: "/urls",
  "x-access": access("site"),
  summary: "Upsert a batch of URL records (validated as a whole, written atomically)",
  request: { body: batchBody("RecordInput", "Records to insert or update, keyed by loc.") },
  responses: { 200: { description: "written", content: json(UpsertResultSchema) }, ...common, ...batchErrors },
});

export const deleteUrls = createRoute({
  method: "delete",
  path: "/urls",
  "x-access": access("site"),
  summary: "Delete a batch of locs (tombstones, so regeneration and IndexNow see them)",
  request: { body: batchBody("DeleteItem", "Locs to delete.") },
  responses: { 200: { description: "deleted", content: json(DeleteResultSchema) }, ...common, ...batchErrors },
});

export const getUrl = createRoute({
  method: "get",
  path: "/urls",
  "x-access": access("site"),
  summary: "Read one record back",
  request: { query: UrlQuerySchema },
  responses: {
    200: { description: "the record", content: json(StoredRecordSchema) },
    ...common,
    400: error("loc parameter missing (or given twice)"),
    404: error("no such record (never stored, or deleted); without ADMIN_TOKEN, a plain-text 404"),
    422: error("loc is not a valid URL on a configured site"),
  },
});

export const getStatus = createRoute({
  method: "get",
  path: "/status",
  "x-access": access("site"),
  summary: "The site's manifest summary, regeneration progress, last runs and notification state",
  responses: { 200: { description: "status of the site the request was sent to", content: json(StatusSchema) }, ...common },
});

export const postRegenerate = createRoute({
  method: "post",
  path: "/regenerate",
  "x-access": access("site"),
  summary: "Queue a regeneration of the site now; it continues by itself until the site converged (docs/jobs.md)",
  request: { query: RegenerateQuerySchema },
  responses: {
    202: { description: "the job is queued, or taken by a regeneration already pending or running (`coalesced`)", content: json(RegenerateQueuedSchema) },
    ...common,
    429: {
      description:
        "too many failed sign-ins from this client; or (`cooldown`) the dashboard's button again within 5 minutes of the site's last one (its form is answered with a 303 back to the dashboard)",
      headers: { "Retry-After": { schema: { type: "string" as const } } },
      content: json(ApiErrorSchema),
    },
    500: error("the job could not be queued"),
    503: error("regeneration needs the DB (D1) and SNAPSHOTS (KV) bindings and the JOBS queue"),
  },
});

export const getOpenApi = createRoute({
  method: "get",
  path: "/openapi.json",
  "x-access": access("public"),
  summary: "This document",
  responses: { 200: { description: "the admin API as OpenAPI 3.1", content: json({ type: "object" as const }) }, ...common },
});

const syncErrors = {
  404: error("no such sync (never started, or expired and swept)"),
  501: error("the record source has no full sync (URL_SOURCE=kv)"),
};

export const postSync = createRoute({
  method: "post",
  path: "/syncs",
  "x-access": access("site"),
  summary: "Start a full sync: a scope (sites, optionally one section) to be made equal to the batches sent under it",
  request: { body: { required: true, content: json(SyncStartSchema) } },
  responses: {
    201: { description: "the open sync", content: json(SyncSchema) },
    ...common,
    400: error("malformed body"),
    422: error("a site is not configured"),
    429: error("the site has MAX_OPEN_SYNCS_PER_SITE (10) open syncs already"),
    501: syncErrors[501],
    503: unavailable,
  },
});

export const getSync = createRoute({
  method: "get",
  path: "/syncs/{id}",
  "x-access": access("site"),
  summary: "A sync's state and counts",
  request: { params: SyncIdParamsSchema },
  responses: { 200: { description: "the sync", content: json(SyncSchema) }, ...common, ...syncErrors },
});

export const putSyncUrls = createRoute({
  method: "put",
  path: "/syncs/{id}/urls",
  "x-access": access("site"),
  summary: "Upsert a batch under a sync (as PUT /urls); its records count as seen",
  request: { params: SyncIdParamsSchema, body: batchBody("RecordInput", "Records of the sync's input.") },
  responses: {
    200: { description: "written", content: json(UpsertResultSchema) },
    ...common,
    ...batchErrors,
    ...syncErrors,
    409: error("the sync is not open (committing, committed or aborted)"),
    422: error("one or more records are invalid or outside the sync's scope (rule `scope`); nothing was written"),
  },
});

export const postSyncCommit = createRoute({
  method: "post",
  path: "/syncs/{id}/commit",
  "x-access": access("site"),
  summary: "Commit: delete (as tombstones) the scope's records the sync did not see; resumable and idempotent",
  request: { params: SyncIdParamsSchema, body: { required: false, content: json(SyncCommitBodySchema) } },
  responses: {
    200: { description: "committed", content: json(SyncCommitSchema) },
    202: { description: "partly done (per-request budget): commit again", content: json(SyncCommitSchema) },
    ...common,
    ...syncErrors,
    409: error("delete_guard: the commit would delete more than the guard allows (nothing deleted, the sync stays open); sync_not_open: aborted"),
    422: error("empty_sync: the sync received no record, so nothing is deleted"),
    503: unavailable,
  },
});

export const deleteSync = createRoute({
  method: "delete",
  path: "/syncs/{id}",
  "x-access": access("site"),
  summary: "Abort an open sync: nothing is deleted",
  request: { params: SyncIdParamsSchema },
  responses: {
    200: { description: "the aborted sync", content: json(SyncSchema) },
    ...common,
    ...syncErrors,
    409: error("the sync is committing or committed"),
    503: unavailable,
  },
});

// The platform API (docs/tenants.md "The platform API"): the registry of sites, for the platform credential alone.

const platformErrors = {
  ...common,
  403: error(
    "not the platform credential: only the ADMIN_TOKEN bearer or an Access service token manage sites (a site's own token, the session cookie or a person's Access JWT do not), or a cross-site request",
  ),
  503: error("the registry needs the DB (D1) binding"),
};
const unknownSite = error("no live registered site at this host (never registered, or deleted)");
const sitesSite = error("configured_by_sites: SITES serves this origin (the variables win for the sites they name): not read, changed nor deleted here");

export const postSite = createRoute({
  method: "post",
  path: "/sites",
  "x-access": access("platform"),
  summary: "Register a site: it serves (an empty index until records come) within MANIFEST_CACHE_TTL, no deploy",
  request: { body: { required: true, content: json(SiteCreateSchema) } },
  responses: {
    201: { description: "registered; `token` is the site's admin token, shown this once", content: json(SiteCreatedSchema) },
    ...platformErrors,
    400: error(
      "invalid_body: malformed JSON or a body that breaks its schema; invalid_origin: not exactly an origin, or not https (http only for loopback, localhost, *.localhost, *.test); invalid_settings: `problems` names each setting and its rule (an unknown name, a value its variable refuses, a DATABASE not bound)",
    ),
    409: error(
      "site_exists: the origin (or its host under another scheme or port) is registered, or being deleted; or SITES serves its host (the variables win for the sites they name)",
    ),
    415: error("the body is not sent as application/json"),
  },
});

export const listSites = createRoute({
  method: "get",
  path: "/sites",
  "x-access": access("platform"),
  summary: "Registered live sites in origin order, a page at a time (sites configured by SITES are not listed)",
  request: { query: SiteListQuerySchema },
  responses: { 200: { description: "a page of sites", content: json(SiteListSchema) }, ...platformErrors, 400: error("bad query parameters") },
});

export const getSite = createRoute({
  method: "get",
  path: "/sites/{host}",
  "x-access": access("platform"),
  summary: "One registered site (never its token)",
  request: { params: SiteHostParamsSchema },
  responses: { 200: { description: "the site", content: json(SiteSchema) }, ...platformErrors, 404: unknownSite, 409: sitesSite },
});

export const patchSite = createRoute({
  method: "patch",
  path: "/sites/{host}",
  "x-access": access("platform"),
  summary: "Replace a site's settings whole (validated as on registration)",
  request: { params: SiteHostParamsSchema, body: { required: true, content: json(SiteUpdateSchema) } },
  responses: {
    200: { description: "the site with its new settings", content: json(SiteSchema) },
    ...platformErrors,
    400: error("invalid_body, or invalid_settings (`problems` names each setting and its rule)"),
    404: unknownSite,
    409: error(
      "configured_by_sites: SITES serves this origin; database_in_use: DATABASE changed while the database it leaves holds the site's records, a sync under way or snapshots to collect (nothing changed), or while its state there is still being deleted (send it again)",
    ),
    415: error("the body is not sent as application/json"),
  },
});

export const postSiteToken = createRoute({
  method: "post",
  path: "/sites/{host}/token",
  "x-access": access("platform"),
  summary: "Rotate a site's admin token: a new one, shown once; the previous one stops working",
  request: { params: SiteHostParamsSchema },
  responses: { 200: { description: "the new token", content: json(SiteTokenSchema) }, ...platformErrors, 404: unknownSite, 409: sitesSite },
});

export const deleteSite = createRoute({
  method: "delete",
  path: "/sites/{host}",
  "x-access": access("platform"),
  summary: "Delete a site: it stops serving at once; its records, snapshots and state are removed by bounded jobs",
  request: { params: SiteHostParamsSchema },
  responses: {
    202: { description: "marked deleted; the purge is queued", content: json(SiteDeletedSchema) },
    ...platformErrors,
    404: unknownSite,
    409: sitesSite,
  },
});
