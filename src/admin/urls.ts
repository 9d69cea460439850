/**
 * `/sitemap-admin/urls`: bulk upsert (PUT), bulk delete (DELETE) and read-back (GET ?loc=).
 *
 * Every batch is read within the configured limits, validated as a whole with the core validator
 * (nothing is written unless every record is valid), then written by the record store in one
 * batch: all or nothing on D1. A record may be on any configured site (SITES), not only the host
 * the request was sent to.
 */
import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { RecordValidationError } from "../core/errors.ts";
import { BatchValidator, type ValidRecord, type ValidationContext, validateRecord } from "../core/validate.ts";
import type { AppEnv } from "../http/app-env.ts";
import { publishWrites } from "../jobs/writes.ts";
import { DatabaseListError, PartialWriteError, StoreBudgetError, StoreBusyError } from "../store/errors.ts";
import type { FoundRecord } from "../store/port.ts";
import { readBatch } from "./body.ts";
import { AdminError, databaseListFailed, validationFailed } from "./errors.ts";
import { jsonResponse } from "./json.ts";
import type { deleteUrls, getUrl, putUrls } from "./routes.ts";
import { type Limits, MAX_LISTED_ISSUES, type StoredRecordBody } from "./schemas.ts";
import { confirmStillRegistered, servedDatabase } from "./still-registered.ts";

type Ctx = Context<AppEnv>;

function validationContext(c: Ctx): ValidationContext {
  const { config } = c.var.services;
  return { sites: config.sites, defaultSection: config.defaultSection, sectionRules: config.sectionRules };
}

/** The ingest limits; 503 naming the variable (never its value) when a bad one turned ingest off. */
function limits(c: Ctx): Limits {
  const { config } = c.var.services;
  const off = config.disabled.find((d) => d.feature === "admin-ingest");
  if (off) throw new AdminError(503, { error: "unavailable", message: `ingest is off: configuration error: ${off.variable} ${off.rule}` });
  return { maxRecords: config.adminMaxRecords, maxBytes: config.adminMaxBytes };
}

/**
 * A registered site's token writes its own site only (docs/tenants.md): a record naming another
 * site's loc is a 403 for the whole batch, before anything is written.
 */
function refuseOtherSites(input: unknown, origin: string): void {
  const loc = typeof input === "object" && input !== null ? (input as Record<string, unknown>)["loc"] : undefined;
  if (typeof loc !== "string") return; // the validator says what is wrong with it
  let other: string | null = null;
  try {
    const at = new URL(loc).origin;
    if (at !== origin) other = at;
  } catch {
    return;
  }
  if (other !== null) {
    throw new AdminError(403, { error: "forbidden", message: `a site token writes its own site only: a record names ${other}; nothing was written` });
  }
}

/**
 * Reads a request's batch and validates each record as it arrives (the raw record is dropped at
 * once): the records, or a 4xx AdminError (400 malformed, 413 too big, 415, 422 with the issues
 * and `outcome`). `prepare` turns each body item into a record input.
 */
async function readAndValidate(c: Ctx, outcome: string, prepare: (item: unknown) => unknown = (item) => item): Promise<ValidRecord[]> {
  // Issues past the listed cap are only counted: a flood of bad records costs no memory.
  const validator = new BatchValidator(validationContext(c), { maxIssues: MAX_LISTED_ISSUES });
  const lines: number[] = [];
  const ownSiteOnly = c.var.principal?.via === "site-token";
  const database = await servedDatabase(c);
  await readBatch(c.req.raw, limits(c), (item, line) => {
    lines.push(line);
    const input = prepare(item);
    if (ownSiteOnly) refuseOtherSites(input, c.var.origin);
    validator.add(input);
  });
  await confirmStillRegistered(c, database);
  try {
    return validator.finish();
  } catch (err) {
    if (err instanceof RecordValidationError) throw validationFailed(err.issues, outcome, lines, err.issueCount);
    throw err;
  }
}

/**
 * Runs a store write. Store errors keep their meaning: busy → 503 + Retry-After (nothing written),
 * a partitioned site's database list that does not match its partitions → 503 naming
 * SITE_DATABASES (nothing written until a deploy fixes it), over the store's operation budget →
 * 413 (split the batch), partly written (KV is not atomic) → 500 that says so. Any other failure
 * is a 500 that says nothing was written.
 */
