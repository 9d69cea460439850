/**
 * The dashboard (GET /sitemap-admin/): the site's status drawn as one server-rendered page. It is
 * built from `siteStatus`, the same function GET /sitemap-admin/status answers with, so every
 * figure here equals the status document's. Figures carry `data-figure` names for tests and tools.
 */
import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP } from "../../core/limits.ts";
import { SIGN_OUT_PATH } from "../auth/paths.ts";
import type { siteStatus } from "../status.ts";
import { type ActionOutcome, actions, auditTrail, outcome } from "./admin-panel.ts";
import { columns, fillBar } from "./charts.ts";
import { type Html, html } from "./html.ts";
import { jobsTable } from "./jobs.ts";
import { page } from "./layout.ts";

type Status = Awaited<ReturnType<typeof siteStatus>>;

/** Shards listed per section before "and N more": a page stays readable at millions of URLs. */
const SHARDS_SHOWN = 200;

const number = (n: number | null | undefined): string => (n === null || n === undefined ? "—" : n.toLocaleString("en-US"));
/** A count Search Console reported; null: it gave none we could read. */
const count = (n: number | null): string => (n === null ? "unknown" : number(n));
function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
const when = (iso: string | null | undefined): string => (iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "—");

const figure = (name: string, value: string, label: string): Html =>
  html`<div class="figure"><span class="value" data-figure="${name}">${value}</span><span class="label">${label}</span></div>`;

function sections(status: Status): Html {
  const m = status.manifest;
  if (!m) return html`<p>No manifest yet: nothing has been published for this site.</p>`;
  const fill = m.shardFill;
  const rows = Object.entries(m.sections).map(([name, s]) => {
    const shards = fill.filter((f) => f.section === name);
    const sectionBytes = shards.reduce((sum, f) => sum + f.bytes, 0);
    const shown = shards.slice(0, SHARDS_SHOWN);
    return html`<section class="card">
<h3>${name}</h3>
<div class="figures">${figure(`section-${name}-shards`, number(s.shards), "shards")} ${figure(`section-${name}-urls`, number(s.urls), "URLs")} ${figure(`section-${name}-bytes`, bytes(sectionBytes), "XML")}</div>
<div class="scroll"><table class="shards"><thead><tr><th>shard</th><th>URLs of ${number(MAX_URLS_PER_SITEMAP)}</th><th>bytes of 50 MiB</th><th>stored (gzip)</th></tr></thead><tbody>
${shown.map(
  (f) => html`<tr><td>${f.document}</td>
<td>${fillBar(f.urls, MAX_URLS_PER_SITEMAP, `${f.document} URLs`)} <span class="num">${number(f.urls)}</span></td>
<td>${fillBar(f.bytes, MAX_SITEMAP_BYTES, `${f.document} bytes`)} <span class="num">${bytes(f.bytes)}</span></td>
<td class="num">${bytes((m.snapshotBytes as Record<string, number | null>)[f.document] ?? null)}</td></tr>`,
)}
</tbody></table></div>
${shards.length > shown.length ? html`<p class="note">and ${number(shards.length - shown.length)} more shards (GET /sitemap-admin/status lists all)</p>` : ""}
</section>`;
  });
  return html`${rows}`;
}

interface RunRow {
  id: number;
  ok: boolean;
  startedAt?: string;
  trigger?: string;
  durationMs?: number;
  rowsRead?: number;
  shardsRendered?: number;
}

function runs(status: Status): Html {
  const list = (status.runs as RunRow[]).slice().reverse(); // oldest first, as time runs
  if (list.length === 0) return html`<p>No regeneration has run yet.</p>`;
  const label = (r: RunRow) => `${when(r.startedAt)}: ${number(r.durationMs)} ms, ${number(r.rowsRead)} rows, ${number(r.shardsRendered)} shards`;
  return html`<div class="charts">
<figure>${columns(
    list.map((r) => ({ value: r.durationMs ?? 0, label: label(r), bad: !r.ok })),
    "duration per run",
  )}<figcaption>duration (ms)</figcaption></figure>
<figure>${columns(
    list.map((r) => ({ value: r.rowsRead ?? 0, label: label(r), bad: !r.ok })),
    "rows read per run",
  )}<figcaption>rows read</figcaption></figure>
<figure>${columns(
    list.map((r) => ({ value: r.shardsRendered ?? 0, label: label(r), bad: !r.ok })),
    "shards rendered per run",
  )}<figcaption>shards rendered</figcaption></figure>
</div>
<div class="scroll"><table><thead><tr><th>started</th><th>trigger</th><th>duration</th><th>rows read</th><th>shards rendered</th><th></th></tr></thead><tbody>
${list
  .slice()
  .reverse()
  .map(
    (r) =>
      html`<tr><td>${when(r.startedAt)}</td><td>${r.trigger ?? ""}</td><td class="num">${number(r.durationMs)} ms</td><td class="num">${number(r.rowsRead)}</td><td class="num">${number(r.shardsRendered)}</td><td>${r.ok ? "ok" : html`<span class="bad">failed</span>`}</td></tr>`,
  )}
</tbody></table></div>`;
}

