/**
 * What the simulation checks against its model (issue 49, item 8): the admin API's answer for every
 * loc of the pool (after each flip), and a crawl of the index and every shard it lists through the
 * Worker's fetch (at the end): each acknowledged loc served exactly once with its last acknowledged
 * value, nothing deleted or dropped by a committed sync served.
 */
import { partitionOf } from "../../../src/partitions/home.ts";
import { locsOf } from "../../shared/locs.ts";
import { call } from "../support.ts";
import type { Model } from "./model.ts";

export const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

export class Violation extends Error {}

function expectValue(model: Model, loc: string, served: string | null, where: string): void {
  if (model.uncertain.has(loc)) return;
  const expected = model.live.get(loc) ?? null;
  if (expected === null && served !== null) {
    const why = model.droppedBySync.has(loc) ? "dropped by a committed sync" : "deleted";
    throw new Violation(`${where}: ${loc} is served (lastmod ${served}) but was ${why}`);
  }
  if (expected !== null && served === null) throw new Violation(`${where}: ${loc} (acknowledged, lastmod ${expected}) is not served`);
  if (expected !== null && served !== null && !served.startsWith(expected))
    throw new Violation(`${where}: ${loc} is served with lastmod ${served}, its last acknowledged value is ${expected}`);
}

/** Every loc of the pool as the admin API answers it (GET /sitemap-admin/urls?loc=). */
export async function checkAdmin(env: Env, origin: string, pool: readonly string[], model: Model, where: string): Promise<void> {
  for (const loc of pool) {
    const res = await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: AUTH });
    if (res.status !== 200 && res.status !== 404) throw new Violation(`${where}: GET urls?loc=${loc} answered ${res.status}: ${await res.text()}`);
    const served = res.status === 404 ? null : (((await res.json()) as { lastmod?: string | null }).lastmod ?? "");
    expectValue(model, loc, served, `${where} (admin API)`);
  }
}

/** `<url>` entries of a sitemap document: loc → lastmod ("" when none), every occurrence. */
function entriesOf(xml: string): [string, string][] {
  return [...xml.matchAll(/<url>([\s\S]*?)<\/url>/g)].map((m) => {
    const [loc] = locsOf(`<urlset><url>${m[1]}</url></urlset>`);
    const lastmod = /<lastmod>([^<]*)<\/lastmod>/.exec(m[1]!)?.[1] ?? "";
    return [loc!, lastmod];
  });
}

async function get(env: Env, url: string, where: string): Promise<string> {
  const res = await call(env, url);
  if (res.status !== 200) throw new Violation(`${where}: GET ${url} answered ${res.status}`);
  return res.text();
}

/** The index and every shard it lists, crawled through fetch. */
export async function checkCrawl(env: Env, origin: string, pool: readonly string[], model: Model, where: string): Promise<void> {
  const live = [...model.live.keys()].filter((loc) => !model.uncertain.has(loc));
  const index = await call(env, `${origin}/sitemap.xml`);
  if (index.status === 404 && live.length === 0) return;
  if (index.status !== 200) throw new Violation(`${where}: the index answered ${index.status}`);
  const shards = locsOf(await index.text());
  const served = new Map<string, string>();
  for (const shard of shards) {
    for (const [loc, lastmod] of entriesOf(await get(env, shard, where))) {
      if (served.has(loc)) throw new Violation(`${where}: ${loc} is served twice (again in ${shard})`);
      served.set(loc, lastmod);
    }
  }
  for (const loc of pool) expectValue(model, loc, served.get(loc) ?? null, `${where} (crawl)`);
}

/**
 * SQL's served rows are the layout's (migration 0024): in each of the site's databases, a row is
 * marked as moved away under the current count exactly when its loc's home under that count is
 * another database — what the move wrote agrees with the hash (src/partitions/home.ts).
 */
export async function checkMarkers(databases: readonly D1Database[], origin: string, settled: number, where: string): Promise<void> {
  for (const [p, db] of databases.slice(0, settled).entries()) {
    const { results } = await db.prepare("SELECT loc, moved_in FROM urls WHERE origin = ?1").bind(origin).all<{ loc: string; moved_in: number | null }>();
    for (const row of results) {
      const hiddenInSql = row.moved_in !== null && row.moved_in <= settled;
      if (hiddenInSql !== (partitionOf(row.loc, settled) !== p))
        throw new Violation(
          `${where}: ${row.loc} in database ${p} is ${hiddenInSql ? "" : "not "}hidden in SQL (moved_in ${row.moved_in}), its home is ${partitionOf(row.loc, settled)}`,
        );
    }
  }
}
