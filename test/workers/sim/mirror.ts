/**
 * The simulation's mirror (issue 49, item 8: "mirror commit"): a remote sitemap on the site's own
 * host, faked at the network boundary (`fetch`), whose versions the program changes, and the model's
 * view of what the mirror committed. Only the mirror writes the mirror's locs (the admin commands
 * write the other pool), so what a committed pass leaves is exact: the version it read, every other
 * mirror loc absent. The pass's version is known when its sync was opened and committed within one
 * invocation (the fetch of that invocation); a pass that spanned invocations (a killed step, a
 * retry) or one still open leaves the mirror's locs uncertain until the next exact pass — and the
 * end of every program makes one, so the final crawl checks the mirror exactly.
 */
import { vi } from "vitest";
import type { Model } from "./model.ts";

const DATABASES = ["DB", "PART_B", "PART_C", "PART_D"] as const;
/** The mirror's own locs. */
export const MIRROR_LOCS = 12;

interface Version {
  etag: string;
  /** loc → lastmod */
  entries: Map<string, string>;
}

export class SimMirror {
  readonly url: string;
  readonly pool: string[];
  #versions: Version[];
  /** Versions answered whole (200) since the last observation. */
  #fetched: Version[] = [];
  /** Mirror syncs by id, as last observed. */
  #syncs = new Map<string, string>();
  #fetch: { mockRestore(): void } | null = null;

  constructor(origin: string) {
    this.url = `${origin}/cms/sitemap.xml`;
    this.pool = Array.from({ length: MIRROR_LOCS }, (_, i) => `${origin}/m/${i}`);
    this.#versions = [{ etag: '"v0"', entries: new Map([[this.pool[0]!, "2026-04-01"]]) }];
  }

  /** The site's variables for the mirror: its URL, and no deletion guard (the guard is not what this checks). */
  vars(): Record<string, string> {
    return { MIRROR_SITEMAPS: this.url, MIRROR_MAX_DELETE: "100" };
  }

  /** The remote from now on: `fetch` of the mirror's URL answers its newest version (304 to its ETag), anything else 404. */
  serve(): void {
    this.#fetch = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      if (request.url !== this.url) return new Response("not found", { status: 404 });
      const version = this.#versions[this.#versions.length - 1]!;
      if (request.headers.get("If-None-Match") === version.etag) return new Response(null, { status: 304, headers: { ETag: version.etag } });
      this.#fetched.push(version);
      const urls = [...version.entries].map(([loc, lastmod]) => `<url><loc>${loc}</loc><lastmod>${lastmod}</lastmod></url>`).join("");
      const body = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`;
      return new Response(body, { headers: { "Content-Type": "application/xml", ETag: version.etag } });
    });
  }

  /** The network as it was. */
  stop(): void {
    this.#fetch?.mockRestore();
  }

  /** A new version of the remote: these locs (indexes into the mirror's pool), each with `lastmod`. */
  publish(locs: readonly number[], lastmod: string): void {
    const entries = new Map(locs.map((i) => [this.pool[i % MIRROR_LOCS]!, lastmod] as const));
    this.#versions.push({ etag: `"v${this.#versions.length}"`, entries });
  }

  /** The newest version again under a new ETag: the next heartbeat's pass reads it whole. */
  republish(): void {
    const newest = this.#versions[this.#versions.length - 1]!;
    this.#versions.push({ etag: `"v${this.#versions.length}"`, entries: new Map(newest.entries) });
  }

  /** After an invocation: what the mirror's syncs did since the last one, applied to the model. */
  async observe(env: Env, model: Model): Promise<void> {
    const fetched = this.#fetched.splice(0);
    const now = new Map<string, string>();
    for (const name of DATABASES) {
      const rows = await (env as unknown as Record<string, D1Database>)
        [name]!.prepare("SELECT id, state FROM syncs WHERE json_extract(scope, '$.source') = ?1")
        .bind(`mirror:${this.url}`)
        .all<{ id: string; state: string }>();
      for (const row of rows.results) now.set(row.id, row.state);
    }
    for (const [id, state] of now) {
      const before = this.#syncs.get(id);
      if (before === state) continue;
      const exact = before === undefined && state === "committed" && fetched.length > 0;
      if (exact) this.#apply(model, fetched[fetched.length - 1]!);
      else for (const loc of this.pool) model.unknown(loc);
    }
    this.#syncs = now;
  }

  /** A pass committed whole from `version`: the mirror's locs are exactly it. */
  #apply(model: Model, version: Version): void {
    for (const loc of this.pool) {
      const lastmod = version.entries.get(loc);
      if (lastmod === undefined) model.delete(loc);
      else model.put(loc, lastmod);
    }
  }
}
