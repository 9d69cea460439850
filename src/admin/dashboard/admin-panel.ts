/**
 * The dashboard's own part of the admin: its one action, "regenerate now" (a form: no script, the
 * CSP forbids it; the session's CSRF token in a hidden field, src/admin/auth/browser-guard.ts), what
 * came of the last action, and the audit trail of admin writes.
 */
import { REGENERATE_PATH } from "../auth/paths.ts";
import type { siteStatus } from "../status.ts";
import { type Html, html } from "./html.ts";

type Status = Awaited<ReturnType<typeof siteStatus>>;

/** What the dashboard shows about the action it was sent back from (`?done=…&status=…`). */
export interface ActionOutcome {
  action: "regenerate";
  status: number;
}

/** The outcome named by the query, if it names one of ours (anything else is ignored). */
export function actionOutcome(query: URLSearchParams): ActionOutcome | null {
  const status = query.get("status") ?? "";
  if (query.get("done") !== "regenerate" || !/^[1-5]\d\d$/.test(status)) return null;
  return { action: "regenerate", status: Number(status) };
}

/** The actions a browser session may take, each a form carrying its CSRF token; none without one. */
export function actions(csrf: string | null): Html {
  if (csrf === null) return html``;
  return html`<form method="post" action="${REGENERATE_PATH}" class="action"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" name="action" value="regenerate">Regenerate now</button></form>`;
}

export function outcome(done: ActionOutcome | null): Html {
  if (!done) return html``;
  const ok = done.status >= 200 && done.status < 300;
  return html`<p class="${ok ? "note" : "bad"}" role="status" data-figure="action-outcome">${ok ? "Regeneration requested" : "Regeneration refused"} (HTTP ${done.status}).</p>`;
}

const when = (iso: string): string => iso.replace("T", " ").replace(/\.\d+Z$/, "Z");

export function auditTrail(status: Status): Html {
  const { entries } = status.audit;
  const error = "error" in status.audit ? html`<p class="bad">${status.audit.error}</p>` : "";
  if (status.audit.store === null) return html`<p>No audit trail: it needs the DB (D1) binding (or, for URL_SOURCE=kv, KV_WRITERS).</p>`;
  if (entries.length === 0) return html`${error}<p>No admin write yet.</p>`;
  return html`${error}<div class="scroll"><table class="audit"><thead><tr><th>when</th><th>who</th><th>what</th><th>records</th><th>outcome</th></tr></thead><tbody>
${entries.map(
  (e) =>
    html`<tr><td>${when(e.at)}</td><td>${e.who}</td><td>${e.method} ${e.resource}</td><td class="num">${e.records ?? "—"}</td><td class="${e.status >= 400 ? "num bad" : "num"}">${e.status}</td></tr>`,
)}
</tbody></table>`;
}
