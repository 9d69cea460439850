/**
 * What `npm start` prints: one line per step, then where to look (the dashboard first), then the
 * requests `wrangler dev` logs. Pure, so that the shape is tested without starting anything.
 */
import { stripVTControlCharacters } from "node:util";
import type { DemoSitesResult, MigrationsApplied, SeedResult } from "./local-db.ts";
import { DEFAULT_LOCAL_ORIGIN } from "./local-server.ts";

const DONE = "✓";

export function stepLine(text: string): string {
  return `${DONE} ${text}`;
}

export function migrationsLine(databases: readonly MigrationsApplied[]): string {
  const each = databases.map(({ binding, applied }) =>
    applied === 0 ? `${binding}: up to date` : applied === null ? `${binding}: applied` : `${binding}: ${applied} new`,
  );
  return stepLine(`D1 migrations applied (${each.join(", ") || "no D1 database bound"})`);
}

export function seedLine(seed: SeedResult, origin: string, ms: number): string {
  const store = `local ${seed.store.toUpperCase()}`;
  if (seed.seeded > 0) {
    return stepLine(
      `demo seeded: ${seed.seeded.toLocaleString("en-US")} URLs into ${store} for ${origin} (${seed.shards} shards, ${(ms / 1000).toFixed(1)} s)`,
    );
  }
  const rebuilt = seed.manifestRebuilt ? "; its manifest was behind its rows: rebuilt" : "";
  return stepLine(`demo not seeded: ${store} already has URLs for ${origin}${rebuilt}`);
}

/** `--demo-sites N`: what was registered, and how to reach a site (its `*.test` host resolves nowhere by itself). */
export function demoSitesLine(sites: DemoSitesResult, ms: number): string {
  const first = sites.origins[0] ?? "";
  const last = sites.origins.at(-1) ?? "";
  const range = sites.origins.length > 1 ? `${first} … ${last}` : first;
  const host = first ? new URL(first).host : "";
  return stepLine(
    `demo sites: ${sites.origins.length} registered sites ${range} (${sites.registered} new, ${sites.seeded.toLocaleString("en-US")} URLs seeded, ${(ms / 1000).toFixed(1)} s); ` +
      `reach one with curl --resolve ${host}:127.0.0.1 ${first}/sitemap.xml`,
  );
}

/** How the dashboard is signed in to, or why it is off. */
export type AdminAccess = { token: "from"; where: string } | { token: "missing"; where: string };

/** The list of URLs to open, the dashboard first; each line `  label  url  (note)`. */
export function whereToLook(origin: string, admin: AdminAccess, verbose: boolean, robotsNote = ""): string[] {
  const dashboardNote = admin.token === "from" ? `sign in with ADMIN_TOKEN from ${admin.where}` : `off: set ADMIN_TOKEN in ${admin.where}`;
  const rows: [string, string, string][] = [
    ["dashboard", `${origin}/sitemap-admin/`, dashboardNote],
    ["index", `${origin}/sitemap.xml`, "in a browser tab: the browser view"],
    ["a shard", `${origin}/sitemap-products-1.xml`, ".xml.gz for the gzip file"],
    ["robots.txt", `${origin}/robots.txt`, robotsNote],
    ["run the cron", `${origin}/__scheduled?cron=17+*+*+*+*`, "the heartbeat: queues each site's jobs"],
    ["status JSON", `${origin}/sitemap-admin/status`, "Authorization: Bearer <ADMIN_TOKEN>"],
    ["import", `npm run import -- my-sitemap.xml.gz${origin === DEFAULT_LOCAL_ORIGIN ? "" : ` --url ${origin}`}`, ""],
  ];
  const labelWidth = Math.max(...rows.map(([label]) => label.length)) + 1;
  const urlWidth = Math.max(...rows.map(([, url]) => url.length));
  return [
    `edge-sitemaps is running on ${origin}:`,
    ...rows.map(([label, url, note]) => `  ${`${label}:`.padEnd(labelWidth)} ${note ? `${url.padEnd(urlWidth)}  (${note})` : url}`),
    verbose ? "Ctrl-C stops it." : "Requests are logged below; Ctrl-C stops it. wrangler's own output: npm start -- --verbose",
  ];
}

/**
 * `wrangler dev`'s output while it starts (banner, the bindings table, "Using secrets…",
 * "Starting local server…") is held back; what follows "Ready on" (requests, the Worker's own
 * logs and errors) passes. Wrangler's warning and error blocks (`▲ [WARNING]`, `✘ [ERROR]`: its
 * configuration, the user's to act on) pass at once; everything held is there to print when
 * wrangler exits before it is ready.
 */
export class DevOutputGate {
  #ready = false;
  #inBlock = false;
  readonly held: string[] = [];

  get ready(): boolean {
    return this.#ready;
  }

  /** A line of wrangler's output: whether to print it now, and whether it says the server is ready. */
  line(raw: string): { show: boolean; ready: boolean } {
    if (this.#ready) return { show: true, ready: false };
    const text = stripVTControlCharacters(raw);
    if (/\bReady on https?:\/\//.test(text)) {
      this.#ready = true;
      return { show: false, ready: true };
    }
    if (/^\s*[▲✘] \[(WARNING|ERROR)\]/.test(text)) this.#inBlock = true;
    if (this.#inBlock) {
      // A block's own lines are indented (its blank lines too): an empty line ends it.
      if (text === "") this.#inBlock = false;
      return { show: true, ready: false };
    }
    this.held.push(raw);
    return { show: false, ready: false };
  }
}
