/**
 * What a request signed in by something the browser carries by itself may do (docs/dashboard.md
 * "What a browser may do"). The session cookie and a person's Access JWT reach the Worker with
 * every same-origin request, including those a script on the site's pages makes (a compromised
 * analytics tag, an XSS in a comment box), so:
 * - they read only the dashboard and the status (GET/HEAD);
 * - a write by them is a dashboard action (DASHBOARD_ACTIONS, a form on the dashboard) carrying the
 *   session's CSRF token, sent as a navigation (`Sec-Fetch-Mode: navigate` when the browser says),
 *   so a script's fetch() cannot make it even after reading the page; with no query (the form has
 *   none: one is a script's, asking for more than the button does, `?full=1` say); and at most once
 *   per site per cooldown (src/admin/auth/action-cooldown.ts), since a script on the site's pages
 *   can still submit the form itself;
 * and every non-GET request signed in by the cookie or an Access JWT (service tokens too) must come
 * from the site itself: `Sec-Fetch-Site` same-origin (or absent: an older browser, or no browser)
 * and `Origin`, when sent, the site's own. SameSite=Strict alone lets sibling subdomains through.
 *
 * Each refusal names its reason (`refusal`), by which the audit counts it apart from accepted
 * writes (src/admin/audit.ts).
 */
import type { Context } from "hono";
import type { RefusalReason } from "../../admin-state/store.ts";
import type { AppEnv } from "../../http/app-env.ts";
import { readCapped } from "../../outbound/read-capped.ts";
import { AdminError } from "../errors.ts";
import { actionCooldown } from "./action-cooldown.ts";
import { BROWSER_READABLE, DASHBOARD_ACTIONS } from "./paths.ts";
import { type Principal, ambient, carriedByBrowser } from "./principal.ts";

/** A dashboard action's form body: its CSRF token and little else. */
const MAX_ACTION_FORM_BYTES = 4096;
const READS = new Set(["GET", "HEAD"]);

const forbidden = (message: string): Response => new AdminError(403, { error: "forbidden", message }).getResponse();

function refused(c: Context<AppEnv>, reason: RefusalReason, message: string): Response {
  c.set("refusal", reason);
  return forbidden(message);
}

/** The request comes from the site's own pages (or from no browser at all). */
export function sameOrigin(c: Context<AppEnv>): boolean {
  const site = c.req.header("Sec-Fetch-Site");
  if (site !== undefined && site !== "same-origin") return false;
  const origin = c.req.header("Origin");
  return origin === undefined || origin === c.var.origin;
}

async function formField(request: Request, name: string): Promise<string | null> {
  if (!(request.headers.get("Content-Type") ?? "").startsWith("application/x-www-form-urlencoded")) return null;
  const { text, overCap } = await readCapped(request.clone().body, MAX_ACTION_FORM_BYTES);
  return overCap ? null : new URLSearchParams(text).get(name);
}

const encoder = new TextEncoder();
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([crypto.subtle.digest("SHA-256", encoder.encode(given)), crypto.subtle.digest("SHA-256", encoder.encode(expected))]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/**
 * A refusal (403, or 429 within the action's cooldown) of what this principal may not do here, or
 * null. A dashboard action whose token passes is flagged (`dashboardAction`) so that its answer,
 * a refusal of its query or cooldown included, becomes a way back to the dashboard.
 */
export async function browserRefusal(c: Context<AppEnv>, principal: Principal): Promise<Response | null> {
  const { method, path } = c.req;
  if (READS.has(method)) {
    if (carriedByBrowser(principal) && !BROWSER_READABLE.includes(path)) {
      return refused(c, "not-for-browsers", "a browser session reads the dashboard and the status only; use the bearer token or an Access service token");
    }
    return null;
  }
  if (ambient(principal) && !sameOrigin(c)) return refused(c, "cross-site", "cross-site request refused");
  if (!carriedByBrowser(principal)) return null;
  const mode = c.req.header("Sec-Fetch-Mode");
  const action = DASHBOARD_ACTIONS.includes(`${method} ${path}`) && (mode === undefined || mode === "navigate");
  const csrf = action ? await formField(c.req.raw, "csrf") : null;
  if (csrf === null || !(await sameSecret(csrf, principal.csrf))) {
    return refused(
      c,
      "not-for-browsers",
      "a browser session does not write: use the bearer token or an Access service token (the dashboard's own actions carry their token)",
    );
  }
  c.set("dashboardAction", true);
  if (new URL(c.req.url).search !== "") {
    return refused(c, "action-query", "the dashboard's action takes no query: `?full=1` and the like are for the bearer token or an Access service token");
  }
  return actionCooldown(c, path.slice(path.lastIndexOf("/") + 1));
}
