/**
 * Cloudflare's per-invocation limits, enforced where the local runtime enforces none
 * (src/jobs/meter.ts): the 1,001st call of an invocation to D1, KV and the other Cloudflare services
 * together fails as in production (one shared budget, the stricter reading of the pages), so does
 * the 10,001st subrequest; every invocation of the Worker's entry —
 * requests (including what a streamed body reads after the handler returned), the cron, queue
 * batches — counts against its own meter.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import worker from "../../src/index.ts";
import { InvocationLimitError, Meter, PAID_LIMITS, currentMeter, metered } from "../../src/jobs/meter.ts";
import { meteredEnv } from "../../src/jobs/metered-env.ts";
import { listed, manifestOf, newSite, write } from "./regen-support.ts";
import { runCron } from "./support/jobs.ts";
import { index, url, urlset } from "./support/mirror-remote.ts";
import { call } from "./support.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

import { countingEnv } from "./support/counting-env.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the limits of one invocation", () => {
  it("are those of Workers Paid", () => {
    expect(PAID_LIMITS).toEqual({ serviceCalls: 1_000, subrequests: 10_000 });
  });

  it("the 1,001st D1 query fails as production fails it, and nothing is sent for it", async () => {
    const db = meteredEnv(env as Env).DB;
    const meter = new Meter();
    await metered(meter, async () => {
      for (let i = 0; i < 1_000; i++) await db.prepare("SELECT ?1 AS n").bind(i).first("n");
      expect(meter.d1Queries).toBe(1_000);
      const over = db.prepare("SELECT 1001 AS n").first("n");
      await expect(over).rejects.toBeInstanceOf(InvocationLimitError);
      await expect(over).rejects.toThrow(
        "Too many API requests by single worker invocation: 1,001 calls to D1, KV and other Cloudflare services (1,001 D1 queries, 0 KV operations",
      );
    });
    expect(meter.d1Queries).toBe(1_000);
  });

  it("counts each statement of a batch, refusing a batch that would pass the limit as a whole", async () => {
    const db = meteredEnv(env as Env).DB;
    const meter = new Meter({ ...PAID_LIMITS, serviceCalls: 10 });
    await metered(meter, async () => {
      await db.batch([db.prepare("SELECT 1"), db.prepare("SELECT 2"), db.prepare("SELECT 3")]);
      expect(meter.d1Queries).toBe(3);
      await expect(db.batch(Array.from({ length: 8 }, () => db.prepare("SELECT 1")))).rejects.toBeInstanceOf(InvocationLimitError);
      await db.batch(Array.from({ length: 7 }, () => db.prepare("SELECT 1")));
      expect(meter.d1Queries).toBe(10);
    });
  });

  it("D1 and KV share one budget of 1,000: 500 queries and 500 KV operations spend it; every binding call and fetch is a subrequest", async () => {
    const kv = meteredEnv(env as Env).SNAPSHOTS;
    const d1 = meteredEnv(env as Env).DB;
    const meter = new Meter();
    await metered(meter, async () => {
      for (let i = 0; i < 500; i++) await kv.get(`limits-test-${i % 3}`);
      for (let i = 0; i < 500; i++) await d1.prepare("SELECT 1").first();
      await expect(kv.put("limits-test-over", "x")).rejects.toBeInstanceOf(InvocationLimitError);
      await expect(d1.prepare("SELECT 1").first()).rejects.toBeInstanceOf(InvocationLimitError);
    });
    expect([meter.kvOperations, meter.d1Queries, meter.serviceCalls]).toEqual([500, 500, 1_000]);
    expect(await env.SNAPSHOTS.get("limits-test-over")).toBeNull();

    const small = new Meter({ serviceCalls: 1_000, subrequests: 3 });
    const db = meteredEnv(env as Env).DB;
    await metered(small, async () => {
      await db.prepare("SELECT 1").first();
      await kv.get("limits-test-0");
      await db.prepare("SELECT 1").first();
      // The fourth subrequest, an outbound fetch, is refused before anything goes out.
      await expect(fetch("http://127.0.0.1:9/never")).rejects.toBeInstanceOf(InvocationLimitError);
    });
    expect(small.subrequests).toBe(3);
  });

  it("with INVOCATION_LIMITS=count (a deployment) nothing is refused: the first limit passed is logged and kept", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const db = meteredEnv(env as Env).DB;
    const meter = new Meter({ ...PAID_LIMITS, serviceCalls: 2 }, Date.now(), false);
    const key = `limits-count-${crypto.randomUUID()}`;
    await metered(meter, async () => {
      for (let i = 0; i < 4; i++) await db.prepare("SELECT 1").first();
      // A per-call limit too (one write a second per key): the platform answers it, not the meter.
      const kv = meteredEnv(env as Env).SNAPSHOTS;
      await kv.put(key, "first");
      await kv.put(key, "second");
    });
    expect(await env.SNAPSHOTS.get(key)).toBe("second");
    expect([meter.d1Queries, meter.kvOperations]).toEqual([4, 2]);
    expect(meter.passed).toMatch(/^Too many API requests by single worker invocation: 3 calls/);
    expect(warn.mock.calls.map(([line]) => JSON.parse(String(line)).message as string)).toEqual([
      meter.passed,
      expect.stringMatching(/429 Too Many Requests/),
    ]);
  });

  it("concurrent invocations in one isolate each count their own", async () => {
    const db = meteredEnv(env as Env).DB;
    const a = new Meter();
    const b = new Meter();
    await Promise.all([
      metered(a, async () => {
        for (let i = 0; i < 5; i++) await db.prepare("SELECT 1").first();
      }),
      metered(b, async () => {
        for (let i = 0; i < 2; i++) await db.prepare("SELECT 1").first();
      }),
    ]);
    expect([a.d1Queries, b.d1Queries]).toEqual([5, 2]);
  });
});

describe("the Worker's entry", () => {
  it("counts each request's queries against its own meter, those its streamed body makes after the handler returned included", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("limits-entry", { EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" });
    // Enough rows for a third page (the D1 reader's pages: 1,000 rows, then ~10,000 sized by bytes).
    await write(site, demoSection(site.origin, "pages", 14_000));
    const seen: Meter[] = [];
    vi.spyOn(Meter.prototype, "count").mockImplementation(function (this: Meter, what, n = 1) {
      if (!seen.includes(this)) seen.push(this);
      this[what] += n;
    });
    // The index (it builds the manifest), then a live shard whose body reads its last page while it streams.
    const streamed: number[] = [];
    for (const path of ["/sitemap.xml", "/sitemap-pages-1.xml"]) {
      const raw = { d1: 0, kv: 0 };
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request(`${site.origin}${path}`) as Request<unknown, IncomingRequestCfProperties>,
        countingEnv(site.env, raw),
        ctx,
      );
      const beforeBody = raw.d1;
      expect(res.status).toBe(200);
      expect(res.headers.get("x-sitemap-source")).toBe("live");
      await res.text();
      await waitOnExecutionContext(ctx);
      streamed.push(raw.d1 - beforeBody);
      // The request's own meter saw every query the bindings answered.
      expect(seen.at(-1)!.d1Queries).toBe(raw.d1);
    }
    expect(streamed[1]).toBeGreaterThan(0);
    // One meter per request, never shared.
    expect(seen).toHaveLength(2);
    expect(currentMeter()).toBeUndefined();
  });
});

describe("a regeneration under the enforcing meter", () => {
  it("allowed more shards than one invocation can store stops at its share of the limits and continues: no run fails, none passes 1,000", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    // 1,100 shards of 4 URLs, all allowed in one run: one KV put each would pass the 1,000 KV operations.
    const site = newSite("limits-regen", { MAX_URLS_PER_SHARD: "4", REGEN_MAX_SHARDS: "5000" });
    await write(site, demoSection(site.origin, "pages", 4_400), Date.UTC(2026, 0, 1));
    const deliveries = await runCron(site.env);
    expect(deliveries.every((d) => d.result === "acked")).toBe(true);
    const regenerations = deliveries.filter((d) => d.job.kind === "regenerate");
    expect(regenerations.length).toBeGreaterThan(1);
    const status = (await (await call(site.env, `${site.origin}/sitemap-admin/status`, { headers: ADMIN })).json()) as {
      runs: { ok: boolean; usage?: { d1Queries: number; kvOperations: number } }[];
    };
    for (const r of status.runs) {
      expect(r.ok).toBe(true);
      expect(r.usage!.kvOperations).toBeLessThan(1_000);
      expect(r.usage!.d1Queries).toBeLessThan(1_000);
    }
    const manifest = await manifestOf(site);
    expect(listed(manifest)).toHaveLength(1_100);
    expect(listed(manifest).every((s) => s.snapshot)).toBe(true);
  });
});

describe("a mirror under the enforcing meter", () => {
  it("with the default budgets (200 requests a run) stops at its share of the limits and continues: no step fails", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("limits-mirror");
    const mirror = `${site.origin}/cms/sitemap.xml`;
    const CHILDREN = 300;
    const children = Array.from({ length: CHILDREN }, (_, i) => `${site.origin}/cms/c-${i}.xml`);
    const answers = new Map<string, string>([[mirror, index(children)]]);
    for (const [i, child] of children.entries()) answers.set(child, urlset(Array.from({ length: 10 }, (_, j) => url(`${site.origin}/m/${i}/${j}`))));
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const body = answers.get(String(input instanceof Request ? input.url : input));
      return body ? new Response(body, { headers: { "Content-Type": "application/xml" } }) : new Response("not found", { status: 404 });
    });
    const e = { ...site.env, MIRROR_SITEMAPS: mirror } as Env;
    const deliveries = await runCron(e);
    expect(deliveries.every((d) => d.result === "acked")).toBe(true);
    expect(deliveries.filter((d) => d.job.kind === "mirror").length).toBeGreaterThan(1);
    const status = (await (await call(e, `${site.origin}/sitemap-admin/status`, { headers: ADMIN })).json()) as {
      jobs: { kind: string; state: string; error: string | null }[];
      mirrors: { state: string; lastError: string | null; counts: { inserted: number } }[];
    };
    const chain = status.jobs.filter((j) => j.kind === "mirror" || j.kind === "regenerate").sort((a, b) => a.kind.localeCompare(b.kind));
    expect(chain.map((j) => [j.kind, j.state, j.error])).toEqual([
      ["mirror", "idle", null],
      ["regenerate", "idle", null],
    ]);
    expect(status.mirrors[0]).toMatchObject({ state: "idle", lastError: null, counts: { inserted: CHILDREN * 10 } });
    const manifest = await manifestOf(site);
    expect(listed(manifest).reduce((n, s) => n + s.urlCount, 0)).toBe(CHILDREN * 10);
  });
});

describe("a mirror step that passes a limit", () => {
  it("is never swallowed: the step fails, is retried, reaches the dead-letter queue, and status names the limit", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const site = newSite("limits-mirror-dead");
    const mirror = `${site.origin}/cms/sitemap.xml`;
    // A step blind to its own usage, as one whose cost a path of its own escapes (the 40,000-sitemap
    // list was one: 1,200 statements in one step): it never stops at its share, so reading 50,000
    // records a run it passes the 1,000 calls an invocation may make, and the meter refuses the 1,001st.
    const reading = Meter.prototype.reading;
    vi.spyOn(Meter.prototype, "reading").mockImplementation(function (this: Meter, now?: number) {
      return { ...reading.call(this, now), serviceCalls: 0 };
    });
    const children = Array.from({ length: 100 }, (_, i) => `${site.origin}/cms/c-${i}.xml`);
    const answers = new Map<string, string>([[mirror, index(children)]]);
    for (const [i, child] of children.entries()) answers.set(child, urlset(Array.from({ length: 500 }, (_, j) => url(`${site.origin}/m/${i}/${j}`))));
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const body = answers.get(String(input instanceof Request ? input.url : input));
      return body ? new Response(body, { headers: { "Content-Type": "application/xml" } }) : new Response("not found", { status: 404 });
    });
    const e = { ...site.env, MIRROR_SITEMAPS: mirror } as Env;
    const deliveries = await runCron(e);
    expect(deliveries.filter((d) => d.job.kind === "mirror").map((d) => d.result)).toEqual([
      "retried",
      "retried",
      "retried",
      "retried",
      "retried",
      "dead",
    ]);
    const status = (await (await call(e, `${site.origin}/sitemap-admin/status`, { headers: ADMIN })).json()) as {
      jobs: { kind: string; state: string; error: string | null }[];
      mirrors: { lastError: string | null }[];
    };
    const job = status.jobs.find((j) => j.kind === "mirror")!;
    expect(job.state).toBe("dead");
    expect(job.error).toContain("InvocationLimitError");
    expect(status.mirrors[0]!.lastError).toContain("internal error");
  });
});
