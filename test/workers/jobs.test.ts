/**
 * Background jobs on the JOBS queue (src/jobs/, docs/jobs.md), through the real entry: the cron
 * only schedules, each job runs in its own invocation and continues until the site converged,
 * within the per-invocation budget; duplicates do no harm; writes publish themselves, debounced;
 * a job that keeps failing lands in the dead-letter queue and shows in status until it succeeds.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import worker from "../../src/index.ts";
import { heartbeatJobs } from "../../src/jobs/heartbeat.ts";
import { databaseServices } from "../../src/services.ts";
import { fetchPath, listed, manifestOf, newSite, write } from "./regen-support.ts";
import { type Counts, countingEnv } from "./support/counting-env.ts";
import { type Delivery, deliver, drain, runCron, withJobs } from "./support/jobs.ts";
import { call, freshOrigin } from "./support.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const PAST = Date.UTC(2026, 0, 1);
/** The Paid plan's per-invocation limits (D1 and KV "Limits"). */
const D1_QUERIES_PER_INVOCATION = 1_000;
const KV_OPERATIONS_PER_INVOCATION = 1_000;

interface Status {
  manifest: { shards: number; snapshots: number; withoutSnapshot: string[]; indexSnapshot: string | null } | null;
  runs: { trigger: string; ok: boolean; converged: boolean; usage?: { d1Queries: number; kvOperations: number } }[];
  jobs: { kind: string; target: string; state: string; outcome: string | null; error: string | null; attempts: number; deadAt: string | null }[];
}

async function statusOf(e: Env, origin: string): Promise<Status> {
  const res = await call(e, `${origin}/sitemap-admin/status`, { headers: ADMIN });
  expect(res.status).toBe(200);
  return (await res.json()) as Status;
}

/** Drains with every invocation counted at its bindings. */
async function countedDrain(run: (perInvocation: (env: Env) => Env) => Promise<Delivery[]>) {
  const perInvocation: Counts[] = [];
  const deliveries = await run((env) => {
    const counts = { d1: 0, kv: 0 };
    perInvocation.push(counts);
    return countingEnv(env, counts);
  });
  return { deliveries, perInvocation };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("one cron trigger", () => {
  it("only schedules; the jobs take the site all the way to converged, every invocation within 1,000 D1 queries and 1,000 KV operations", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    // 60 shards of 200 URLs, 50 shards per run (the default bound): the first pass needs two invocations.
    const site = newSite("jobs-pass", { MAX_URLS_PER_SHARD: "200" });
    await write(site, demoSection(site.origin, "pages", 12_000), PAST);

    const { env: e, queue } = withJobs(site.env);
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());
    // The trigger rendered nothing itself: it queued the site's regeneration (and the database's sync sweep, the deployment's crawler ranges).
    expect(await site.env.DB.prepare("SELECT COUNT(*) AS n FROM manifests WHERE origin = ?1").bind(site.origin).first("n")).toBe(0);
    expect(queue.sent.map((m) => m.body.kind).sort()).toEqual(["crawler-ranges", "regenerate", "sync-sweep"]);
    expect((await statusOf(site.env, site.origin)).jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "scheduled" });

    const { deliveries, perInvocation } = await countedDrain((wrap) => drain(e, queue, { perInvocation: wrap }));
    const regenerations = deliveries.filter((d) => d.job.kind === "regenerate");
    expect(regenerations.map((d) => [d.job.trigger, d.job.step])).toEqual([
      ["cron", 0],
      ["continue", 1],
    ]);
    expect(deliveries.every((d) => d.result === "acked")).toBe(true);
    const manifest = await manifestOf(site);
    expect(listed(manifest)).toHaveLength(60);
    expect(listed(manifest).every((s) => s.snapshot)).toBe(true);
    expect(manifest.snapshot).toBeTruthy();
    for (const counts of perInvocation) {
      expect(counts.d1).toBeLessThan(D1_QUERIES_PER_INVOCATION);
      expect(counts.kv).toBeLessThan(KV_OPERATIONS_PER_INVOCATION);
    }
    expect(Math.max(...perInvocation.map((c) => c.kv))).toBeGreaterThanOrEqual(50);

    // Each run summary records what its invocation had used, as counted at the bindings.
    const status = await statusOf(site.env, site.origin);
    const [last, first] = status.runs;
    expect(first!.usage!.kvOperations).toBeGreaterThanOrEqual(50);
    expect(first!.usage!.d1Queries).toBeGreaterThan(0);
    const firstRegeneration = perInvocation[deliveries.indexOf(regenerations[0]!)]!;
    expect(first!.usage!.d1Queries).toBeLessThanOrEqual(firstRegeneration.d1);
    expect(first!.usage!.kvOperations).toBeLessThanOrEqual(firstRegeneration.kv);
    expect(last!.converged).toBe(true);
    expect(status.jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "idle", outcome: "converged", error: null });

    // Then a change to every shard: incremental runs, again bounded per invocation, converge from one trigger.
    await write(
      site,
      Array.from({ length: 60 }, (_, i) => demoSection(site.origin, "pages", 1, i * 200 + 7)[0]!).map((r) => ({ ...r, lastmod: "2026-05-05" })),
    );
    const again = await countedDrain((wrap) => runCron(site.env, { perInvocation: wrap }));
    expect(again.deliveries.filter((d) => d.job.kind === "regenerate")).toHaveLength(2);
    for (const counts of again.perInvocation) {
      expect(counts.d1).toBeLessThan(D1_QUERIES_PER_INVOCATION);
      expect(counts.kv).toBeLessThan(KV_OPERATIONS_PER_INVOCATION);
    }
    const changed = listed(await manifestOf(site));
    expect(changed.every((s) => s.snapshot && !manifest.shards.some((old) => old.snapshot === s.snapshot))).toBe(true);
  });

  it("schedules per site and per database; a mirrored site's regeneration waits for its mirror", () => {
    const [a, b, c] = [freshOrigin("hb"), freshOrigin("hb"), freshOrigin("hb")];
    const e = { ...baseEnv, SITES: `${a} ${b} ${c}`, SITE_DATABASES: `${c}=SITE_B_DB`, MIRROR_SITEMAPS: `${b}/wp-sitemap.xml` } as Env;
    const jobs = heartbeatJobs(databaseServices(e)).map(({ job }) => `${job.kind} ${job.origin}`);
    expect(jobs.sort()).toEqual(
      [`crawler-ranges ${a}`, `mirror ${b}/wp-sitemap.xml`, `regenerate ${a}`, `regenerate ${c}`, `sync-sweep ${a}`, `sync-sweep ${c}`].sort(),
    );
  });
});

