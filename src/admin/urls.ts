/**
 * `/sitemap-admin/urls`: bulk upsert (PUT), bulk delete (DELETE) and read-back (GET ?loc=).
 *
 * Every batch is read within the configured limits, validated as a whole with the core validator
 * (nothing is written unless every record is valid), then written in one D1 `batch()`: all or
 * nothing. A record may be on any configured site (SITES), not only the host the request was
 * sent to.
 */
import { type Context, Hono } from "hono";
import type { AppEnv } from "../app.ts";
import { RecordValidationError } from "../core/errors.ts";
import { type ValidationContext, type ValidRecord, validateBatch, validateRecord } from "../core/validate.ts";
import type { FoundRecord, RecordWriter } from "../store/port.ts";
import { BodyError, type ParsedBody, readBatch } from "./body.ts";
import {
  type DeleteResult,
  type Limits,
  type StoredRecordBody,
  type UpsertResult,
  errorResponse,
  jsonResponse,
  openApiDocument,
  urlQuery,
  validationFailed,
} from "./schemas.ts";

type Ctx = Context<AppEnv>;

function validationContext(c: Ctx): ValidationContext {
  const { config } = c.var.services;
  return { sites: config.sites, defaultSection: config.defaultSection };
}

function limits(c: Ctx): Limits {
  const { config } = c.var.services;
  return { maxRecords: config.adminMaxRecords, maxBytes: config.adminMaxBytes };
}

/** The record writer of the configured source (D1 or KV, wired in src/services.ts). */
function writer(c: Ctx): RecordWriter {
  return c.var.services.store.writer;
}

async function readBody(c: Ctx): Promise<ParsedBody | Response> {
  try {
    return await readBatch(c.req.raw, limits(c));
  } catch (err) {
    if (err instanceof BodyError) return errorResponse(err.status, err.body);
    throw err;
  }
}

/** Validates every record; a Response (422) when any is invalid. */
function validateAll(c: Ctx, inputs: readonly unknown[], body: ParsedBody, outcome: string): ValidRecord[] | Response {
  try {
    return validateBatch(inputs, validationContext(c));
  } catch (err) {
    if (err instanceof RecordValidationError) return validationFailed(err.issues, outcome, body.lines);
    throw err;
  }
}

function writeFailed(err: unknown): Response {
  console.error("admin write failed", err);
  return errorResponse(500, {
    error: "write_failed",
    message: "the database write failed; nothing was written (the batch is atomic, so sending it again is safe)",
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export const urlsApi = new Hono<AppEnv>();

urlsApi.put("/", async (c) => {
  const body = await readBody(c);
  if (body instanceof Response) return body;
  const records = validateAll(c, body.items, body, "nothing was written");
  if (records instanceof Response) return records;
  try {
    const s = await writer(c).upsert(records);
    return jsonResponse({ received: records.length, inserted: s.inserted, updated: s.updated, unchanged: s.unchanged } satisfies UpsertResult);
  } catch (err) {
    return writeFailed(err);
  }
});

urlsApi.delete("/", async (c) => {
  const body = await readBody(c);
  if (body instanceof Response) return body;
  // A loc string, or any object whose `loc` is used: the NDJSON sent to PUT can be sent here too.
  const inputs = body.items.map((item) => (typeof item === "string" ? { loc: item } : isObject(item) ? { loc: item["loc"] } : item));
  const records = validateAll(c, inputs, body, "nothing was deleted");
  if (records instanceof Response) return records;
  try {
    const s = await writer(c).delete(records.map((r) => r.loc));
    return jsonResponse({ received: records.length, deleted: s.deleted, alreadyDeleted: s.alreadyDeleted, notFound: s.notFound } satisfies DeleteResult);
  } catch (err) {
    return writeFailed(err);
  }
});

function storedRecord(row: FoundRecord): StoredRecordBody {
  const out: StoredRecordBody = {
    key: row.key,
    loc: row.loc,
    origin: row.origin,
    section: row.section,
    lastmod: row.lastmod ?? null,
    changefreq: row.changefreq as StoredRecordBody["changefreq"],
    priority: row.priority ?? null,
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
  if (row.ext) out.ext = row.ext as Record<string, unknown>;
  return out;
}

urlsApi.get("/", urlQuery, async (c) => {
  const { loc } = c.req.valid("query");
  const checked = validateRecord({ loc }, validationContext(c));
  if (!checked.ok) return validationFailed(checked.issues, "no record can exist for it");
  const row = await c.var.services.store.reader.find(checked.record.loc);
  if (row === null) return errorResponse(404, { error: "not_found", message: `no record for ${checked.record.loc}` });
  if (row.deleted) {
    return errorResponse(404, {
      error: "not_found",
      message: `${row.loc} was deleted at ${new Date(row.updatedAt).toISOString()}`,
    });
  }
  return jsonResponse(storedRecord(row));
});

/** `GET /sitemap-admin/openapi.json`. */
export function openApi(c: Ctx): Response {
  return jsonResponse(openApiDocument(limits(c)));
}
