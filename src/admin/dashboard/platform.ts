/**
 * The platform's page (GET /sitemap-admin/platform, docs/tenants.md "The platform page"): the
 * registered sites, a page of them at a time, each with its health counted and its first problem,
 * worst first within the page, and a link to its own dashboard. No script, like the dashboard.
 */
import { plural } from "../../core/plural.ts";
import type { SiteBody } from "../schemas.ts";
import { type Html, html } from "./html.ts";
import { page } from "./layout.ts";

export interface PlatformPage {
  sites: readonly (SiteBody & { health: NonNullable<SiteBody["health"]> })[];
  /** The `after` of the next page; null on the last. */
  next: string | null;
  /** This page's `after` (null: the first page). */
  after: string | null;
}

const severity = (s: PlatformPage["sites"][number]): number => s.health.red * 1000 + s.health.amber;

export function platformPage(p: PlatformPage): Response {
  const sites = [...p.sites].sort((a, b) => severity(b) - severity(a) || a.origin.localeCompare(b.origin));
  const rows = sites.map((s) => {
    const first = s.health.problems[0];
    const level = s.health.red > 0 ? "red" : s.health.amber > 0 ? "amber" : "ok";
    return html`<tr class="${level}"><td class="wrap"><a href="${s.origin}/sitemap-admin/">${s.host}</a></td>
<td class="num" data-figure="site-${s.host}-red">${s.health.red}</td><td class="num" data-figure="site-${s.host}-amber">${s.health.amber}</td>
<td class="wrap">${first ? first.message : "No problems found."}</td></tr>`;
  });
  const body: Html = html`<header class="top"><h1>Registered sites</h1></header>
<main>
<section class="card"><p class="note">Each site's health is read from its status as its own dashboard shows it; this page holds ${plural(sites.length, "site")}, the worst first.</p>
<div class="scroll"><table class="sites"><thead><tr><th>site</th><th>red</th><th>amber</th><th>first problem</th></tr></thead><tbody>
${rows}
</tbody></table></div>
<p class="paging">${p.after !== null ? html`<a href="?">first page</a> ` : ""}${p.next !== null ? html`<a href="?after=${encodeURIComponent(p.next)}">next page</a>` : ""}</p>
</section>
</main>`;
  return page("Registered sites", body);
}
