/**
 * The dashboard's own part of the admin: its one action, "regenerate now" (a form: no script, the
 * CSP forbids it; the session's CSRF token in a hidden field, src/admin/auth/browser-guard.ts; at
 * most once per site per cooldown, src/admin/auth/action-cooldown.ts), what came of the last
 * action, the audit trail of admin writes and, apart from it, the refusals counted per minute.
 */
import { ACTION_COOLDOWN_SECONDS } from "../auth/action-cooldown.ts";
import { REGENERATE_PATH } from "../auth/paths.ts";
import { type Html, html } from "./html.ts";
import { type DashboardView, pagedTable } from "./paging.ts";
import type { DashboardStatus } from "./status-type.ts";

type Status = DashboardStatus;

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

function said(status: number): string {
  if (status >= 200 && status < 300) return "Regeneration requested";
  if (status === 429) return `Regeneration refused: it was requested from the dashboard less than ${ACTION_COOLDOWN_SECONDS / 60} minutes ago`;
  return "Regeneration refused";
}

export function outcome(done: ActionOutcome | null): Html {
  if (!done) return html``;
  const ok = done.status >= 200 && done.status < 300;
  return html`<p class="${ok ? "note" : "bad"}" role="status" data-figure="action-outcome">${said(done.status)} (HTTP ${done.status}).</p>`;
}

const when = (iso: string): string => iso.replace("T", " ").replace(/\.\d+Z$/, "Z");

export function auditTrail(status: Status, view: DashboardView): Html {
  const { entries } = status.audit;
  const error = "error" in status.audit ? html`<p class="bad">${status.audit.error}</p>` : "";
  if (status.audit.store === null) return html`<p>No audit trail: it needs the DB (D1) binding (or, for URL_SOURCE=kv, KV_WRITERS).</p>`;
  if (entries.length === 0) return html`${error}<p>No admin write yet.</p>${refusals(status)}`;
  const [last] = entries;
  return html`${error}${pagedTable(view, {
    list: "audit",
    className: "audit",
    summary: html`The last ${entries.length === 1 ? "write" : `${entries.length} writes`}${last ? html`, the newest ${when(last.at)} by ${last.who}` : ""}`,
    head: html`<tr><th>when</th><th>who</th><th>what</th><th>records</th><th>outcome</th></tr>`,
    rows: entries.map(
      (e) =>
        html`<tr><td>${when(e.at)}</td><td>${e.who}</td><td>${e.method} ${e.resource}</td><td class="num">${e.records ?? "—"}</td><td class="${e.status >= 400 ? "num bad" : "num"}">${e.status}</td></tr>`,
    ),
  })}${refusals(status)}`;
}

/** Refused writes, counted per minute, reason and principal (src/admin/audit.ts): a flood is a few rows here, never the trail above. */
function refusals(status: Status): Html {
  const { refused } = status.audit;
  if (refused.length === 0) return html``;
  const total = refused.reduce((n, r) => n + r.count, 0);
  return html`<h3>Refused</h3><details class="list"><summary>${total.toLocaleString("en-US")} refused, in ${refused.length === 1 ? "one row" : `${refused.length} rows`} (a minute, a reason and who)</summary><div class="scroll"><table class="audit"><thead><tr><th>minute</th><th>who</th><th>why</th><th>count</th></tr></thead><tbody>
${refused.map((r) => html`<tr><td>${when(r.minute)}</td><td>${r.who}</td><td>${r.reason}</td><td class="num" data-figure="refused-count">${r.count}</td></tr>`)}
</tbody></table></div></details>`;
}
