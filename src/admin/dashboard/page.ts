/**
 * The dashboard (GET /sitemap-admin/): the site's status drawn as one server-rendered page. It is
 * built from `siteStatus`, the same function GET /sitemap-admin/status answers with, so every
 * figure here equals the status document's. Figures carry `data-figure` names for tests and tools.
 * Problems first (the health list, src/admin/health.ts), then summaries: a section's shards and
 * every long table are collapsed and paged by links (src/admin/dashboard/paging.ts), so the page's
 * size does not grow with the site (docs/dashboard.md "Paging").
 */

import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP } from "../../core/limits.ts";
import { plural } from "../../core/plural.ts";
import { ADMIN_PATH, SIGN_OUT_PATH } from "../auth/paths.ts";
import { type ActionOutcome, actions, auditTrail, outcome } from "./admin-panel.ts";
import { columns, fillBar } from "./charts.ts";
import { crawlersCard, sectionCrawls } from "./crawlers.ts";
import { healthList } from "./health-list.ts";
import { type Html, html } from "./html.ts";
import { jobsTable } from "./jobs.ts";
import { page } from "./layout.ts";
import { DEFAULT_VIEW, type DashboardView, SHARDS_PER_PAGE, pagedTable, pager, sectionAnchor, sectionPaging } from "./paging.ts";
import type { DashboardStatus } from "./status-type.ts";

type Status = DashboardStatus;

const number = (n: number | null | undefined): string => (n === null || n === undefined ? "—" : n.toLocaleString("en-US"));
/** A count Search Console reported; null: it gave none we could read. */
const count = (n: number | null): string => (n === null ? "unknown" : number(n));
function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
const percent = (share: number): string => `${(share * 100).toFixed(share < 0.1 ? 1 : 0)} %`;
const when = (iso: string | null | undefined): string => (iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "—");

const figure = (name: string, value: string, label: string): Html =>
  html`<div class="figure"><span class="value" data-figure="${name}">${value}</span><span class="label">${label}</span></div>`;

