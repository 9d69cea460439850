/**
 * Request and response schemas of the admin API, and its one JSON error shape:
 *
 *   { "error": "<code>", "message": "<human text>", "line"?, "issues"?, "issueCount"?, "limits"? }
 *
 * Records themselves are checked by the core validator (src/core/validate.ts), which names the
 * rule each field broke; these schemas check the query parameters and describe the API: each
 * named one (`.openapi("Name")`) is a component of the OpenAPI document (src/admin/routes.ts).
 */
import { z } from "@hono/zod-openapi";
import { CHANGEFREQS } from "../core/types.ts";

const ERROR_CODES = [
  "unauthorized",
  "invalid_body",
  "invalid_query",
  "unsupported_media_type",
  "payload_too_large",
  "validation_failed",
  "not_found",
  "write_failed",
  "busy",
  "unavailable",
  "regeneration_failed",
  "not_supported",
  "sync_not_open",
  "delete_guard",
  "empty_sync",
  "forbidden",
  "too_many_failures",
  "database_list",
  "database_in_use",
  "cooldown",
  "invalid_origin",
  "invalid_settings",
  "site_exists",
  "configured_by_sites",
  "too_many_syncs",
  "too_many_writes",
  "too_many_reads",
  "site_deleted",
  "database_changed",
] as const;

/** At most this many issues are listed in one 422 response; `issueCount` always has the total. */
export const MAX_LISTED_ISSUES = 1_000;

const IssueSchema = z
  .object({
    index: z.number().int().nonnegative().optional().describe("0-based position of the record in the request body"),
    line: z.number().int().positive().optional().describe("1-based line of the request body where the record starts"),
    loc: z.string().optional().describe("the record's loc as given (cut after 2,111 characters)"),
    field: z.string().describe("the field that broke a rule (`record` for the record itself)"),
    rule: z.string().describe("stable rule identifier, e.g. `site`, `priority-range`, `duplicate-loc`"),
    message: z.string(),
  })
  .openapi("Issue");
export type Issue = z.infer<typeof IssueSchema>;

const LimitsSchema = z.object({ maxRecords: z.number().int().positive(), maxBytes: z.number().int().positive() }).openapi("Limits");
export type Limits = z.infer<typeof LimitsSchema>;

export const ApiErrorSchema = z
  .object({
    error: z.enum(ERROR_CODES),
    message: z.string(),
    line: z.number().int().positive().optional().describe("body line where parsing failed (400 invalid_body)"),
    issues: z.array(IssueSchema).optional().describe(`each problem found, at most ${MAX_LISTED_ISSUES}`),
    issueCount: z.number().int().nonnegative().optional().describe("total number of issues, listed or not"),
    limits: LimitsSchema.optional().describe("the limits in force (413)"),
    wouldDelete: z.number().int().optional().describe("records the commit would delete (409 delete_guard)"),
    inScope: z.number().int().optional().describe("live records in the sync's scope (409 delete_guard)"),
    maxDelete: z.number().optional().describe("the guard's share in force (409 delete_guard)"),
    problems: z
      .array(z.object({ setting: z.string(), rule: z.string() }))
      .optional()
      .describe("each setting refused and the rule it broke, never its value (400 invalid_settings)"),
  })
  .openapi("Error");
export type ApiError = z.infer<typeof ApiErrorSchema>;

/** The 401 answer says nothing more than this. */
export const UnauthorizedSchema = z.strictObject({ error: z.literal("unauthorized") }).openapi("Unauthorized");
export type UnauthorizedBody = z.infer<typeof UnauthorizedSchema>;

export const DeleteItemSchema = z
  .union([z.string(), z.looseObject({ loc: z.string() })])
  .describe("a loc string, or an object whose `loc` is used (other fields are ignored)");

export const UpsertResultSchema = z
  .strictObject({
    received: z.number().int().nonnegative(),
    inserted: z.number().int().nonnegative().describe("new locs, and deleted locs brought back"),
    updated: z.number().int().nonnegative().describe("existing records whose content changed"),
    unchanged: z.number().int().nonnegative().describe("records sent with identical content: nothing written"),
  })
  .openapi("UpsertResult");

export const DeleteResultSchema = z
  .strictObject({
    received: z.number().int().nonnegative(),
    deleted: z.number().int().nonnegative().describe("records now tombstoned"),
    alreadyDeleted: z.number().int().nonnegative(),
    notFound: z.number().int().nonnegative(),
  })
  .openapi("DeleteResult");

