/**
 * One site over several D1 databases (SITE_DATABASES "origin=DB,PART_B,PART_C"): records spread by
 * the hash of their loc, each partition a complete store of its share, one index listing every
 * partition's shards under unique URLs, writes, deletes and syncs routed, each loc exactly once.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { SHARD_SPAN } from "../../src/partitions/keys.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const JSON_TYPE = { "Content-Type": "application/json" };
const DATABASES = ["DB", "PART_B", "PART_C"] as const;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

function newSite(label: string, vars: Record<string, string> = {}): { origin: string; env: Env } {
  const origin = freshOrigin(label);
  const env = {
    ...baseEnv,
    SITES: origin,
    SITE_DATABASES: `${origin}=${DATABASES.join(",")}`,
    MAX_URLS_PER_SHARD: "40",
    INDEXNOW_ENDPOINT: "",
    PING_URLS: "",
    ...vars,
  } as Env;
  return { origin, env };
}

async function admin(env: Env, origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await call(env, `${origin}/sitemap-admin${path}`, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : JSON_TYPE) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = await res.text();
  try {
    return { status: res.status, json: JSON.parse(answer) as Record<string, unknown> };
  } catch {
    throw new Error(`${method} ${path}: ${res.status} ${answer.slice(0, 300)}`);
  }
}

/** Live rows of the site in each database. */
async function liveRows(origin: string): Promise<number[]> {
  const out: number[] = [];
  for (const name of DATABASES) {
    const row = await baseEnv[name].prepare("SELECT count(*) AS n FROM urls WHERE origin = ?1 AND deleted = 0").bind(origin).first<{ n: number }>();
    out.push(row!.n);
  }
  return out;
}

/** What a crawler sees: the index's shard URLs, and every loc of every shard (duplicates kept). */
async function crawl(env: Env, origin: string): Promise<{ shards: string[]; locs: string[] }> {
  const index = await document(env, `${origin}/sitemap.xml`);
  const shards = locsOf(index).filter((u) => /-\d+\.xml(\?|$)/.test(u));
  const locs: string[] = [];
  for (const url of shards) locs.push(...locsOf(await document(env, url)));
  return { shards, locs };
}

