/**
 * Request and response schemas of the admin ingest API, and its one JSON error shape:
 *
 *   { "error": "<code>", "message": "<human text>", "line"?, "issues"?, "issueCount"?, "limits"? }
 *
 * Records themselves are checked by the core validator (src/core/validate.ts), which names the
 * rule each field broke; the zod schemas here check everything around them (query parameters,
 * the shape of responses) and describe the API for the OpenAPI document.
 */
import { z } from "zod";
import { validator } from "hono/validator";
import type { ValidationIssue } from "../core/errors.ts";
import { MAX_LOC_LENGTH } from "../core/limits.ts";
import { CHANGEFREQS } from "../core/types.ts";

/** Named schemas: the OpenAPI components, referenced by name from each other. */
const registry = z.registry<{ id: string }>();
function named<T extends z.ZodType>(id: string, schema: T): T {
  registry.add(schema, { id });
  return schema;
}

export const ERROR_CODES = [
  "unauthorized",
  "invalid_body",
  "invalid_query",
  "unsupported_media_type",
  "payload_too_large",
  "validation_failed",
  "not_found",
  "write_failed",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** At most this many issues are listed in one 422 response; `issueCount` always has the total. */
export const MAX_LISTED_ISSUES = 1_000;

export const IssueSchema = named(
  "Issue",
  z.object({
    index: z.number().int().nonnegative().optional().describe("0-based position of the record in the request body"),
    line: z.number().int().positive().optional().describe("1-based line of the request body where the record starts"),
    loc: z.string().optional().describe("the record's loc as given (cut after 2,111 characters)"),
    field: z.string().describe("the field that broke a rule (`record` for the record itself)"),
    rule: z.string().describe("stable rule identifier, e.g. `site`, `priority-range`, `duplicate-loc`"),
    message: z.string(),
  }),
);
export type Issue = z.infer<typeof IssueSchema>;

export const LimitsSchema = named(
  "Limits",
  z.object({ maxRecords: z.number().int().positive(), maxBytes: z.number().int().positive() }),
);
export type Limits = z.infer<typeof LimitsSchema>;

export const ApiErrorSchema = named(
  "Error",
  z.object({
    error: z.enum(ERROR_CODES),
    message: z.string(),
    line: z.number().int().positive().optional().describe("body line where parsing failed (400 invalid_body)"),
    issues: z.array(IssueSchema).optional().describe(`each problem found, at most ${MAX_LISTED_ISSUES}`),
    issueCount: z.number().int().nonnegative().optional().describe("total number of issues, listed or not"),
    limits: LimitsSchema.optional().describe("the limits in force (413)"),
  }),
);
export type ApiError = z.infer<typeof ApiErrorSchema>;

/** A record as sent to `PUT /sitemap-admin/urls` (documentation; the core validator enforces it). */
export const RecordInputSchema = named(
  "RecordInput",
  z.strictObject({
    loc: z
      .string()
      .max(MAX_LOC_LENGTH)
      .describe("absolute http(s) URL on a configured site (any of SITES, not necessarily the host the request was sent to)"),
    lastmod: z.string().nullable().optional().describe("W3C datetime: YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss[.s]](Z|±hh:mm)"),
    changefreq: z.enum(CHANGEFREQS).nullable().optional(),
    priority: z.union([z.number().min(0).max(1), z.string()]).nullable().optional().describe("0.0–1.0 (a number, or a decimal string)"),
    section: z.string().nullable().optional().describe("sitemap section (a-z, 0-9, _ and -; ≤ 64); DEFAULT_SECTION when absent"),
    images: z.unknown().optional().describe("protocol extension data, stored as JSON"),
    videos: z.unknown().optional().describe("protocol extension data, stored as JSON"),
    news: z.unknown().optional().describe("protocol extension data, stored as JSON"),
    alternates: z.unknown().optional().describe("protocol extension data, stored as JSON"),
  }),
);
export type RecordInputBody = z.infer<typeof RecordInputSchema>;

export const DeleteItemSchema = named(
  "DeleteItem",
  z.union([z.string(), z.looseObject({ loc: z.string() })]).describe("a loc string, or an object whose `loc` is used (other fields are ignored)"),
);

export const UpsertResultSchema = named(
  "UpsertResult",
  z.strictObject({
    received: z.number().int().nonnegative(),
    inserted: z.number().int().nonnegative().describe("new locs, and deleted locs brought back"),
    updated: z.number().int().nonnegative().describe("existing records whose content changed"),
    unchanged: z.number().int().nonnegative().describe("records sent with identical content: nothing written"),
  }),
);
export type UpsertResult = z.infer<typeof UpsertResultSchema>;

export const DeleteResultSchema = named(
  "DeleteResult",
  z.strictObject({
    received: z.number().int().nonnegative(),
    deleted: z.number().int().nonnegative().describe("records now tombstoned"),
    alreadyDeleted: z.number().int().nonnegative(),
    notFound: z.number().int().nonnegative(),
  }),
);
export type DeleteResult = z.infer<typeof DeleteResultSchema>;

export const StoredRecordSchema = named(
  "StoredRecord",
  z.strictObject({
    key: z.number().int().describe("stable key of the loc (never changes)"),
    loc: z.string(),
    origin: z.string(),
    section: z.string(),
    lastmod: z.string().nullable(),
    changefreq: z.enum(CHANGEFREQS).nullable(),
    priority: z.number().nullable(),
    ext: z.record(z.string(), z.unknown()).optional(),
    updatedAt: z.string().describe("change stamp: last real change, ISO 8601"),
  }),
);
export type StoredRecordBody = z.infer<typeof StoredRecordSchema>;

export const UrlQuerySchema = z.object({
  loc: z.string({ error: "query parameter loc is required (one absolute URL)" }).min(1, "query parameter loc must not be empty"),
});

const JSON_HEADERS = { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" } as const;

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

export function errorResponse(status: number, body: ApiError, headers: Record<string, string> = {}): Response {
  return jsonResponse(body, status, headers);
}

/**
 * 422 for core validation issues; `lines[i]` (when known) is the body line of record i, and
 * `outcome` ends the message (e.g. "nothing was written").
 */
export function validationFailed(issues: readonly ValidationIssue[], outcome: string, lines?: readonly number[] | null): Response {
  const listed: Issue[] = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
    const out: Issue = { field: issue.field, rule: issue.rule, message: issue.message };
    if (issue.index !== undefined) {
      out.index = issue.index;
      const line = lines?.[issue.index];
      if (line !== undefined) out.line = line;
    }
    if (issue.loc !== undefined) out.loc = issue.loc;
    return out;
  });
  const records = new Set(issues.map((i) => i.index)).size;
  return errorResponse(422, {
    error: "validation_failed",
    message: `${records} ${records === 1 ? "record is" : "records are"} invalid (${issues.length} ${issues.length === 1 ? "issue" : "issues"}); ${outcome}`,
    issues: listed,
    issueCount: issues.length,
  });
}

