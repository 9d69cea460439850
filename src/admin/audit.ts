/**
 * The audit trail (docs/dashboard.md "Audit trail"): every admin write by a signed-in principal is
 * recorded after it is answered: who (src/admin/auth/principal.ts), when, the method and path, how
 * many records its answer says it received, and the status. Never a secret, a query string or a
 * record's body. Status and the dashboard show the last AUDIT_SHOWN.
 *
 * A write the admin refused (`refusal`: cross-site, a browser credential writing, the dashboard's
 * action with a query or within its cooldown; answered 429 by a rate or a cap (`rate-limited`: it wrote
 * nothing, and past the limit each one is free to send); or answered 401, 403 or 404: a credential that does not
 * reach what it named, such as a site's token at the platform API or another site's sync; another
 * site's token sent to this host, which signs no one in, counted under "another site's token") is not an audit row: any script on the site's pages
 * can make such requests by the thousand, and as rows they would evict the accepted writes. They
 * are counted apart (per minute, reason and principal; the newest REFUSALS_KEPT rows per site), so
 * a flood shows as a count and the trail of accepted writes stays whole.
 *
 * Recording comes after the write: a failure to record never turns a stored write into an error.
 * It is logged (method, path, status) and the answer says so (`X-Admin-Audit: not-recorded`), so
 * the script that wrote can tell.
 */
import type { MiddlewareHandler } from "hono";
import { AUDIT_SHOWN, REFUSALS_SHOWN } from "../admin-state/store.ts";
import type { AppEnv } from "../http/app-env.ts";
import { readCapped } from "../outbound/read-capped.ts";
import type { Services } from "../services-type.ts";

const READS = new Set(["GET", "HEAD", "OPTIONS"]);
/** Write answers are small summaries; a bigger one is not read for its count. */
const MAX_ANSWER_BYTES = 64 * 1024;
const AUDIT_HEADER = "X-Admin-Audit";
/** A write answered so changed nothing its credential may change: counted apart, never a row that evicts accepted writes. */
const NOT_AUTHORIZED = new Set([401, 403, 404]);
/** A write refused by a rate or a cap wrote nothing, and past the limit each one is free: counted apart too. */
const RATE_LIMITED = 429;

/** `received` of a JSON answer (the batch routes say how many records they read), or null. */
async function recordsOf(res: Response): Promise<number | null> {
  if (!(res.headers.get("Content-Type") ?? "").startsWith("application/json") || !res.body) return null;
  try {
    const { text, overCap } = await readCapped(res.clone().body, MAX_ANSWER_BYTES);
    const received = overCap ? undefined : (JSON.parse(text) as { received?: unknown }).received;
    return typeof received === "number" && Number.isSafeInteger(received) ? received : null;
  } catch {
    return null;
  }
}

function marked(res: Response): Response {
  const out = new Response(res.body, res);
  out.headers.set(AUDIT_HEADER, "not-recorded");
  return out;
}

export const auditWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const who = c.get("principal")?.who ?? c.get("refusedCredential");
  if (READS.has(c.req.method) || who === undefined || c.get("siteGone")) return;
  const reason = c.get("refusal") ?? (NOT_AUTHORIZED.has(c.res.status) ? "not-authorized" : c.res.status === RATE_LIMITED ? "rate-limited" : undefined);
  const entry = { at: Date.now(), who, method: c.req.method, resource: c.req.path, records: await recordsOf(c.res), status: c.res.status };
  const store = c.var.services.admin;
  try {
    if (!store) throw new Error("no DB (D1) binding and no KV writer object to keep it in");
    if (reason) await store.recordRefusal(c.var.origin, { at: entry.at, reason, who: entry.who });
    else await store.recordAudit(c.var.origin, entry);
  } catch (err) {
    console.error(`audit: an admin write was not recorded (${entry.method} ${entry.resource} → ${entry.status})`, err);
    c.res = marked(c.res);
  }
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** The last AUDIT_SHOWN writes of the site and the last REFUSALS_SHOWN counts of refusals, newest first, for status and the dashboard. */
export async function auditStatus(s: Services, origin: string) {
  if (!s.admin) return { store: null, entries: [], refused: [] };
  try {
    const [entries, refused] = await Promise.all([s.admin.audit(origin, AUDIT_SHOWN), s.admin.refusals(origin, REFUSALS_SHOWN)]);
    return {
      store: s.admin.kind,
      entries: entries.map((e) => ({ ...e, at: iso(e.at) })),
      refused: refused.map((r) => ({ ...r, minute: iso(r.minute) })),
    };
  } catch (err) {
    console.error("audit: could not read the trail", err);
    return { store: s.admin.kind, entries: [], refused: [], error: "the audit trail could not be read" };
  }
}