describe("a site over several D1 databases (partitions)", () => {
  it("spreads records by loc, lists every partition's shards once in one index, and serves each loc exactly once", async () => {
    const { origin, env } = newSite("parts");
    const inputs = [...demoSection(origin, "products", 240), ...demoSection(origin, "blog", 60)];
    const put = await admin(env, origin, "PUT", "/urls", inputs);
    expect(put).toMatchObject({ status: 200, json: { received: 300, inserted: 300 } });

    // Each record is in the database its loc's hash names, and only there.
    const spread = await liveRows(origin);
    expect(spread.reduce((a, b) => a + b, 0)).toBe(300);
    for (const n of spread) expect(n).toBeGreaterThan(60);
    const locs = validRecords(env, inputs).map((r) => r.loc);
    const expected = [0, 1, 2].map((p) => locs.filter((loc) => partitionOf(loc, 3) === p).length);
    expect(spread).toEqual(expected);

    // Before any regeneration (each partition builds its manifest on first read) and after it.
    for (const step of ["first read", "regenerated"]) {
      if (step === "regenerated") await regenerateAll(databaseServices(env));
      const seen = await crawl(env, origin);
      expect(new Set(seen.shards).size, step).toBe(seen.shards.length);
      expect(seen.locs.length, step).toBe(300);
      expect(new Set(seen.locs), step).toEqual(new Set(locs));
      // Partition p's shards are numbered from p × SHARD_SPAN + 1: URLs never collide.
      const partitionsListed = new Set(seen.shards.map((u) => Math.floor((Number(/-(\d+)\.xml/.exec(u)![1]) - 1) / SHARD_SPAN)));
      expect([...partitionsListed].sort(), step).toEqual([0, 1, 2]);
    }

    // Status: the site's manifest over all partitions, and each partition's regeneration.
    const status = await admin(env, origin, "GET", "/status");
    expect(status.json["manifest"]).toMatchObject({ urls: 300 });
    expect(status.json["partitions"]).toMatchObject({ configured: 3, settled: 3, move: null });
    expect((status.json["partitions"] as { partitions: { lastRun: { ok: boolean } }[] }).partitions.map((p) => p.lastRun.ok)).toEqual([true, true, true]);

    // A loc is read back from its partition through the site.
    const one = locs[7]!;
    const found = await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(one)}`, { headers: AUTH });
    expect(found.status).toBe(200);
    expect(((await found.json()) as { loc: string }).loc).toBe(one);
  });

  it("re-sent and moved locs stay in one partition, deletes reach theirs, and the union after regeneration has each live loc once", async () => {
    const { origin, env } = newSite("parts-churn");
    const inputs = demoSection(origin, "products", 200);
    await admin(env, origin, "PUT", "/urls", inputs);
    await regenerateAll(databaseServices(env));
    const locs = validRecords(env, inputs).map((r) => r.loc);

    // 50 re-sent with a new lastmod, 20 of them into another section; the same 50 sent twice in one run.
    const resent = inputs.slice(0, 50).map((r, i) => ({ ...r, lastmod: "2026-11-01", ...(i < 20 ? { section: "moved" } : {}) }));
    expect((await admin(env, origin, "PUT", "/urls", resent)).json).toMatchObject({ inserted: 0, updated: 50 });
    expect((await admin(env, origin, "PUT", "/urls", resent)).json).toMatchObject({ inserted: 0, unchanged: 50 });
    const deleted = locs.slice(100, 110);
    expect((await admin(env, origin, "DELETE", "/urls", deleted)).json).toMatchObject({ deleted: 10, notFound: 0 });
    expect((await liveRows(origin)).reduce((a, b) => a + b, 0)).toBe(190);

    await regenerateAll(databaseServices(env));
    const seen = await crawl(env, origin);
    expect(seen.locs.length).toBe(190);
    expect(new Set(seen.locs)).toEqual(new Set(locs.filter((l) => !deleted.includes(l))));
    expect(seen.shards.some((u) => u.includes("/sitemap-moved-"))).toBe(true);
  });

  it("a full sync spans the partitions: the guard counts the whole site, the commit resumes part after part", async () => {
    const { origin, env } = newSite("parts-sync");
    const inputs = demoSection(origin, "products", 120);
    await admin(env, origin, "PUT", "/urls", inputs);
    const started = await admin(env, origin, "POST", "/syncs", { sites: [origin] });
    expect(started.status).toBe(201);
    const id = started.json["id"] as string;
    // 90 of 120 sent: 30 would go (25% of the site), counted over all three partitions.
    expect((await admin(env, origin, "PUT", `/syncs/${id}/urls`, inputs.slice(0, 90))).json).toMatchObject({ received: 90, unchanged: 90 });
    const refused = await admin(env, origin, "POST", `/syncs/${id}/commit`, { maxDelete: 0.2 });
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ error: "delete_guard", wouldDelete: 30, inScope: 120 });
    expect((await liveRows(origin)).reduce((a, b) => a + b, 0)).toBe(120);
    let committed = await admin(env, origin, "POST", `/syncs/${id}/commit`, { maxDelete: 0.3 });
    for (let i = 0; i < 5 && committed.json["done"] !== true; i++) committed = await admin(env, origin, "POST", `/syncs/${id}/commit`);
    expect(committed.json).toMatchObject({ state: "committed", done: true, deleted: 30 });
    expect((await liveRows(origin)).reduce((a, b) => a + b, 0)).toBe(90);
    expect((await admin(env, origin, "GET", `/syncs/${id}`)).json).toMatchObject({ state: "committed", received: 90, deleted: 30 });
  });

  it("the news sitemap and the feed merge every partition's newest", async () => {
    const { origin, env } = newSite("parts-feed", { FEED_SIZE: "25" });
    const now = Date.now();
    const inputs = Array.from({ length: 30 }, (_, i) => ({
      loc: `${origin}/news/${i}`,
      news: { publication: { name: "Paper", language: "en" }, publication_date: new Date(now - i * 60_000).toISOString(), title: `Story ${i}` },
    }));
    await admin(env, origin, "PUT", "/urls", inputs);
    const news = locsOf(await document(env, `${origin}/sitemap-news.xml`));
    expect(new Set(news)).toEqual(new Set(inputs.map((r) => r.loc)));
    const feed = await document(env, `${origin}/sitemap-feed.atom`);
    expect(feed.match(/<entry>/g)).toHaveLength(25);
  });

  it("SITE_DATABASES takes a list of bindings per site, each once", () => {
    const a = freshOrigin("parsed-parts");
    expect(parseConfig({ SITES: a, SITE_DATABASES: `${a}=DB,PART_B` }).siteDatabases).toEqual(new Map([[a, ["DB", "PART_B"]]]));
    expect(() => parseConfig({ SITES: a, SITE_DATABASES: `${a}=DB,DB` })).toThrow(/SITE_DATABASES/);
    expect(() => parseConfig({ SITES: a, SITE_DATABASES: `${a}=,PART_B` })).toThrow(/SITE_DATABASES/);
    // Partitions are D1's: the KV source keeps a site in one writer object.
    expect(() => parseConfig({ SITES: a, SITE_DATABASES: `${a}=DB,PART_B`, URL_SOURCE: "kv" })).toThrow(/SITE_DATABASES.*URL_SOURCE=d1/);
    expect(parseConfig({ SITES: a, SITE_DATABASES: `${a}=DB`, URL_SOURCE: "kv" }).siteDatabases.size).toBe(1);
    const { origin, env } = newSite("wired");
    expect(servicesFor(env, origin).partitions).toHaveLength(3);
  });
});