function regeneration(status: Status): Html {
  const r = status.regeneration;
  const without = status.manifest?.withoutSnapshot ?? [];
  return html`<div class="figures">${figure("pending-shards", number(r.pendingShards), "shards pending")} ${figure("failed-documents", number(r.failed.length), "failing")} ${figure("without-snapshot", number(without.length), "served live")}</div>
<p>${r.enabled ? (r.running ? "A regeneration is running." : "Regeneration is on.") : html`<span class="bad">Regeneration is off.</span>`} ${r.passPending ? "A site pass is under way." : ""}</p>
${
  r.failed.length > 0
    ? html`<div class="scroll"><table><thead><tr><th>document</th><th>error</th><th>attempts</th><th>retry</th></tr></thead><tbody>${r.failed.map(
        (f) => html`<tr><td>${f.document}</td><td class="bad">${f.error}</td><td class="num">${f.attempts}</td><td>${when(f.retryAt)}</td></tr>`,
      )}</tbody></table></div>`
    : ""
}`;
}

/** A partitioned site whose SITE_DATABASES list does not keep its partitions' databases in their places (src/partitions/database-list.ts). */
function databaseList(status: Status): Html {
  const problem = status.partitions?.databases?.problem;
  if (!problem) return html``;
  return html`<p class="bad" data-figure="database-list">${problem}. Until the list is fixed and deployed, nothing of this site is written, moved, or read from its databases.</p>`;
}

/** A site over several databases: each partition's regeneration, and a move under way. */
function partitions(status: Status): Html {
  const p = status.partitions;
  if (!p) return html``;
  // The problem is shown at the top of the page; without a layout, the table would say nothing true.
  if (p.databases?.problem) return html``;
  const move = p.move
    ? html`<p>A database is being filled: ${p.settled} → ${p.move.target} partitions (${p.move.copying ? `copying partition ${p.move.copying.partition}` : p.move.building ? `planning the manifest of partition ${p.move.building.partition}` : "catching up with the writes made meanwhile, then the switch"}).</p>`
    : "";
  return html`${move}<div class="scroll"><table><thead><tr><th>partition</th><th>served</th><th>running</th><th>pending shards</th><th>last run</th></tr></thead><tbody>${p.partitions.map(
    (row) =>
      html`<tr><td class="num">${row.partition}</td><td>${row.served ? "yes" : "not yet"}</td><td>${row.running ? "yes" : "no"}</td><td class="num">${row.pendingShards}</td><td>${row.lastRun ? (row.lastRun.ok ? "ok" : html`<span class="bad">failed</span>`) : "none"}</td></tr>`,
  )}</tbody></table></div>`;
}

interface NotificationRow {
  target: string;
  lastSuccess: string | null;
  lastError: string | null;
  pending: number;
  httpStatus: number | null;
  retired: boolean;
}

function notifications(status: Status): Html {
  const list = status.notifications as unknown as NotificationRow[];
  if (list.length === 0) return html`<p>No notification target is configured.</p>`;
  return html`<div class="scroll"><table><thead><tr><th>target</th><th>last success</th><th>pending</th><th>last answer</th><th>last error</th></tr></thead><tbody>
${list.map(
  (n) =>
    html`<tr><td>${n.target}${n.retired ? " (retired)" : ""}</td><td>${when(n.lastSuccess)}</td><td class="num">${number(n.pending)}</td><td class="num">${n.httpStatus ?? "—"}</td><td class="${n.lastError ? "bad" : ""}">${n.lastError ?? ""}</td></tr>`,
)}
</tbody></table></div>`;
}

