/**
 * A mirror of an index as large as the protocol allows (issue 51, item 4), through the Worker's
 * entry under the enforcing meter (src/jobs/meter.ts): the step that reads a 50,000-sitemap index
 * writes its list in a few statements and stays inside the limits, and a mirror of many one-URL
 * sitemaps runs its job's chain to the end — every URL published, the mirror idle, no invocation
 * refused or past the shared 1,000 calls. The whole 50,000 through the chain takes many minutes
 * here: docs/capacity.md keeps what it measured, run once with
 * `MIRROR_SCALE_CHILDREN=50000 npx vitest run --maxWorkers=1 test/workers/mirror-scale.test.ts -t "runs to the end"`
 * (1,000 requests a run at that size); the suite keeps 1,000.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shardPath } from "../../src/documents/paths.ts";
import worker from "../../src/index.ts";
import { Meter } from "../../src/jobs/meter.ts";
import { listed, manifestOf, newSite } from "./regen-support.ts";
import { deliver, drain, withJobs } from "./support/jobs.ts";
import { index, url, urlset } from "./support/mirror-remote.ts";
import { call } from "./support.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

afterEach(() => vi.restoreAllMocks());

/** Every meter the entry makes from now on (one per invocation), and every call refused. */
function watchMeters(): { meters: Meter[]; refused: string[]; largest: () => number } {
  const meters: Meter[] = [];
  const refused: string[] = [];
  const count = Meter.prototype.count;
  vi.spyOn(Meter.prototype, "count").mockImplementation(function (this: Meter, what, n = 1) {
    if (!meters.includes(this)) meters.push(this);
    try {
      count.call(this, what, n);
    } catch (err) {
      refused.push(String(err));
      throw err;
    }
  });
  return { meters, refused, largest: () => Math.max(0, ...meters.map((m) => m.serviceCalls)) };
}

/** A remote index at `mirror` of `n` sitemaps, the i-th listing one URL, `/m/<i>`; every request counted. */
function remote(origin: string, mirror: string, n: number): { requests: () => number; locs: string[] } {
  const children = Array.from({ length: n }, (_, i) => `${origin}/cms/c-${i}.xml`);
  const body = index(children);
  let requests = 0;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    requests++;
    const asked = String(input instanceof Request ? input.url : input);
    if (asked === mirror) return new Response(body, { headers: { "Content-Type": "application/xml" } });
    const child = /\/cms\/c-(\d+)\.xml$/.exec(asked)?.[1];
    if (child !== undefined && Number(child) < n)
      return new Response(urlset([url(`${origin}/m/${child}`)]), { headers: { "Content-Type": "application/xml" } });
    return new Response("not found", { status: 404 });
  });
  return { requests: () => requests, locs: children.map((_, i) => `${origin}/m/${i}`) };
}

const quiet = () => {
  vi.spyOn(console, "log").mockImplementation(() => undefined);
  vi.spyOn(console, "error").mockImplementation(() => undefined);
};

