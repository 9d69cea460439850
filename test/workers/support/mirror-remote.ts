/**
 * Mirrors in workerd with real D1, the remote faked at the fetch boundary: documents by URL,
 * every request counted per run, each run a cron run of its own (a later `now`).
 */
import { env as baseEnv } from "cloudflare:workers";
import type { MirrorBudget } from "../../../src/mirror/deps.ts";
import type { Fetcher } from "../../../src/mirror/fetch.ts";
import { runMirror } from "../../../src/mirror/run.ts";
import { type MirrorRunOptions, mirrorAll } from "../../../src/mirror/scheduled.ts";
import { mirrorStatus } from "../../../src/mirror/status.ts";
import type { MirrorStateStore } from "../../../src/mirror/store.ts";
import { services } from "../../../src/services.ts";
import type { Services } from "../../../src/services-type.ts";
import { rebuildManifest } from "../../../src/sitemaps.ts";
import type { RecordSync } from "../../../src/store/port.ts";
import { locsOf } from "../../shared/locs.ts";
import { call, freshOrigin } from "../support.ts";

export type Answer = (request: { url: string; headers: Headers }) => Response | Promise<Response>;

export const urlset = (entries: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries.join("")}</urlset>`;
export const url = (loc: string, inner = "") => `<url><loc>${loc}</loc>${inner}</url>`;
export const index = (locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<sitemap><loc>${l}</loc></sitemap>`).join("")}</sitemapindex>`;
/** A document with an ETag of its own (a CMS's static files): an If-None-Match of it is answered 304. */
export const xml =
  (body: string, etag?: string): Answer =>
  ({ headers }) =>
    etag !== undefined && headers.get("If-None-Match") === etag
      ? new Response(null, { status: 304, headers: { ETag: etag } })
      : new Response(body, { headers: { "Content-Type": "application/xml", ...(etag ? { ETag: etag } : {}) } });

/** A deployment serving one fresh site with the given mirrors (paths on that site), and a fake remote. */
export function mirrorSite(paths: readonly string[], vars: Record<string, string> = {}, ports?: { mirrors: MirrorStateStore; sync: RecordSync }) {
  const origin = freshOrigin("mirror");
  const urls = paths.map((p) => `${origin}${p}`);
  const env = { ...baseEnv, URL_SOURCE: "d1", SITES: origin, MIRROR_SITEMAPS: urls.join(" "), ...vars } as Env;
  const wired = services(env);
  // The mirror's ports in memory instead of D1 (support/memory-mirror-ports.ts), when given.
  const s: Services = ports ? { ...wired, mirrors: ports.mirrors, store: { ...wired.store, sync: ports.sync } } : wired;
  const answers = new Map<string, Answer>();
  /** Requests of the current run, by URL; `perRun` keeps each run's total. */
  let asked: string[] = [];
  const perRun: number[] = [];
  const fetch: Fetcher = async (input, init) => {
    asked.push(input);
    const answer = answers.get(input);
    return answer ? answer({ url: input, headers: new Headers(init.headers) }) : new Response("not found", { status: 404 });
  };
  let last = 0;
  const run = async (options: Omit<MirrorRunOptions, "fetch" | "now"> & { budget?: MirrorBudget } = {}) => {
    const now = Math.max(Date.now(), last + 1);
    last = now;
    asked = [];
    const outcomes = await mirrorAll([s], { ...options, now, fetch });
    perRun.push(asked.length);
    return outcomes;
  };
  /** One mirror's turn, called directly (no round-robin). */
  const runOne = async (mirror: string, budget: MirrorBudget = { requests: 1000, records: 1000 }) => {
    const now = Math.max(Date.now(), last + 1);
    last = now;
    asked = [];
    const outcome = await runMirror({ config: s.config, sync: s.store.sync!, state: s.mirrors!, fetch }, mirror, budget, now);
    perRun.push(asked.length);
    return outcome;
  };
  const status = async () => mirrorStatus(s.mirrors, urls);
  const live = async () =>
    (await baseEnv.DB.prepare("SELECT loc FROM urls WHERE origin = ?1 AND deleted = 0 ORDER BY loc").bind(origin).all<{ loc: string }>()).results.map(
      (r) => r.loc,
    );
  /** What the Worker serves: every loc of every shard its index lists, after a regeneration. */
  const served = async () => {
    await rebuildManifest(s, origin);
    const out: string[] = [];
    for (const shard of locsOf(await (await call(env, `${origin}/sitemap.xml`)).text())) out.push(...locsOf(await (await call(env, shard)).text()));
    return out.sort();
  };
  return { origin, urls, env, s, answers, fetch, run, runOne, status, live, served, perRun, asked: () => asked };
}
