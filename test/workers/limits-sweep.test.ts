/**
 * The limits sweep (issue 51): paths at the extremes a deployment reaches, each run through the
 * Worker's entry under the enforcing meter (src/jobs/meter.ts), every invocation asserted inside
 * Workers Paid's limits — no call refused, none past the shared 1,000 — and the largest one logged
 * for docs/capacity.md's per-path table: 3 and 60 overlapping live renders, a sync over 100 sites,
 * a site with 500 mirror URLs, the platform's health page over 20 sites of 25 mirror URLs each,
 * 5,000 shards.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import worker from "../../src/index.ts";
import { newSiteToken, tokenHash } from "../../src/registry/token.ts";
import { listed, manifestOf, newSite, write } from "./regen-support.ts";
import { bearer } from "./support/admin.ts";
import { type Counts, countingEnv } from "./support/counting-env.ts";
import { runCron } from "./support/jobs.ts";
import { quiet, report, watchMeters } from "./support/meters.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

async function fetchEntry(env: Env, url: string): Promise<{ response: Response; ctx: ExecutionContext }> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url) as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  return { response, ctx };
}

describe("overlapping live renders", () => {
  it("three at once: each request's meter holds exactly what its own bindings answered, the body read after every handler returned included", async () => {
    quiet();
    const site = newSite("sweep-three", { EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" });
    await write(site, demoSection(site.origin, "pages", 6_000));
    await (await call(site.env, `${site.origin}/sitemap.xml`)).text();
    const watch = watchMeters();
    const raws: Counts[] = [0, 1, 2].map(() => ({ d1: 0, kv: 0 }));
    // Every handler returns (status and headers chosen) before any body is read.
    const started = await Promise.all(raws.map((raw) => fetchEntry(countingEnv(site.env, raw), `${site.origin}/sitemap-pages-1.xml`)));
    for (const { response } of started) expect(response.headers.get("x-sitemap-source")).toBe("live");
    const bodies = await Promise.all(started.map(({ response }) => response.text()));
    await Promise.all(started.map(({ ctx }) => waitOnExecutionContext(ctx)));
    for (const body of bodies) expect(body.match(/<url>/g)).toHaveLength(6_000);
    expect(watch.meters).toHaveLength(3);
    // Each meter against its own request's bindings (the meters in the order their requests started).
    expect(watch.meters.map((m) => m.d1Queries).sort()).toEqual(raws.map((r) => r.d1).sort());
    expect(raws.every((r) => r.d1 === raws[0]!.d1)).toBe(true);
  });

  it("sixty at once, each a 50,000-URL shard read in 20 pages: all 200 with whole bodies, every invocation inside the limits", async () => {
    quiet();
    const site = newSite("sweep-sixty", { EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" });
    await write(site, demoSection(site.origin, "pages", 50_000));
    await (await call(site.env, `${site.origin}/sitemap.xml`)).text();
    const watch = watchMeters();
    const started = await Promise.all(Array.from({ length: 60 }, () => fetchEntry(site.env, `${site.origin}/sitemap-pages-1.xml`)));
    const bodies = await Promise.all(started.map(({ response }) => response.text()));
    await Promise.all(started.map(({ ctx }) => waitOnExecutionContext(ctx)));
    expect(started.map(({ response }) => response.status)).toEqual(Array(60).fill(200));
    for (const body of bodies) {
      expect(body.trimEnd().endsWith("</urlset>")).toBe(true);
      expect(body.split("<url>").length - 1).toBe(50_000);
    }
    expect(watch.refused).toEqual([]);
    expect(watch.meters).toHaveLength(60);
    report(`60 overlapping live renders of a 50,000-URL shard: largest invocation ${watch.largest()} service calls`);
    expect(watch.largest()).toBeLessThanOrEqual(1_000);
  }, 300_000);
});

describe("a sync over 100 sites", () => {
  it("commits with 200 (its scope one JSON parameter, never 100 bound ones), the one record kept, every invocation inside the limits", async () => {
    quiet();
    const sites = Array.from({ length: 100 }, (_, i) => freshOrigin(`sweep-sync-${i}`));
    const e = { ...baseEnv, URL_SOURCE: "d1", SITES: sites.join(" ") } as Env;
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await call(e, `${sites[0]}/sitemap-admin${path}`, {
        method,
        headers: { ...bearer, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const watch = watchMeters();
    const started = await api("POST", "/syncs", { sites });
    expect(started.status, JSON.stringify(started.json)).toBe(201);
    const id = started.json["id"] as string;
    expect((await api("PUT", `/syncs/${id}/urls`, [{ loc: `${sites[42]}/kept` }])).status).toBe(200);
    // A commit goes on in steps (202) until it is done (200).
    let committed = await api("POST", `/syncs/${id}/commit`);
    for (let steps = 1; committed.status === 202 && steps < 200; steps++) committed = await api("POST", `/syncs/${id}/commit`);
    expect(committed.status, JSON.stringify(committed.json)).toBe(200);
    expect(committed.json).toMatchObject({ state: "committed" });
    const live = await baseEnv.DB.prepare("SELECT loc FROM urls WHERE origin = ?1 AND deleted = 0").bind(sites[42]).all<{ loc: string }>();
    expect(live.results.map((r) => r.loc)).toEqual([`${sites[42]}/kept`]);
    expect(watch.refused).toEqual([]);
    report(`a sync over 100 sites: largest invocation ${watch.largest()} service calls`);
  }, 120_000);
});

describe("a site's configuration does not grow what one request reads", () => {
  const mirrorsOf = (origin: string, n: number) => Array.from({ length: n }, (_, i) => `${origin}/cms/m-${i}.xml`).join(" ");

  it("a site with 500 mirror URLs: its status reads every mirror's and job's state in one query each, and answers 200", async () => {
    quiet();
    const site = newSite("sweep-mirrors");
    const e = { ...site.env, MIRROR_SITEMAPS: mirrorsOf(site.origin, 500) } as Env;
    const watch = watchMeters();
    const few = { d1: 0, kv: 0 };
    const many = { d1: 0, kv: 0 };
    const small = await call(countingEnv({ ...site.env, MIRROR_SITEMAPS: mirrorsOf(site.origin, 1) } as Env, few), `${site.origin}/sitemap-admin/status`, {
      headers: bearer,
    });
    expect(small.status).toBe(200);
    const res = await call(countingEnv(e, many), `${site.origin}/sitemap-admin/status`, { headers: bearer });
    expect(res.status).toBe(200);
    const status = (await res.json()) as { mirrors: unknown[] };
    expect(status.mirrors).toHaveLength(500);
    // The same reads for 500 mirrors as for one.
    expect(many.d1).toBe(few.d1);
    expect(watch.refused).toEqual([]);
    report(`status of a site with 500 mirror URLs: ${many.d1} D1 queries, largest invocation ${watch.largest()} service calls`);
  });

  /** The registered sites of these tests leave the registry after each (the heartbeat of a later test would fan out to them). */
  const registeredHere: string[] = [];
  afterEach(async () => {
    await baseEnv.DB.prepare("DELETE FROM registry_sites WHERE origin IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(registeredHere.splice(0)))
      .run();
  });

  /** `n` registered sites, each with `mirrors` mirror URLs on its own host, named in order. */
  async function registerSites(n: number, mirrors: number): Promise<{ e: Env; prefix: string; origins: string[] }> {
    const e = { ...baseEnv } as Env;
    const prefix = `sweep${Math.random().toString(36).slice(2, 7)}`;
    const origins: string[] = [];
    for (let i = 0; i < n; i++) {
      const origin = `https://${prefix}-${String(i).padStart(2, "0")}.test`;
      const now = Date.now();
      const site = {
        origin,
        settings: { MIRROR_SITEMAPS: mirrorsOf(origin, mirrors) },
        tokenHash: await tokenHash(newSiteToken()),
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      };
      expect(await new D1SiteRegistry(e.DB).create(site)).toBe(true);
      origins.push(origin);
      registeredHere.push(origin);
    }
    return { e, prefix, origins };
  }

  it("the platform's health page over 20 sites of 25 mirror URLs each answers 200, every site's health read", async () => {
    quiet();
    const { e, prefix, origins } = await registerSites(20, 25);
    const watch = watchMeters();
    const res = await call(e, `http://localhost:8787/sitemap-admin/sites?health=true&contains=${prefix}`, { headers: bearer });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sites: { origin: string; health: { red: number } }[]; next: string | null };
    expect(body.sites.map((s) => s.origin)).toEqual(origins);
    expect(watch.refused).toEqual([]);
    report(`platform health page, 20 sites of 25 mirror URLs: largest invocation ${watch.largest()} service calls`);
    const page = await call(e, "http://localhost:8787/sitemap-admin/platform", { headers: bearer });
    expect(page.status).toBe(200);
  }, 120_000);

  it.each([3, 5, 8])(
    "when each site costs %i times as much, the health page stops at its budget and answers with next: the pages together list every site once, in order",
    async (charge) => {
      quiet();
      const { e, prefix, origins } = await registerSites(20, 2);
      const watch = watchMeters(charge);
      const seen: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const query: string = `health=true&contains=${prefix}${after === null ? "" : `&after=${encodeURIComponent(after)}`}`;
        const res = await call(e, `http://localhost:8787/sitemap-admin/sites?${query}`, { headers: bearer });
        expect(res.status).toBe(200);
        const body = (await res.json()) as { sites: { origin: string }[]; next: string | null };
        expect(body.sites.length).toBeGreaterThan(0);
        seen.push(...body.sites.map((s) => s.origin));
        after = body.next;
        pages++;
      } while (after !== null && pages < 25);
      expect(seen).toEqual(origins);
      expect(pages).toBeGreaterThan(1);
      expect(watch.refused).toEqual([]);
    },
    120_000,
  );
});

describe("5,000 shards", () => {
  it("are regenerated across steps and the index served, every invocation inside the limits", async () => {
    quiet();
    const site = newSite("sweep-shards", { MAX_URLS_PER_SHARD: "2", REGEN_MAX_SHARDS: "5000" });
    await write(site, demoSection(site.origin, "pages", 10_000), Date.UTC(2026, 0, 1));
    const watch = watchMeters();
    const deliveries = await runCron(site.env);
    expect(deliveries.every((d) => d.result === "acked")).toBe(true);
    const manifest = await manifestOf(site);
    expect(listed(manifest)).toHaveLength(5_000);
    expect(listed(manifest).every((s) => s.snapshot)).toBe(true);
    const index = await call(site.env, `${site.origin}/sitemap.xml`);
    expect(index.status).toBe(200);
    expect((await index.text()).split("<sitemap>").length - 1).toBe(5_000);
    expect(watch.refused).toEqual([]);
    report(`5,000 shards: ${deliveries.length} job steps, largest invocation ${watch.largest()} service calls`);
  }, 600_000);
});
