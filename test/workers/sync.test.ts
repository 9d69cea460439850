/**
 * Full sync against the real Worker entry and real D1 in workerd: a scope made equal to its
 * input, nothing outside it touched, nothing deleted before a commit, the guard, resumable and
 * idempotent commits, expiry. Every claim about records is checked by reading them back.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { services } from "../../src/services.ts";
import { drain, withJobs } from "./support/jobs.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const JSON_TYPE = { "Content-Type": "application/json" };

interface Site {
  origin: string;
  other: string;
  env: Env;
}

function newSite(vars: Record<string, string> = {}): Site {
  const origin = freshOrigin("sync");
  const other = freshOrigin("sync-other");
  return { origin, other, env: { ...baseEnv, URL_SOURCE: "d1", SITES: `${origin} ${other}`, ...vars } as Env };
}

async function api(site: Site, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await call(site.env, `${site.origin}/sitemap-admin${path}`, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : JSON_TYPE) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function seed(site: Site, inputs: object[], now = Date.now() - 60_000): Promise<void> {
  await new D1RecordWriter(site.env.DB).upsert(validRecords(site.env, inputs), now);
}

/** Live locs of a site (section → sorted paths). */
async function live(site: Site, origin = site.origin): Promise<Record<string, string[]>> {
  const { results } = await baseEnv.DB.prepare("SELECT section, loc FROM urls WHERE origin = ?1 AND deleted = 0 ORDER BY section, loc")
    .bind(origin)
    .all<{ section: string; loc: string }>();
  const out: Record<string, string[]> = {};
  for (const r of results) (out[r.section] ??= []).push(r.loc.slice(origin.length));
  return out;
}

const paths = (prefix: string, n: number, from = 1) => Array.from({ length: n }, (_, i) => `${prefix}${from + i}`);
const records = (origin: string, list: string[], extra: object = {}) => list.map((p) => ({ loc: origin + p, ...extra }));

async function startSync(site: Site, body: object): Promise<string> {
  const started = await api(site, "POST", "/syncs", body);
  expect(started.status, JSON.stringify(started.json)).toBe(201);
  return started.json["id"] as string;
}

