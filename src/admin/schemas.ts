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

export const RunSummarySchema = z
  .looseObject({
    origin: z.string(),
    trigger: z.string().describe("`cron` or `admin`"),
    startedAt: z.string(),
    durationMs: z.number(),
    mode: z.enum(["incremental", "pass", "walk"]),
    shardsRendered: z.number().int(),
    changed: z.array(z.string()).describe("`section-n` of every listed shard whose version changed"),
    converged: z.boolean().describe("nothing left to do as far as this run knows"),
  })
  .describe("summary of one regeneration run")
  .openapi("RunSummary");

export const StatusSchema = z
  .looseObject({
    site: z.string(),
    manifest: z.looseObject({ version: z.string(), builtAt: z.string(), shards: z.number().int(), urls: z.number().int() }).nullable(),
    regeneration: z.looseObject({ enabled: z.boolean(), running: z.boolean(), pendingShards: z.number().int() }),
    runs: z.array(z.looseObject({ id: z.number(), ok: z.boolean() })).describe("the last runs, newest first, each with its summary"),
    notifications: z.unknown().describe("per notification target: last attempt, last success, HTTP status, pending"),
  })
  .openapi("Status");