/** A site whose listed shards all fit one page shows them all (collapsed); a larger one only the opened section's page. */
function sections(status: Status, view: DashboardView): Html {
  const m = status.manifest;
  if (!m) return html`<p>No manifest yet: nothing has been published for this site.</p>`;
  const fill = m.shardFill;
  const small = fill.length <= SHARDS_PER_PAGE;
  const stored = m.snapshotBytes as Record<string, number | null>;
  const cards = Object.entries(m.sections).map(([name, s]) => {
    const shards = fill.filter((f) => f.section === name);
    const sectionBytes = shards.reduce((sum, f) => sum + f.bytes, 0);
    const paging = sectionPaging(view, name, shards.length);
    // The fullest shard, by the larger of its two fills: the one to watch.
    const share = (f: (typeof shards)[number]) => Math.max(f.urls / MAX_URLS_PER_SITEMAP, f.bytes / MAX_SITEMAP_BYTES);
    const fullest = shards.reduce<(typeof shards)[number] | null>((a, f) => (a === null || share(f) > share(a) ? f : a), null);
    const full = shards.filter((f) => share(f) >= 0.9).length;
    const shown = paging.opened || small ? shards.slice(paging.from, paging.from + SHARDS_PER_PAGE) : [];
    const table =
      shown.length > 0
        ? html`<div class="scroll"><table class="shards"><thead><tr><th>shard</th><th>URLs of ${number(MAX_URLS_PER_SITEMAP)}</th><th>bytes of 50 MiB</th><th>stored (gzip)</th></tr></thead><tbody>
${shown.map(
  (f) => html`<tr><td>${f.document}</td>
<td>${fillBar(f.urls, MAX_URLS_PER_SITEMAP, `${f.document} URLs`)} <span class="num">${number(f.urls)}</span></td>
<td>${fillBar(f.bytes, MAX_SITEMAP_BYTES, `${f.document} bytes`)} <span class="num">${bytes(f.bytes)}</span></td>
<td class="num">${bytes(stored[f.document] ?? null)}</td></tr>`,
)}
</tbody></table></div>`
        : html`<p class="note">Its shards, ${SHARDS_PER_PAGE} a page:</p>`;
    const range =
      shown.length === 0
        ? `${plural(shards.length, "shard")} on ${plural(paging.pages, "page")}`
        : paging.pages > 1
          ? `shards ${number(paging.from + 1)}–${number(paging.from + shown.length)} of ${number(shards.length)} (page ${paging.page} of ${paging.pages})`
          : `${number(shards.length)} ${shards.length === 1 ? "shard" : "shards"}`;
    return html`<section class="${paging.opened ? "card section opened" : "card section"}" id="${sectionAnchor(name)}">
<h3>${name}</h3>
<div class="figures">${figure(`section-${name}-shards`, number(s.shards), "shards")} ${figure(`section-${name}-urls`, number(s.urls), "URLs")} ${figure(`section-${name}-bytes`, bytes(sectionBytes), "XML")}</div>
${fullest ? html`<p class="note">Fullest ${fullest.document}: ${fillBar(share(fullest), 1, `${fullest.document} fill`)} ${percent(share(fullest))}${full > 0 ? html`; ${number(full)} at 90 % or more (fine: new URLs go to the next shard)` : ""}</p>` : ""}
${sectionCrawls(status.crawlers, name)}
<details${paging.opened ? html` open` : ""}><summary>${range}</summary>
${table}
${pager(shown.length > 0 ? paging.page : null, paging.pages, paging.link, `${name} shard pages`)}</details>
</section>`;
  });
  return html`<div class="sections">${cards}</div>`;
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

/** A chart's values as text with their unit: the last run's and the highest. */
const chartValues = (values: readonly number[], unit: string): string =>
  `last ${number(values.at(-1) ?? 0)} ${unit}, highest ${number(Math.max(0, ...values))} ${unit}`;

function runs(status: Status): Html {
  const list = (status.runs as RunRow[]).slice().reverse(); // oldest first, as time runs
  if (list.length === 0) return html`<p>No regeneration has run yet.</p>`;
  const label = (r: RunRow) =>
    `${when(r.startedAt)}: ${number(r.durationMs)} ms, ${plural(r.rowsRead ?? 0, "row")}, ${plural(r.shardsRendered ?? 0, "shard")}`;
  return html`<div class="charts">
<figure>${columns(
    list.map((r) => ({ value: r.durationMs ?? 0, label: label(r), bad: !r.ok })),
    "duration per run",
  )}<figcaption>duration per run: ${chartValues(
    list.map((r) => r.durationMs ?? 0),
    "ms",
  )}</figcaption></figure>
<figure>${columns(
    list.map((r) => ({ value: r.rowsRead ?? 0, label: label(r), bad: !r.ok })),
    "rows read per run",
  )}<figcaption>rows read per run: ${chartValues(
    list.map((r) => r.rowsRead ?? 0),
    "rows",
  )}</figcaption></figure>
<figure>${columns(
    list.map((r) => ({ value: r.shardsRendered ?? 0, label: label(r), bad: !r.ok })),
    "shards rendered per run",
  )}<figcaption>shards rendered per run: ${chartValues(
    list.map((r) => r.shardsRendered ?? 0),
    "shards",
  )}</figcaption></figure>
</div>
<details class="list"><summary>The last ${list.length === 1 ? "run" : `${list.length} runs`}${list.some((r) => !r.ok) ? html`, <span class="bad">${list.filter((r) => !r.ok).length} failed</span>` : ""}</summary>
<div class="scroll"><table><thead><tr><th>started</th><th>trigger</th><th>duration</th><th>rows read</th><th>shards rendered</th><th></th></tr></thead><tbody>
${list
  .slice()
  .reverse()
  .map(
    (r) =>
      html`<tr><td>${when(r.startedAt)}</td><td>${r.trigger ?? ""}</td><td class="num">${number(r.durationMs)} ms</td><td class="num">${number(r.rowsRead)}</td><td class="num">${number(r.shardsRendered)}</td><td>${r.ok ? "ok" : html`<span class="bad">failed</span>`}</td></tr>`,
  )}
</tbody></table></div></details>`;
}

function regeneration(status: Status, view: DashboardView): Html {
  const r = status.regeneration;
  const without = status.manifest?.withoutSnapshot ?? [];
  return html`<div class="figures">${figure("pending-shards", number(r.pendingShards), "shards pending")} ${figure("failed-documents", number(r.failed.length), "failing")} ${figure("without-snapshot", number(without.length), "served live")}</div>
<p>${r.enabled ? (r.running ? "A regeneration is running." : "Regeneration is on.") : html`<span class="bad">Regeneration is off.</span>`} ${r.passPending ? "A site pass is under way." : ""}</p>
${
  r.failed.length > 0
    ? pagedTable(view, {
        list: "failed",
        summary: `${plural(r.failed.length, "document")} failing to store`,
        head: html`<tr><th>document</th><th>error</th><th>attempts</th><th>retry</th></tr>`,
        rows: r.failed.map(
          (f) => html`<tr><td>${f.document}</td><td class="bad">${f.error}</td><td class="num">${f.attempts}</td><td>${when(f.retryAt)}</td></tr>`,
        ),
      })
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

function mirrors(status: Status, view: DashboardView): Html {
  if (status.mirrors.length === 0) return html`<p>No mirrored sitemaps.</p>`;
  const failing = status.mirrors.filter((m) => m.state === "failing").length;
  // repaired: entries the remote lists that failed validation and kept their URL (docs/mirror.md).
  return pagedTable(view, {
    list: "mirrors",
    summary: html`${number(status.mirrors.length)} mirrored sitemaps${failing > 0 ? html`, <span class="bad">${number(failing)} failing</span>` : ""}`,
    head: html`<tr><th>mirror</th><th>state</th><th>last sync</th><th>repaired</th><th>last error</th></tr>`,
    rows: status.mirrors.map(
      (m) =>
        html`<tr><td class="url">${m.url}</td><td class="${m.state === "failing" ? "bad" : ""}">${m.state}</td><td>${when(m.lastSyncedAt)}</td><td class="num">${number(m.counts.repaired)}</td><td class="${m.lastError ? "bad" : ""}">${m.lastError ?? ""}</td></tr>`,
    ),
  });
}

function searchConsole(status: Status, view: DashboardView): Html {
  const g = status.searchConsole;
  if (!g.enabled) return html`<p>Search Console is not configured (GSC_SERVICE_ACCOUNT).</p>`;
  const head = html`<p>Last read ${when(g.lastRead)}${g.httpStatus !== null ? html` (HTTP ${g.httpStatus})` : ""}; last success ${when(g.lastSuccess)}.
${g.lastError ? html`<span class="bad">${g.lastError}</span>` : ""} ${g.nextAttempt ? html`Next attempt ${when(g.nextAttempt)}.` : ""}</p>`;
  if (g.sitemaps.length === 0) return html`${head}<p>Search Console lists no sitemap for this site yet.</p>`;
  const withErrors = g.sitemaps.filter((m) => m.hasErrors).length;
  return html`${head}${pagedTable(view, {
    list: "gsc",
    summary: html`${number(g.sitemaps.length)} sitemaps reported${withErrors > 0 ? html`, <span class="bad">${number(withErrors)} with errors</span>` : ""}`,
    head: html`<tr><th>sitemap</th><th>last downloaded</th><th>errors</th><th>warnings</th><th>submitted</th><th></th></tr>`,
    rows: g.sitemaps.map(
      (m) =>
        html`<tr data-sitemap="${m.path}"><td class="url">${m.path}</td><td data-figure="gsc-downloaded">${when(m.lastDownloaded)}</td><td class="${m.hasErrors ? "num bad" : "num"}" data-figure="gsc-errors">${count(m.errors)}</td><td class="num">${count(m.warnings)}</td><td class="num">${count(m.submitted)}</td><td>${m.notDownloadedSinceChange ? html`<span class="warn">not downloaded since it changed</span>` : ""} ${m.isPending ? "pending" : ""} ${m.hasErrors ? html`<span class="bad">has errors</span>` : ""}</td></tr>`,
    ),
  })}`;
}

/** What the dashboard shows beside the status: the session's actions (its CSRF token) and the last one's outcome. */
export interface DashboardSession {
  csrf: string | null;
  done: ActionOutcome | null;
  /** Whether to link the platform's page of registered sites (the platform credential, a registry bound). */
  platformLink?: boolean;
}

export function dashboardPage(status: Status, session: DashboardSession = { csrf: null, done: null }, view: DashboardView = DEFAULT_VIEW): Response {
  const m = status.manifest;
  const body = html`<header>
<h1>Sitemaps of <span data-figure="site">${status.site}</span></h1>
<nav class="links"><a href="/sitemap.xml">the sitemap index</a>${session.platformLink ? html` · <a href="${ADMIN_PATH}/platform">registered sites</a>` : ""}</nav>
${actions(session.csrf)}
<form method="post" action="${SIGN_OUT_PATH}"><button type="submit">Sign out</button></form>
</header>
<main>
${outcome(session.done)}
${healthList(status.health)}
<h2>Site</h2>
<div class="figures">${figure("shards", number(m?.shards ?? 0), "shards")} ${figure("urls", number(m?.urls ?? 0), "URLs")} ${figure("bytes", bytes(m?.bytes ?? 0), "XML")} ${figure("snapshots", number(m?.snapshots ?? 0), "snapshots")} ${figure("index-stored", bytes(m?.snapshotBytes.index ?? null), "index stored")}</div>
<p class="note">${m ? html`version ${m.version}, built ${when(m.builtAt)}, newest change ${when(m.newestChange)}` : ""}</p>
${status.configuration.disabled.length > 0 ? html`<p class="bad">Off because of a bad variable: ${status.configuration.disabled.map((d) => `${d.feature} (${d.variable} ${d.rule})`).join("; ")}</p>` : ""}
${databaseList(status)}
<h2>Crawlers</h2>
${crawlersCard(status.crawlers)}
<h2>Sections and shards</h2>
${sections(status, view)}
<h2>Regeneration</h2>
${regeneration(status, view)}
${partitions(status)}
${runs(status)}
<h2>Notifications</h2>
${notifications(status)}
<h2>Mirrors</h2>
${mirrors(status, view)}
<h2>Search Console</h2>
${searchConsole(status, view)}
<h2>Background jobs</h2>
${jobsTable(status.jobs, view)}
<h2>Admin writes</h2>
${auditTrail(status, view)}
</main>`;
  return page(`Sitemaps · ${status.site}`, body);
}
