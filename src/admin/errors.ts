/**
 * Admin errors are thrown, never returned: AdminError is an HTTPException that carries the one
 * JSON error shape, and the app's onError renders it once with `err.getResponse()`.
 */
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ValidationIssue } from "../core/errors.ts";
import type { DatabaseListError } from "../store/errors.ts";
import { JSON_HEADERS } from "./json.ts";
import { type ApiError, type Issue, MAX_LISTED_ISSUES, type UnauthorizedBody } from "./schemas.ts";

export class AdminError extends HTTPException {
  override readonly name: string = "AdminError";
  readonly body: ApiError | UnauthorizedBody;
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: ContentfulStatusCode, body: ApiError | UnauthorizedBody, headers: Readonly<Record<string, string>> = {}) {
    super(status, { message: "message" in body ? body.message : body.error });
    this.body = body;
    this.headers = headers;
  }

  override getResponse(): Response {
    return new Response(JSON.stringify(this.body), { status: this.status, headers: { ...JSON_HEADERS, ...this.headers } });
  }
}

/**
 * 422 for core validation issues; `lines[i]` (when known) is the body line of record i, and
 * `outcome` ends the message (e.g. "nothing was written"). `issueCount` counts issues that were
 * found but not kept (the validator keeps at most MAX_LISTED_ISSUES).
 */
export function validationFailed(
  issues: readonly ValidationIssue[],
  outcome: string,
  lines?: readonly number[] | null,
  issueCount = issues.length,
): AdminError {
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
  const partial = issueCount > listed.length;
  const invalid = `${partial ? "at least " : ""}${records} ${records === 1 && !partial ? "record is" : "records are"} invalid`;
  const counted = `${issueCount} ${issueCount === 1 ? "issue" : "issues"}${partial ? `, the first ${listed.length} listed` : ""}`;
  return new AdminError(422, {
    error: "validation_failed",
    message: `${invalid} (${counted}); ${outcome}`,
    issues: listed,
    issueCount,
  });
}

/** Seconds a client waits after a refusal only a deploy can lift: about as long as one takes. */
const REDEPLOY_SECONDS = 300;

/**
 * 503 for a partitioned site whose SITE_DATABASES list does not keep its partitions' databases in
 * their places (src/partitions/database-list.ts): the message names the list and what to restore,
 * then `outcome` (e.g. "nothing was written"). The admin alone sees it; the public gets a bare 503.
 */
export function databaseListFailed(err: DatabaseListError, outcome: string): AdminError {
  console.error(err.message);
  return new AdminError(503, { error: "database_list", message: `${err.message}; ${outcome}` }, { "Retry-After": String(REDEPLOY_SECONDS) });
}