describe("the consumer", () => {
  it("acknowledges a message that is not a job (never retried into the dead-letter queue), and a job for a site it does not serve", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const { env: e, queue } = withJobs({ ...baseEnv, SITES: freshOrigin("jobs-odd") } as Env);
    for (const body of [{ kind: "format-disk", origin: "x" }, "regenerate", { kind: "regenerate", origin: 42 }]) {
      const result = await deliver(e, body);
      expect(result.explicitAcks).toHaveLength(1);
      expect(result.retryMessages).toEqual([]);
    }
    expect(error.mock.calls.filter(([line]) => String(line).includes('"outcome":"not-a-job"'))).toHaveLength(3);
    const other = await deliver(e, { kind: "regenerate", origin: "https://not-served.example", trigger: "cron", step: 0 });
    expect(other.explicitAcks).toHaveLength(1);
    expect(queue.sent).toEqual([]);
  });
});

describe("at-least-once delivery", () => {
  it("a duplicate, or two deliveries of one step at once, change nothing: one runs, the others are no-ops before any work", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("jobs-dup", { MAX_URLS_PER_SHARD: "100" });
    await write(site, demoSection(site.origin, "pages", 300), PAST);
    await runCron(site.env);
    const before = await manifestOf(site);
    const runsBefore = (await statusOf(site.env, site.origin)).runs.length;

    // The heartbeat's message, delivered twice at once (at-least-once), then once more after it ran.
    const { env: e, queue } = withJobs(site.env);
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());
    const job = queue.sent.find((m) => m.body.kind === "regenerate")!.body;
    expect(job.chain).toMatch(/^[\w-]+$/);
    const results = await Promise.all([deliver(e, job), deliver(e, job)]);
    expect(results.map((r) => r.explicitAcks.length)).toEqual([1, 1]);
    await deliver(e, job);
    // One run in all, nothing rendered or published; no follow-up message of any kind.
    const status = await statusOf(site.env, site.origin);
    expect(status.runs.length - runsBefore).toBe(1);
    expect(status.runs[0]).toMatchObject({ ok: true, shardsRendered: 0, changed: [] });
    expect(queue.sent.filter((m) => m.body.kind === "regenerate")).toHaveLength(1);
    const after = await manifestOf(site);
    expect(after.version).toBe(before.version);
    expect(after.builtAt).toBe(before.builtAt);
    expect(status.jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "idle" });
  });
});