export const StoredRecordSchema = z
  .strictObject({
    key: z.number().int().describe("stable key of the loc (never changes)"),
    loc: z.string(),
    origin: z.string(),
    section: z.string(),
    lastmod: z.string().nullable(),
    changefreq: z.enum(CHANGEFREQS).nullable(),
    priority: z.number().nullable(),
    ext: z.record(z.string(), z.unknown()).optional(),
    updatedAt: z.string().describe("change stamp: last real change, ISO 8601"),
  })
  .openapi("StoredRecord");
export type StoredRecordBody = z.infer<typeof StoredRecordSchema>;

export const UrlQuerySchema = z.object({
  loc: z
    .string({ error: "query parameter loc is required (one absolute URL)" })
    .min(1, "query parameter loc must not be empty")
    .openapi({ description: "one absolute URL, normalised like stored locs" }),
});

export const RegenerateQuerySchema = z.object({
  full: z.string().optional().openapi({ description: "`1` or `true`: re-render every shard (after changing render options, say)" }),
});

export const RegenerateQueuedSchema = z
  .object({
    queued: z.literal(true),
    site: z.string(),
    full: z.boolean(),
    coalesced: z
      .boolean()
      .describe(
        "a regeneration already pending or running takes this request (no second chain; with full=1 while a site pass is under way, no second pass)",
      ),
    status: z.string().describe("where the run's summary shows once it ran: GET /sitemap-admin/status (`runs`)"),
  })
  .describe("the regeneration job was put on the JOBS queue; it continues by itself until the site converged")
  .openapi("RegenerateQueued");

/** The largest share of a scope a sync may delete unless the request says otherwise. */
export const DEFAULT_MAX_DELETE = 0.5;

const MaxDeleteSchema = z
  .number()
  .min(0)
  .max(1)
  .openapi({ description: `the guard: the largest share (0–1) of the scope's live records the commit may delete (default ${DEFAULT_MAX_DELETE})` });

export const SyncStartSchema = z
  .strictObject({
    sites: z.array(z.string()).min(1).max(100).openapi({ description: "the scope's sites (configured origins): the sites of the input" }),
    section: z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$/)
      .optional()
      .openapi({ description: "narrow the scope to one section; records naming no section go into it" }),
    maxDelete: MaxDeleteSchema.optional(),
  })
  .openapi("SyncStart");

export const SyncCommitBodySchema = z.strictObject({ maxDelete: MaxDeleteSchema.optional() }).openapi("SyncCommitRequest");

export const SyncIdParamsSchema = z.object({
  // A partitioned site's sync joins one id per partition (src/partitions/sync.ts): 64 of 36 characters and their dots.
  id: z
    .string()
    .min(1)
    .max(64 * 37)
    .openapi({ param: { name: "id", in: "path" } }),
});

export const SyncSchema = z
  .strictObject({
    id: z.string(),
    state: z.enum(["open", "committing", "committed", "aborted"]),
    sites: z.array(z.string()),
    section: z.string().nullable(),
    source: z.string().nullable().describe("null: any source; `mirror:<url>`: only what that mirror brought in"),
    maxDelete: z.number(),
    startedAt: z.string(),
    expiresAt: z.string().describe("an open sync idle until then is abandoned (nothing deleted)"),
    received: z.number().int(),
    inserted: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    deleted: z.number().int().describe("records of the scope tombstoned by the commit so far"),
  })
  .openapi("Sync");
export type SyncBody = z.infer<typeof SyncSchema>;

export const SyncCommitSchema = SyncSchema.extend({
  done: z.boolean().describe("false: the commit stopped at its per-request budget; commit again to go on"),
}).openapi("SyncCommit");

export const StatusSchema = z
  .looseObject({
    site: z.string(),
    configuration: z
      .object({
        ok: z.boolean(),
        disabled: z.array(z.object({ feature: z.string(), variable: z.string(), rule: z.string() })),
      })
      .describe("optional features turned off by a bad variable: the variable and its rule, never the value"),
    manifest: z.looseObject({ version: z.string(), builtAt: z.string(), shards: z.number().int(), urls: z.number().int() }).nullable(),
    regeneration: z.looseObject({ enabled: z.boolean(), running: z.boolean(), pendingShards: z.number().int() }),
    runs: z.array(z.looseObject({ id: z.number(), ok: z.boolean() })).describe("the last runs, newest first, each with its summary"),
    notifications: z.unknown().describe("per notification target: last attempt, last success, HTTP status, pending"),
    syncs: z.array(SyncSchema).describe("open or committing syncs whose scope includes this site"),
    mirrors: z
      .array(z.looseObject({ url: z.string(), state: z.string(), lastError: z.string().nullable() }))
      .describe("each MIRROR_SITEMAPS URL: state, position of the pass under way, last check, last sync, last error, counts"),
    robots: z
      .object({
        originUrl: z.string().nullable(),
        loop: z.enum(["none", "seen", "unknown"]),
        loopLastSeenAt: z.string().nullable(),
        problem: z.string().nullable(),
      })
      .describe("where robots.txt is fetched from (no query), and a fetch that loops back into this Worker: a configuration problem"),
  })
  .openapi("Status");