describe("full sync through the admin API", () => {
  it("makes one section equal to the input: removed records become tombstones, new ones are added, nothing else moves", async () => {
    const site = newSite();
    await seed(site, [...records(site.origin, paths("/p/", 10), { section: "products" }), ...records(site.origin, paths("/a/", 3))]);
    await seed(site, records(site.other, paths("/p/", 4), { section: "products" }));
    const id = await startSync(site, { sites: [site.origin], section: "products" });
    // Kept p1–p5 (p1 changed), dropped p6–p10, added p11 (naming no section: it goes into the sync's section).
    const batch: Record<string, unknown>[] = [...records(site.origin, paths("/p/", 5)), { loc: `${site.origin}/p/11` }];
    batch[0] = { ...batch[0], lastmod: "2026-01-05" };
    const sent = await api(site, "PUT", `/syncs/${id}/urls`, batch);
    expect(sent).toEqual({ status: 200, json: { received: 6, inserted: 1, updated: 1, unchanged: 4 } });
    const before = await live(site);
    expect(before["products"]).toHaveLength(11); // nothing deleted before the commit
    const committed = await api(site, "POST", `/syncs/${id}/commit`);
    expect(committed.status).toBe(200);
    expect(committed.json).toMatchObject({ state: "committed", done: true, received: 6, inserted: 1, updated: 1, unchanged: 4, deleted: 5 });
    expect(await live(site)).toEqual({ products: ["/p/1", "/p/11", "/p/2", "/p/3", "/p/4", "/p/5"], pages: ["/a/1", "/a/2", "/a/3"] });
    expect((await live(site, site.other))["products"]).toHaveLength(4);
    // Deletions are tombstones: the regeneration drops them from the shard.
    const jobs = withJobs(site.env);
    const regen = await call(jobs.env, `${site.origin}/sitemap-admin/regenerate`, { method: "POST", headers: AUTH });
    expect(regen.status).toBe(202);
    await drain(jobs.env, jobs.queue);
    const shard = await document(site.env, `${site.origin}/sitemap-products-1.xml`);
    expect(locsOf(shard).sort()).toEqual(records(site.origin, ["/p/1", "/p/11", "/p/2", "/p/3", "/p/4", "/p/5"]).map((r) => r.loc));
    const removed = await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND deleted = 1").bind(site.origin).first<{ n: number }>();
    expect(removed?.n).toBe(5);
    // Committing again changes nothing.
    const again = await api(site, "POST", `/syncs/${id}/commit`);
    expect(again.json).toMatchObject({ state: "committed", done: true, deleted: 5 });
  });

  it("a site-wide sync covers every section of its sites and only them", async () => {
    const site = newSite();
    await seed(site, [...records(site.origin, paths("/p/", 4), { section: "products" }), ...records(site.origin, paths("/a/", 4))]);
    await seed(site, records(site.other, paths("/a/", 2)));
    const id = await startSync(site, { sites: [site.origin] });
    await api(site, "PUT", `/syncs/${id}/urls`, [...records(site.origin, paths("/p/", 3)), ...records(site.origin, paths("/a/", 3))]);
    const committed = await api(site, "POST", `/syncs/${id}/commit`);
    expect(committed.json).toMatchObject({ done: true, deleted: 2 });
    // Re-sent without a section, the records kept their sections.
    expect(await live(site)).toEqual({ products: ["/p/1", "/p/2", "/p/3"], pages: ["/a/1", "/a/2", "/a/3"] });
    expect((await live(site, site.other))["pages"]).toHaveLength(2);
  });

  it("the guard refuses a commit that deletes more than its share, says how many would go, and deletes nothing", async () => {
    const site = newSite();
    await seed(site, records(site.origin, paths("/a/", 10)));
    const id = await startSync(site, { sites: [site.origin] });
    await api(site, "PUT", `/syncs/${id}/urls`, records(site.origin, paths("/a/", 3)));
    const refused = await api(site, "POST", `/syncs/${id}/commit`);
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ error: "delete_guard", wouldDelete: 7, inScope: 10, maxDelete: 0.5 });
    expect(refused.json["message"]).toContain("would delete 7 of the 10 records in its scope (70%); the guard allows 50%");
    expect((await live(site))["pages"]).toHaveLength(10);
    expect((await api(site, "GET", `/syncs/${id}`)).json).toMatchObject({ state: "open", deleted: 0 });
    const allowed = await api(site, "POST", `/syncs/${id}/commit`, { maxDelete: 0.8 });
    expect(allowed.json).toMatchObject({ state: "committed", deleted: 7 });
    expect((await live(site))["pages"]).toEqual(["/a/1", "/a/2", "/a/3"]);
  });

  it("an empty sync is refused; an aborted or abandoned one deletes nothing", async () => {
    const site = newSite();
    await seed(site, records(site.origin, paths("/a/", 5)));
    const empty = await startSync(site, { sites: [site.origin] });
    const refused = await api(site, "POST", `/syncs/${empty}/commit`, { maxDelete: 1 });
    expect(refused).toMatchObject({ status: 422, json: { error: "empty_sync" } });
    const aborted = await startSync(site, { sites: [site.origin] });
    await api(site, "PUT", `/syncs/${aborted}/urls`, records(site.origin, paths("/a/", 1)));
    expect((await api(site, "DELETE", `/syncs/${aborted}`)).json).toMatchObject({ state: "aborted", deleted: 0 });
    expect((await api(site, "PUT", `/syncs/${aborted}/urls`, records(site.origin, paths("/a/", 1)))).status).toBe(409);
    expect((await api(site, "POST", `/syncs/${aborted}/commit`)).status).toBe(409);
    // A client killed mid-sync never commits: its sync expires and is swept without deleting anything.
    const abandoned = await startSync(site, { sites: [site.origin] });
    await api(site, "PUT", `/syncs/${abandoned}/urls`, records(site.origin, paths("/a/", 2)));
    const sync = services(site.env).store.sync!;
    expect((await sync.sweep(Date.now() + 2 * 86_400_000, 7 * 86_400_000, 20)).expired).toBeGreaterThanOrEqual(2);
    expect((await api(site, "GET", `/syncs/${abandoned}`)).json).toMatchObject({ state: "aborted" });
    expect((await live(site))["pages"]).toHaveLength(5);
    // Finished syncs are forgotten after the keep time, with what they saw.
    await sync.sweep(Date.now() + 30 * 86_400_000, 7 * 86_400_000, 20);
    expect((await api(site, "GET", `/syncs/${abandoned}`)).status).toBe(404);
    const seen = await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM sync_seen WHERE sync IN (?1, ?2)").bind(aborted, abandoned).first<{ n: number }>();
    expect(seen?.n).toBe(0);
  });

  it("a commit its client abandoned after the guard passed is finished by the sweep in bounded steps, freeing the site's slot", async () => {
    const site = newSite();
    await seed(site, records(site.origin, paths("/a/", 6)));
    const id = await startSync(site, { sites: [site.origin] });
    await api(site, "PUT", `/syncs/${id}/urls`, records(site.origin, paths("/a/", 2)));
    const sync = services(site.env).store.sync!;
    const scope = { sites: [site.origin], section: null, source: null };
    const oneOpen = { maxDelete: 1, ttlMs: 3_600_000, maxOpenPerSite: 1 };
    // The guard passed and no chunk ran: what a client that stopped after its first 202 leaves.
    expect((await sync.commit(id, { maxDelete: 1, maxChunks: 0 })).sync.state).toBe("committing");
    await expect(sync.start(scope, oneOpen)).rejects.toThrow(/open syncs/);
    // Before its expiry the client may still be calling: the sweep leaves it alone.
    expect((await sync.sweep(Date.now(), 7 * 86_400_000, 20)).finished).toBe(0);
    expect((await live(site))["pages"]).toHaveLength(6);
    const later = Date.now() + 2 * 86_400_000;
    let sweeps = 0;
    for (let finished = 0; finished === 0; sweeps++) {
      expect(sweeps).toBeLessThan(10);
      const swept = await sync.sweep(later, 7 * 86_400_000, 6);
      expect(swept.statements).toBeLessThanOrEqual(6);
      finished = swept.finished;
    }
    expect(sweeps).toBeGreaterThan(1);
    expect((await api(site, "GET", `/syncs/${id}`)).json).toMatchObject({ state: "committed", deleted: 4 });
    expect((await live(site))["pages"]).toEqual(["/a/1", "/a/2"]);
    // Done once: a later sweep finishes nothing more, and the site may open a sync again.
    expect((await sync.sweep(later, 7 * 86_400_000, 20)).finished).toBe(0);
    expect((await sync.start(scope, oneOpen)).state).toBe("open");
  });

  it("keeps a record an API client writes while the sync runs", async () => {
    const site = newSite();
    await seed(site, records(site.origin, paths("/a/", 4)));
    const id = await startSync(site, { sites: [site.origin] });
    await api(site, "PUT", `/syncs/${id}/urls`, records(site.origin, paths("/a/", 3)));
    const put = await call(site.env, `${site.origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...AUTH, ...JSON_TYPE },
      body: JSON.stringify([{ loc: `${site.origin}/fresh` }]),
    });
    expect(put.status).toBe(200);
    expect((await api(site, "POST", `/syncs/${id}/commit`)).json).toMatchObject({ deleted: 1 });
    expect((await live(site))["pages"]).toEqual(["/a/1", "/a/2", "/a/3", "/fresh"]);
  });

  it("refuses records outside the scope, and sites that are not configured", async () => {
    const site = newSite();
    const id = await startSync(site, { sites: [site.origin], section: "products" });
    const outside = await api(site, "PUT", `/syncs/${id}/urls`, [
      { loc: `${site.origin}/p/1` },
      { loc: `${site.origin}/a/1`, section: "pages" },
      { loc: `${site.other}/p/1` },
    ]);
    expect(outside.status).toBe(422);
    expect((outside.json["issues"] as { index: number; rule: string }[]).map((i) => [i.index, i.rule])).toEqual([
      [1, "scope"],
      [2, "scope"],
    ]);
    expect(await live(site)).toEqual({});
    // An origin this host does not serve is refused as another site's would be (403): the answer does not tell which origins are registered.
    expect((await api(site, "POST", "/syncs", { sites: ["https://not-configured.example"] })).status).toBe(403);
    expect((await api(site, "GET", "/syncs/no-such-sync")).status).toBe(404);
  });

  it("is listed in the status while it runs", async () => {
    const site = newSite();
    const id = await startSync(site, { sites: [site.origin] });
    const status = await api(site, "GET", "/status");
    expect((status.json["syncs"] as { id: string }[]).map((s) => s.id)).toEqual([id]);
  });

  it("answers 501 on the KV record source", async () => {
    const site = newSite({ URL_SOURCE: "kv", MANIFEST_STORE: "kv" });
    const res = await api(site, "POST", "/syncs", { sites: [site.origin] });
    expect(res).toMatchObject({ status: 501, json: { error: "not_supported" } });
  });
});

describe("the sync port on D1", () => {
  it("commits in bounded chunks that resume where they stopped, idempotently", async () => {
    const site = newSite();
    await seed(site, records(site.origin, paths("/a/", 2500)));
    const sync = services(site.env).store.sync!;
    const started = await sync.start({ sites: [site.origin], section: null, source: null }, { maxDelete: 1, ttlMs: 60_000 });
    await sync.upsert(started.id, validRecords(site.env, records(site.origin, ["/a/7", "/a/2000"])));
    const steps: boolean[] = [];
    let result = await sync.commit(started.id, { maxChunks: 1 });
    steps.push(result.done);
    while (!result.done) {
      result = await sync.commit(started.id, { maxChunks: 1 });
      steps.push(result.done);
    }
    expect(steps).toEqual([false, false, true]); // chunks of 1,000: the third is short, so the site is done
    expect(result.sync).toMatchObject({ state: "committed", deleted: 2498 });
    expect((await sync.commit(started.id, { maxChunks: 1 })).sync.deleted).toBe(2498);
    expect((await live(site))["pages"]).toEqual(["/a/2000", "/a/7"]);
  });

  it("a scope with a source deletes only what that source brought in", async () => {
    const site = newSite();
    const writer = new D1RecordWriter(site.env.DB);
    const before = Date.now() - 60_000;
    await writer.upsert(validRecords(site.env, records(site.origin, paths("/m/", 3))), before, { source: "mirror:https://cms.example/sitemap.xml" });
    await writer.upsert(validRecords(site.env, records(site.origin, paths("/api/", 3))), before);
    // The API re-sending a mirror's record does not take it over.
    await writer.upsert(validRecords(site.env, records(site.origin, ["/m/3"], { lastmod: "2026-01-01" })), before + 1);
    const sync = services(site.env).store.sync!;
    const scope = { sites: [site.origin], section: null, source: "mirror:https://cms.example/sitemap.xml" };
    const started = await sync.start(scope, { maxDelete: 1, ttlMs: 60_000 });
    await sync.upsert(started.id, validRecords(site.env, records(site.origin, ["/m/1", "/m/9"])));
    expect((await sync.commit(started.id, { maxChunks: 10 })).sync.deleted).toBe(2);
    expect((await live(site))["pages"]).toEqual(["/api/1", "/api/2", "/api/3", "/m/1", "/m/9"]);
    const owner = await baseEnv.DB.prepare("SELECT source FROM urls WHERE loc = ?1").bind(`${site.origin}/m/9`).first<{ source: string }>();
    expect(owner?.source).toBe(scope.source);
  });
});