function mirrors(status: Status): Html {
  if (status.mirrors.length === 0) return html`<p>No mirrored sitemaps.</p>`;
  // repaired: entries the remote lists that failed validation and kept their URL (docs/mirror.md).
  return html`<div class="scroll"><table><thead><tr><th>mirror</th><th>state</th><th>last sync</th><th>repaired</th><th>last error</th></tr></thead><tbody>
${status.mirrors.map(
  (m) =>
    html`<tr><td class="url">${m.url}</td><td class="${m.state === "failing" ? "bad" : ""}">${m.state}</td><td>${when(m.lastSyncedAt)}</td><td class="num">${number(m.counts.repaired)}</td><td class="${m.lastError ? "bad" : ""}">${m.lastError ?? ""}</td></tr>`,
)}
</tbody></table></div>`;
}

function searchConsole(status: Status): Html {
  const g = status.searchConsole;
  if (!g.enabled) return html`<p>Search Console is not configured (GSC_SERVICE_ACCOUNT).</p>`;
  const head = html`<p>Last read ${when(g.lastRead)}${g.httpStatus !== null ? html` (HTTP ${g.httpStatus})` : ""}; last success ${when(g.lastSuccess)}.
${g.lastError ? html`<span class="bad">${g.lastError}</span>` : ""} ${g.nextAttempt ? html`Next attempt ${when(g.nextAttempt)}.` : ""}</p>`;
  if (g.sitemaps.length === 0) return html`${head}<p>Search Console lists no sitemap for this site yet.</p>`;
  return html`${head}<div class="scroll"><table><thead><tr><th>sitemap</th><th>last downloaded</th><th>errors</th><th>warnings</th><th>submitted</th><th></th></tr></thead><tbody>
${g.sitemaps.map(
  (m) =>
    html`<tr data-sitemap="${m.path}"><td class="url">${m.path}</td><td data-figure="gsc-downloaded">${when(m.lastDownloaded)}</td><td class="${m.hasErrors ? "num bad" : "num"}" data-figure="gsc-errors">${count(m.errors)}</td><td class="num">${count(m.warnings)}</td><td class="num">${count(m.submitted)}</td><td>${m.notDownloadedSinceChange ? html`<span class="warn">not downloaded since it changed</span>` : ""} ${m.isPending ? "pending" : ""} ${m.hasErrors ? html`<span class="bad">has errors</span>` : ""}</td></tr>`,
)}
</tbody></table></div>`;
}

/** What the dashboard shows beside the status: the session's actions (its CSRF token) and the last one's outcome. */
export interface DashboardSession {
  csrf: string | null;
  done: ActionOutcome | null;
}

export function dashboardPage(status: Status, session: DashboardSession = { csrf: null, done: null }): Response {
  const m = status.manifest;
  const body = html`<header>
<h1>Sitemaps of <span data-figure="site">${status.site}</span></h1>
${actions(session.csrf)}
<form method="post" action="${SIGN_OUT_PATH}"><button type="submit">Sign out</button></form>
</header>
<main>
${outcome(session.done)}
<div class="figures">${figure("shards", number(m?.shards ?? 0), "shards")} ${figure("urls", number(m?.urls ?? 0), "URLs")} ${figure("bytes", bytes(m?.bytes ?? 0), "XML")} ${figure("snapshots", number(m?.snapshots ?? 0), "snapshots")} ${figure("index-stored", bytes(m?.snapshotBytes.index ?? null), "index stored")}</div>
<p class="note">${m ? html`version ${m.version}, built ${when(m.builtAt)}, newest change ${when(m.newestChange)}` : ""}</p>
${status.configuration.disabled.length > 0 ? html`<p class="bad">Off because of a bad variable: ${status.configuration.disabled.map((d) => `${d.feature} (${d.variable} ${d.rule})`).join("; ")}</p>` : ""}
${databaseList(status)}
<h2>Sections and shards</h2>
${sections(status)}
<h2>Regeneration</h2>
${regeneration(status)}
${partitions(status)}
${runs(status)}
<h2>Notifications</h2>
${notifications(status)}
<h2>Mirrors</h2>
${mirrors(status)}
<h2>Search Console</h2>
${searchConsole(status)}
<h2>Background jobs</h2>
${jobsTable(status.jobs)}
<h2>Admin writes</h2>
${auditTrail(status)}
</main>`;
  return page(`Sitemaps · ${status.site}`, body);
}