// The platform API (docs/tenants.md "The platform API"): registered sites.

/** A per-site setting's name and value, as the variable of that name would be written (src/registry/settings.ts). */
const SiteSettingsSchema = z
  .record(z.string().max(64), z.string().max(16_384))
  .refine((settings) => Object.keys(settings).length <= 64, { message: "at most 64 settings" })
  .openapi({
    description: "per-site variables (DEFAULT_SECTION, SECTION_RULES, MIRROR_SITEMAPS, …) and DATABASE, each as the variable would be written",
    example: { DEFAULT_SECTION: "pages" },
  });

export const SiteCreateSchema = z
  .strictObject({
    origin: z.string().min(1).max(300).openapi({
      description: "scheme://host[:port] and nothing else; https, or http for loopback, localhost, *.localhost and *.test hosts",
      example: "https://shop.example",
    }),
    settings: SiteSettingsSchema.optional(),
  })
  .openapi("SiteCreate");

export const SiteUpdateSchema = z.strictObject({ settings: SiteSettingsSchema.describe("replaces the site's settings whole") }).openapi("SiteUpdate");

export const SiteSchema = z
  .strictObject({
    origin: z.string(),
    host: z.string().describe("URL.host of the origin: the `{host}` of /sitemap-admin/sites/{host}"),
    settings: z.record(z.string(), z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
    health: z
      .strictObject({
        red: z.number().int(),
        amber: z.number().int(),
        problems: z.array(
          z.strictObject({ level: z.enum(["red", "amber"]), topic: z.string(), message: z.string(), action: z.string(), document: z.string().optional() }),
        ),
      })
      .optional()
      .describe('with `health=true` only: the site\'s health list (docs/dashboard.md "Health"), counted, its first three problems'),
  })
  .openapi("Site");
export type SiteBody = z.infer<typeof SiteSchema>;

export const SiteCreatedSchema = z
  .strictObject({
    site: SiteSchema,
    token: z.string().describe("the site's admin token (`esk_…`): shown this once, only its hash is kept"),
    servesEverywhereBy: z
      .string()
      .describe(
        "when every isolate serves the site (ISO 8601): it serves at once where it was registered, elsewhere once each isolate reads the registry again (MANIFEST_CACHE_TTL, docs/tenants.md)",
      ),
  })
  .openapi("SiteCreated");

export const SiteTokenSchema = z
  .strictObject({ token: z.string().describe("the site's new admin token: shown this once; the previous one no longer works") })
  .openapi("SiteToken");

export const SiteListSchema = z
  .strictObject({
    sites: z.array(SiteSchema),
    next: z.string().nullable().describe("pass as `after` for the next page; null on the last"),
  })
  .openapi("SiteList");

/** Sites per page when their health is read: each is its status (~30 D1 queries), inside the invocation's 1,000. */
export const HEALTH_PAGE = 20;

export const SiteListQuerySchema = z.object({
  after: z.string().max(300).optional().openapi({ description: "the `next` of the previous page: sites whose origin sorts after it" }),
  limit: z.coerce.number().int().min(1).max(200).optional().openapi({ description: "sites per page, 1–200 (default 50)" }),
  contains: z.string().min(1).max(300).optional().openapi({ description: "only origins containing this text (case-insensitive for hosts)" }),
  health: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: `each site's health too (its status read: ~30 queries a site, so at most ${HEALTH_PAGE} sites a page)` }),
});

export const SiteHostParamsSchema = z.object({
  host: z
    .string()
    .min(1)
    .max(300)
    .openapi({
      param: { name: "host", in: "path" },
      description: "the origin's host and port as URL.host gives it, e.g. `t1.test:8787`",
      example: "shop.example",
    }),
});

export const SiteDeletedSchema = z
  .strictObject({
    deleted: z.string().describe("the origin: it no longer serves"),
    purge: z.literal("queued").describe("its records, snapshots and state are removed by bounded jobs (site-purge)"),
  })
  .openapi("SiteDeleted");