export async function written<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (err instanceof HTTPException) throw err; // already an answer (e.g. a sync's 404 or 409)
    if (err instanceof StoreBusyError) {
      throw new AdminError(503, { error: err.code, message: err.message }, { "Retry-After": String(err.retryAfterSeconds) });
    }
    if (err instanceof DatabaseListError) throw databaseListFailed(err, "nothing was written");
    if (err instanceof StoreBudgetError) throw new AdminError(413, { error: "payload_too_large", message: err.message });
    console.error("admin write failed", err);
    if (err instanceof PartialWriteError) {
      throw new AdminError(500, {
        error: "write_failed",
        message: `${err.message}. This store is not atomic: sending the same batch again completes it`,
      });
    }
    throw new AdminError(500, {
      error: "write_failed",
      message: "the database write failed; nothing was written (the batch is atomic, so sending it again is safe)",
    });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads and validates a request's record batch (see readAndValidate). */
export function readValidBatch(c: Ctx, outcome: string): Promise<ValidRecord[]> {
  return readAndValidate(c, outcome);
}

export const upsertUrls: RouteHandler<typeof putUrls, AppEnv> = async (c) => {
  const records = await readValidBatch(c, "nothing was written");
  const s = await written(c.var.services.store.writer.upsert(records));
  await publishWrites(
    c.var.services,
    records.map((r) => r.origin),
  );
  return jsonResponse({ received: records.length, inserted: s.inserted, updated: s.updated, unchanged: s.unchanged }, 200);
};

export const removeUrls: RouteHandler<typeof deleteUrls, AppEnv> = async (c) => {
  // A loc string, or any object whose `loc` is used: the NDJSON sent to PUT can be sent here too.
  const records = await readAndValidate(c, "nothing was deleted", (item) =>
    typeof item === "string" ? { loc: item } : isObject(item) ? { loc: item["loc"] } : item,
  );
  const s = await written(c.var.services.store.writer.delete(records.map((r) => r.loc)));
  await publishWrites(
    c.var.services,
    records.map((r) => r.origin),
  );
  return jsonResponse({ received: records.length, deleted: s.deleted, alreadyDeleted: s.alreadyDeleted, notFound: s.notFound }, 200);
};

function storedRecord(found: FoundRecord): StoredRecordBody {
  const out: StoredRecordBody = {
    key: found.key,
    loc: found.loc,
    origin: found.origin,
    section: found.section,
    lastmod: found.lastmod ?? null,
    changefreq: found.changefreq ?? null,
    priority: found.priority ?? null,
    updatedAt: new Date(found.updatedAt).toISOString(),
  };
  if (found.ext != null) out.ext = found.ext as Record<string, unknown>;
  return out;
}

export const readUrl: RouteHandler<typeof getUrl, AppEnv> = async (c) => {
  const { loc } = c.req.valid("query");
  // A loc of a site this host does not serve is not found here (as another site's sync is not): 404, not 422, the same
  // for another tenant's origin and for no site's. Its rule `site` tells the import's probe (scripts/import/sites.ts) so.
  const url = URL.canParse(loc) ? new URL(loc) : null;
  const at = url?.protocol === "http:" || url?.protocol === "https:" ? url.origin : null;
  if (at !== null && !c.var.services.config.sites.has(at)) {
    const message = `${at.slice(0, 200)} is not a site of this host`;
    throw new AdminError(404, { error: "not_found", message, issues: [{ field: "loc", rule: "site", message }] });
  }
  const checked = validateRecord({ loc }, validationContext(c));
  if (!checked.ok) throw validationFailed(checked.issues, "no record can exist for it");
  const found = await c.var.services.store.reader.find(checked.record.loc);
  if (found === null) throw new AdminError(404, { error: "not_found", message: `no record for ${checked.record.loc}` });
  if (found.deleted) {
    throw new AdminError(404, { error: "not_found", message: `${found.loc} was deleted at ${new Date(found.updatedAt).toISOString()}` });
  }
  return jsonResponse(storedRecord(found), 200);
};