/** zod issues in the API's issue shape (field = dotted path, rule = zod's issue code). */
export function zodIssues(error: z.ZodError, root: string): Issue[] {
  return error.issues.map((i) => ({ field: i.path.length > 0 ? i.path.join(".") : root, rule: i.code, message: i.message }));
}

/** Hono validator for `?loc=`: 400 invalid_query in the shared error shape. */
export const urlQuery = validator("query", (value) => {
  const parsed = UrlQuerySchema.safeParse(value);
  if (!parsed.success) {
    return errorResponse(400, { error: "invalid_query", message: "bad query parameters", issues: zodIssues(parsed.error, "query") });
  }
  return parsed.data;
});

/** The named schemas as OpenAPI 3.1 components (JSON Schema 2020-12), referencing each other. */
function componentSchemas(): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    unrepresentable: "any",
    io: "input",
    uri: (id) => `#/components/schemas/${id}`,
  });
  const out: Record<string, unknown> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _schema, $id: _id, ...rest } = schema as Record<string, unknown>;
    out[id] = rest;
  }
  return out;
}

/** OpenAPI 3.1 description of the ingest endpoints (served at `/sitemap-admin/openapi.json`). */
export function openApiDocument(limits: Limits): Record<string, unknown> {
  const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
  const error = (description: string) => ({ description, content: { "application/json": { schema: ref("Error") } } });
  const common = {
    "401": { description: "missing or wrong bearer token", headers: { "WWW-Authenticate": { schema: { type: "string" } } } },
  };
  const batchBody = (item: string, description: string) => ({
    required: true,
    description: `${description} At most ${limits.maxRecords} records and ${limits.maxBytes} bytes per request.`,
    content: {
      "application/json": { schema: { type: "array", items: ref(item), maxItems: limits.maxRecords } },
      "application/x-ndjson": { schema: ref(item), description: "one JSON value per line; blank lines are skipped" },
    },
  });
  const batchErrors = {
    "400": error("malformed JSON or NDJSON (`line` names the line) or not UTF-8"),
    "413": error("more records or bytes than the limits allow"),
    "415": error("Content-Type is neither application/json nor application/x-ndjson"),
    "422": error("one or more records are invalid; nothing was written"),
    "500": error("the database write failed; nothing was written (safe to retry)"),
  };
  return {
    openapi: "3.1.0",
    info: { title: "edge-sitemaps admin API", version: "1" },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "the ADMIN_TOKEN secret" } },
      schemas: componentSchemas(),
    },
    security: [{ bearer: [] }],
    paths: {
      "/sitemap-admin/urls": {
        put: {
          summary: "Upsert a batch of URL records (validated as a whole, written atomically)",
          requestBody: batchBody("RecordInput", "Records to insert or update, keyed by loc."),
          responses: { "200": { description: "written", content: { "application/json": { schema: ref("UpsertResult") } } }, ...common, ...batchErrors },
        },
        delete: {
          summary: "Delete a batch of locs (tombstones, so regeneration and IndexNow see them)",
          requestBody: batchBody("DeleteItem", "Locs to delete."),
          responses: { "200": { description: "deleted", content: { "application/json": { schema: ref("DeleteResult") } } }, ...common, ...batchErrors },
        },
        get: {
          summary: "Read one record back",
          parameters: [{ name: "loc", in: "query", required: true, schema: { type: "string" }, description: "normalised like stored locs" }],
          responses: {
            "200": { description: "the record", content: { "application/json": { schema: ref("StoredRecord") } } },
            ...common,
            "400": error("loc parameter missing"),
            "404": error("no such record (never stored, or deleted)"),
            "422": error("loc is not a valid URL on a configured site"),
          },
        },
      },
    },
  };
}