describe("writes publish themselves", () => {
  it("a burst of admin writes sends one regeneration after REGEN_SETTLE_SECONDS, and the records are then served from a snapshot", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("jobs-write", { MAX_URLS_PER_SHARD: "100", REGEN_SETTLE_SECONDS: "1" });
    await write(site, demoSection(site.origin, "pages", 150), PAST);
    await runCron(site.env);
    const { env: e, queue } = withJobs(site.env);
    for (let i = 0; i < 5; i++) {
      const res = await call(e, `${site.origin}/sitemap-admin/urls`, {
        method: "PUT",
        headers: { ...ADMIN, "Content-Type": "application/json" },
        body: JSON.stringify([{ loc: `${site.origin}/fresh/${i}` }]),
      });
      expect(res.status).toBe(200);
    }
    const del = await call(e, `${site.origin}/sitemap-admin/urls`, {
      method: "DELETE",
      headers: { ...ADMIN, "Content-Type": "application/json" },
      body: JSON.stringify([`${site.origin}/fresh/0`]),
    });
    expect(del.status).toBe(200);
    expect(queue.sent.map((m) => [m.body.kind, m.body.trigger, m.delaySeconds])).toEqual([["regenerate", "write", 1]]);

    await drain(e, queue);
    const res = await fetchPath(site, "/sitemap-pages-2.xml");
    expect(res.source).toBe("snapshot");
    for (let i = 1; i < 5; i++) expect(res.body).toContain(`${site.origin}/fresh/${i}</loc>`);
    expect(res.body).not.toContain(`${site.origin}/fresh/0</loc>`);

    // Once that job ran, the next write schedules again.
    await call(e, `${site.origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...ADMIN, "Content-Type": "application/json" },
      body: JSON.stringify([{ loc: `${site.origin}/fresh/9` }]),
    });
    expect(queue.sent).toHaveLength(2);
  });
});

describe("a sync publishes itself", () => {
  it("its batches and its commit ask for one regeneration, which drops what the commit deleted", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("jobs-sync", { REGEN_SETTLE_SECONDS: "1" });
    await write(site, demoSection(site.origin, "pages", 20), PAST);
    await runCron(site.env);
    const { env: e, queue } = withJobs(site.env);
    const admin = (method: string, path: string, body?: unknown) =>
      call(e, `${site.origin}/sitemap-admin${path}`, {
        method,
        headers: body === undefined ? ADMIN : { ...ADMIN, "Content-Type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const { id } = (await (await admin("POST", "/syncs", { sites: [site.origin] })).json()) as { id: string };
    expect((await admin("PUT", `/syncs/${id}/urls`, demoSection(site.origin, "pages", 15))).status).toBe(200);
    expect((await admin("POST", `/syncs/${id}/commit`)).status).toBe(200);
    expect(queue.sent.map((m) => [m.body.kind, m.body.trigger])).toEqual([["regenerate", "write"]]);
    await drain(e, queue);
    const shard = await fetchPath(site, "/sitemap-pages-1.xml");
    expect(shard.source).toBe("snapshot");
    expect(shard.body.match(/<loc>/g)).toHaveLength(15);
  });
});

describe("a job that keeps failing", () => {
  it("is retried, lands in the dead-letter queue, shows in status and on the dashboard with its error, and the next heartbeat runs it", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const site = newSite("jobs-dead", { MAX_URLS_PER_SHARD: "100" });
    await write(site, demoSection(site.origin, "pages", 150), PAST);
    // Every invocation's D1 fails on the regeneration's state (the jobs' own table still works).
    const broken = (e: Env) => countingEnv(e, { d1: 0, kv: 0 }, /regen_state/);
    const deliveries = await runCron(site.env, { perInvocation: broken });
    const regen = deliveries.filter((d) => d.job.kind === "regenerate").map((d) => d.result);
    expect(regen).toEqual(["retried", "retried", "retried", "retried", "retried", "dead"]);

    const status = await statusOf(site.env, site.origin);
    const job = status.jobs.find((j) => j.kind === "regenerate")!;
    expect(job).toMatchObject({ state: "dead", attempts: 6 });
    expect(job.error).toContain("injected failure");
    expect(job.deadAt).not.toBeNull();
    const page = await (await call(site.env, `${site.origin}/sitemap-admin/dashboard`, { headers: ADMIN })).text();
    expect(page).toMatch(/data-figure="job-state">dead</);
    expect(page).toContain("injected failure");

    // The next heartbeat schedules it again; with D1 healthy it converges and the error is gone.
    await runCron(site.env);
    const healed = await statusOf(site.env, site.origin);
    expect(healed.jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "idle", error: null, deadAt: null, outcome: "converged" });
    expect(healed.manifest?.snapshots).toBe(healed.manifest?.shards);
  });
});