describe("a mirror of a 50,000-sitemap index", () => {
  it("the step that reads the index writes its whole list in a few statements, inside the limits", { timeout: 120_000 }, async () => {
    quiet();
    const site = newSite("mirror-scale-list");
    const mirror = `${site.origin}/cms/sitemap.xml`;
    remote(site.origin, mirror, 50_000);
    const statements: string[] = [];
    // The database as the Worker gets it, noting every statement that writes the list.
    const db = new Proxy(site.env.DB, {
      get(target, name) {
        if (name === "prepare")
          return (sql: string) => {
            if (/^\s*(INSERT|DELETE)\b.*mirror_children/s.test(sql)) statements.push(sql);
            return target.prepare(sql);
          };
        const value = Reflect.get(target, name, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const { env: e, queue } = withJobs({ ...site.env, DB: db, MIRROR_SITEMAPS: mirror } as Env);
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());
    const first = queue.pending.find((m) => m.body.kind === "mirror")!;
    queue.pending.splice(queue.pending.indexOf(first), 1);
    const watch = watchMeters();
    const result = await deliver(e, first.body, 1, undefined, first.id);
    expect(result.retryMessages).toEqual([]);
    expect(result.explicitAcks).toHaveLength(1);
    expect(watch.refused).toEqual([]);
    expect(watch.meters).toHaveLength(1);
    expect(watch.largest()).toBeLessThan(1_000);
    // The old list's DELETE and one INSERT … json_each per ≤ 1,000,000 bytes (~3.4 MB of URLs here).
    expect(statements.length).toBeGreaterThanOrEqual(2);
    expect(statements.length).toBeLessThanOrEqual(6);
    const listedNow = await site.env.DB.prepare(
      "SELECT COUNT(*) AS n, MIN(n) AS lo, MAX(n) AS hi, COUNT(DISTINCT child) AS d FROM mirror_children WHERE url = ?1",
    )
      .bind(mirror)
      .first<{ n: number; lo: number; hi: number; d: number }>();
    expect(listedNow).toEqual({ n: 50_000, lo: 0, hi: 49_999, d: 50_000 });
    const last = await site.env.DB.prepare("SELECT child FROM mirror_children WHERE url = ?1 AND n = 49999").bind(mirror).first<{ child: string }>();
    expect(last?.child).toBe(`${site.origin}/cms/c-49999.xml`);
    // The pass went on to the listed sitemaps in the same step, and its chain continues.
    expect(queue.pending.filter((m) => m.body.kind === "mirror").map((m) => m.body.step)).toEqual([1]);
    console.warn(`mirror scale: the step reading a 50,000-sitemap index: ${watch.largest()} service calls, ${statements.length} list statements`);
  });
});

describe("a mirror of many one-URL sitemaps through its job's chain", () => {
  // ~2,000 requests (a read and a check per sitemap) at 500 a run: a chain of several steps. The
  // one-off measurement at scale sets the size (MIRROR_SCALE_CHILDREN) and runs 1,000 requests a step.
  const CHILDREN = Number(baseEnv.MIRROR_SCALE_CHILDREN || 1_000);
  const scaled = CHILDREN > 1_000;
  it("runs to the end: every URL published, the mirror idle with no error, every invocation inside the limits", {
    timeout: scaled ? 4 * 3_600_000 : 180_000,
  }, async () => {
    quiet();
    const started = Date.now();
    const site = newSite("mirror-scale-chain", { MIRROR_MAX_REQUESTS_PER_RUN: scaled ? "1000" : "500" });
    const mirror = `${site.origin}/cms/sitemap.xml`;
    const { locs } = remote(site.origin, mirror, CHILDREN);
    const { env: e, queue } = withJobs({ ...site.env, MIRROR_SITEMAPS: mirror } as Env);
    const watch = watchMeters();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());
    const deliveries = await drain(e, queue, { early: true, maxInvocations: scaled ? 2_000 : 400 });
    expect(deliveries.filter((d) => d.result !== "acked")).toEqual([]);
    const mirrorSteps = deliveries.filter((d) => d.job.kind === "mirror");
    expect(new Set(mirrorSteps.map((d) => d.job.chain)).size).toBe(1);
    expect(mirrorSteps.length).toBeGreaterThan(3);
    expect(watch.refused).toEqual([]);
    expect(watch.largest()).toBeLessThan(1_000);
    const status = (await (await call(e, `${site.origin}/sitemap-admin/status`, { headers: ADMIN })).json()) as {
      jobs: { kind: string; state: string; error: string | null }[];
      mirrors: { state: string; lastError: string | null; counts: { records: number; inserted: number } }[];
    };
    expect(status.mirrors[0]).toMatchObject({ state: "idle", lastError: null, counts: { records: CHILDREN, inserted: CHILDREN } });
    expect(status.jobs.find((j) => j.kind === "mirror")).toMatchObject({ state: "idle", error: null });
    const manifest = await manifestOf(site);
    expect(listed(manifest).reduce((n, s) => n + s.urlCount, 0)).toBe(CHILDREN);
    const served = new Set<string>();
    for (const shard of listed(manifest)) {
      const body = await (await call(e, `${site.origin}${shardPath(shard.section, shard.n, "xml")}`)).text();
      for (const [, loc] of body.matchAll(/<loc>([^<]+)<\/loc>/g)) served.add(loc!);
    }
    expect(locs.filter((loc) => !served.has(loc))).toEqual([]);
    const largest = watch.meters.reduce((a, m) => (m.serviceCalls > a.serviceCalls ? m : a));
    console.warn(
      `mirror scale: ${CHILDREN} one-URL sitemaps: ${mirrorSteps.length} mirror steps (${deliveries.length} invocations), largest invocation ${watch.largest()} service calls (${largest.d1Queries} D1 queries, ${largest.kvOperations} KV operations, ${largest.queueSends} queue sends), ${Math.round((Date.now() - started) / 1000)} s`,
    );
  });
});
