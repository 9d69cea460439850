/** The dashboard's jobs table (docs/jobs.md): each background job's state, last run, usage and error. */
import { plural } from "../../core/plural.ts";
import type { JobStatus } from "../../jobs/status.ts";
import { type Html, html } from "./html.ts";
import { type DashboardView, pagedTable } from "./paging.ts";

const when = (iso: string | null): string => (iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "—");

export function jobsTable(jobs: readonly JobStatus[], view: DashboardView): Html {
  if (jobs.length === 0) return html`<p>No background job has run for this site yet.</p>`;
  const bad = jobs.filter((j) => j.state === "dead" || j.state === "failing").length;
  return pagedTable(view, {
    list: "jobs",
    summary: html`${plural(jobs.length, "job")}${bad > 0 ? html`, <span class="bad">${bad} failing or dead</span>` : ""}`,
    head: html`<tr><th>job</th><th>state</th><th>last run</th><th>outcome</th><th>D1 queries</th><th>KV ops</th><th>error</th></tr>`,
    rows: jobs.map(
      (j) =>
        html`<tr data-job="${j.kind}"${j.partition === undefined ? "" : html` data-partition="${j.partition}"`}><td>${j.kind}${j.partition === undefined ? "" : ` (partition ${j.partition + 1})`}${j.kind === "mirror" ? html` <span class="url">${j.target}</span>` : ""}</td><td class="${j.state === "dead" || j.state === "failing" ? "bad" : ""}" data-figure="job-state">${j.state}${j.state === "failing" ? ` (${j.attempts} attempts${j.killed > 0 ? `, ${j.killed} killed` : ""})` : ""}</td><td>${when(j.lastRun)}</td><td>${j.outcome ?? ""}</td><td class="num">${j.usage?.d1Queries ?? "—"}</td><td class="num">${j.usage?.kvOperations ?? "—"}</td><td class="${j.error ? "bad" : ""}">${j.error ?? ""}</td></tr>`,
    ),
  });
}
