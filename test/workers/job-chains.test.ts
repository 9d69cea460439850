/**
 * One chain per job and target (src/jobs/store.ts, docs/jobs.md "One chain per job"), through the
 * real entry: heartbeats, duplicates and writes that cross a running chain never start a second
 * one and never stall it; a step killed mid-run (no `finally`) is taken over by its retry at once,
 * counted as a failure, and after max_retries the job is dead in status until the next heartbeat.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import worker from "../../src/index.ts";
import type { Job } from "../../src/jobs/messages.ts";
import { CHAIN_LOST_MS } from "../../src/jobs/store.ts";
import { listed, manifestOf, newSite, write } from "./regen-support.ts";
import { type RecordingQueue, type Sent, deliver, withJobs } from "./support/jobs.ts";
import { index, url, urlset } from "./support/mirror-remote.ts";
import { call } from "./support.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const PAST = Date.UTC(2026, 0, 1);
const MAX_RETRIES = 5;

interface Status {
  runs: { trigger: string; ok: boolean; rowsRead: number; shardsRendered: number }[];
  jobs: {
    kind: string;
    target: string;
    state: string;
    outcome: string | null;
    error: string | null;
    attempts: number;
    killed: number;
    deadAt: string | null;
  }[];
}

async function statusOf(e: Env, origin: string): Promise<Status> {
  const res = await call(e, `${origin}/sitemap-admin/status`, { headers: ADMIN });
  expect(res.status).toBe(200);
  return (await res.json()) as Status;
}

const heartbeat = (e: Env) => worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());

/** The earliest pending message (delayed ones as if their time had come), removed from the queue. */
function next(queue: RecordingQueue): Sent | undefined {
  queue.pending.sort((a, b) => a.dueAt - b.dueAt);
  return queue.pending.shift();
}

/** Delivers every pending message, calling `between(i)` after the i-th delivery: what crosses the chain. */
async function run(e: Env, queue: RecordingQueue, between: (i: number) => Promise<void> = async () => {}, max = 200): Promise<Sent[]> {
  const done: Sent[] = [];
  for (let i = 0; ; i++) {
    const m = next(queue);
    if (!m) return done;
    if (i >= max) throw new Error("the chain does not end");
    m.attempts++;
    const result = await deliver(e, m.body, m.attempts, undefined, m.id);
    if (result.retryBatch.retry || result.retryMessages.length > 0) queue.pending.push({ ...m, dueAt: Date.now() });
    done.push(m);
    await between(i);
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a regeneration chain crossed by heartbeats", () => {
  it("stays one chain: three heartbeats while it runs start nothing, and the records are read about once", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    // 30 shards of 100 URLs, 5 a run: six steps.
    const site = newSite("chain-regen", { MAX_URLS_PER_SHARD: "100", REGEN_MAX_SHARDS: "5" });
    await write(site, demoSection(site.origin, "pages", 3_000), PAST);
    const { env: e, queue } = withJobs(site.env);
    await heartbeat(e);
    await run(e, queue, async (i) => {
      if (i < 3) await heartbeat(e);
    });
    const regenerations = queue.sent.filter((m) => m.body.kind === "regenerate");
    expect(new Set(regenerations.map((m) => m.body.chain)).size).toBe(1);
    expect(regenerations.map((m) => m.body.step)).toEqual([0, 1, 2, 3, 4, 5]);
    const status = await statusOf(site.env, site.origin);
    const rowsRead = status.runs.reduce((n, r) => n + r.rowsRead, 0);
    expect(status.runs).toHaveLength(6);
    expect(rowsRead).toBeLessThanOrEqual(1.3 * 3_000);
    expect(listed(await manifestOf(site))).toHaveLength(30);
    expect(status.jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "idle", error: null });
    // Ended: the next heartbeat starts a new chain.
    await heartbeat(e);
    expect(new Set(queue.sent.filter((m) => m.body.kind === "regenerate").map((m) => m.body.chain)).size).toBe(2);
  });

  it("a write during the chain's last step makes it run once more, and the write is published", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("chain-write", { MAX_URLS_PER_SHARD: "100", REGEN_MAX_SHARDS: "50", REGEN_SETTLE_SECONDS: "1" });
    await write(site, demoSection(site.origin, "pages", 300), PAST);
    const { env: e, queue } = withJobs(site.env);
    await heartbeat(e);
    const first = queue.pending.find((m) => m.body.kind === "regenerate")!;
    queue.pending.splice(queue.pending.indexOf(first), 1);
    // The write lands while the step runs: the delivery has begun (its first query went out first) and is still rendering.
    const delivered = deliver(e, first.body, 1, undefined, first.id);
    const res = await call(e, `${site.origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...ADMIN, "Content-Type": "application/json" },
      body: JSON.stringify([{ loc: `${site.origin}/during-the-step` }]),
    });
    expect(res.status).toBe(200);
    await delivered;
    // The write's request was taken by the live chain, which ran once more ("requested") instead of a second chain.
    expect(queue.sent.filter((m) => m.body.kind === "regenerate").map((m) => m.body.trigger)).toEqual(["cron", "requested"]);
    await run(e, queue);
    const regenerations = queue.sent.filter((m) => m.body.kind === "regenerate");
    expect(new Set(regenerations.map((m) => m.body.chain)).size).toBe(1);
    const body = await (await call(e, `${site.origin}/sitemap-pages-4.xml`)).text();
    expect(body).toContain(`${site.origin}/during-the-step</loc>`);
  });
});

describe("a mirror chain crossed by heartbeats", () => {
  it("sends no more requests to the remote than the same pass without them", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const CHILDREN = 40;
    const pass = async (crossed: boolean) => {
      const site = newSite(crossed ? "chain-mirror-crossed" : "chain-mirror", { MIRROR_MAX_RECORDS_PER_RUN: "100", MIRROR_MAX_REQUESTS_PER_RUN: "10" });
      const mirror = `${site.origin}/cms/sitemap.xml`;
      const children = Array.from({ length: CHILDREN }, (_, i) => `${site.origin}/cms/child-${i}.xml`);
      const answers = new Map<string, string>([[mirror, index(children)]]);
      for (const [i, child] of children.entries()) answers.set(child, urlset(Array.from({ length: 10 }, (_, j) => url(`${site.origin}/p/${i}/${j}`))));
      let requests = 0;
      vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
        requests++;
        const body = answers.get(String(input instanceof Request ? input.url : input));
        return body ? new Response(body, { headers: { "Content-Type": "application/xml" } }) : new Response("not found", { status: 404 });
      });
      const e0 = { ...site.env, MIRROR_SITEMAPS: mirror } as Env;
      const { env: e, queue } = withJobs(e0);
      await heartbeat(e);
      await run(e, queue, async (i) => {
        if (crossed && i < 3) await heartbeat(e);
      });
      const mirrors = queue.sent.filter((m) => m.body.kind === "mirror");
      vi.mocked(globalThis.fetch).mockRestore();
      const crawl = await (await call(e, `${site.origin}/sitemap-pages-1.xml`)).text();
      return { requests, chains: new Set(mirrors.map((m) => m.body.chain)).size, steps: mirrors.length, locs: crawl.split("<loc>").length - 1 };
    };
    const plain = await pass(false);
    const crossed = await pass(true);
    expect(plain.steps).toBeGreaterThan(3);
    expect(plain.locs).toBe(CHILDREN * 10);
    expect(crossed).toEqual({ ...plain });
    expect(crossed.chains).toBe(1);
  });
});

describe("a step killed mid-run", () => {
  /** What a killed attempt leaves: the step begun under its message (its lease), the site's lease taken under the chain, nothing finished. */
  async function killedAttempt(e: Env, m: Sent): Promise<void> {
    m.attempts++;
    const now = Date.now();
    await e.DB.prepare("UPDATE jobs SET lease_holder = ?3, lease_attempt = ?4, lease_until = ?5 WHERE kind = ?1 AND origin = ?2")
      .bind(m.body.kind, m.body.origin, m.id, m.attempts, now + 180_000)
      .run();
    await e.DB.prepare(
      `INSERT INTO regen_state (origin, state, lease_id, lease_until, updated_at) VALUES (?1, '', ?2, ?3, ?4)
       ON CONFLICT(origin) DO UPDATE SET lease_id = ?2, lease_until = ?3`,
    )
      .bind(m.body.origin, m.body.chain, now + 20 * 60_000, now)
      .run();
  }

  it("is taken over by its retry at once (not 20 minutes later), counted, and the chain goes on to converged", async () => {
    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      logged.push(String(line));
    });
    const site = newSite("chain-killed", { MAX_URLS_PER_SHARD: "100", REGEN_MAX_SHARDS: "5" });
    await write(site, demoSection(site.origin, "pages", 1_000), PAST);
    const { env: e, queue } = withJobs(site.env);
    await heartbeat(e);
    const m = queue.pending.find((s) => s.body.kind === "regenerate")!;
    await killedAttempt(e, m);
    let status = await statusOf(site.env, site.origin);
    expect(status.jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "running" });
    // The queue redelivers it (attempt 2): it runs now.
    queue.pending.splice(queue.pending.indexOf(m), 1);
    m.attempts++;
    const result = await deliver(e, m.body, m.attempts, undefined, m.id);
    expect(result.explicitAcks).toHaveLength(1);
    const taken = logged
      .map((l) => (l.startsWith("{") ? (JSON.parse(l) as Record<string, unknown>) : {}))
      .find((l) => l["event"] === "sitemap.job" && l["tookOver"]);
    expect(taken).toMatchObject({ kind: "regenerate", outcome: "continued" });
    status = await statusOf(site.env, site.origin);
    expect(status.runs[0]).toMatchObject({ ok: true, trigger: "cron" });
    expect(status.runs[0]!.shardsRendered).toBeGreaterThan(0);
    await run(e, queue);
    expect(listed(await manifestOf(site)).every((s) => s.snapshot)).toBe(true);
    status = await statusOf(site.env, site.origin);
    expect(status.jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "idle", error: null, killed: 0 });
  });

  it("killed on every attempt: each death a failed attempt, then the dead-letter queue; status and the dashboard say so; the next heartbeat starts it again", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const site = newSite("chain-dies", { MAX_URLS_PER_SHARD: "100" });
    await write(site, demoSection(site.origin, "pages", 200), PAST);
    const { env: e, queue } = withJobs(site.env);
    await heartbeat(e);
    const m = queue.pending.find((s) => s.body.kind === "regenerate")!;
    queue.pending.splice(queue.pending.indexOf(m), 1);
    // Each attempt begins (through the real consumer) and dies: emulated by the state a death leaves.
    for (let attempt = 1; attempt <= MAX_RETRIES + 1; attempt++) {
      await e.DB.prepare(
        "UPDATE jobs SET lease_holder = ?3, lease_attempt = ?4, lease_until = ?5, killed = killed + ?6, attempts = attempts + ?6 WHERE kind = ?1 AND origin = ?2",
      )
        .bind("regenerate", site.origin, m.id, attempt, Date.now() + 180_000, attempt > 1 ? 1 : 0)
        .run();
    }
    // After max_retries the queue moves the message to the dead-letter queue; its consumer marks the job dead.
    await deliver(e, m.body, 1, "edge-sitemaps-jobs-dlq", m.id);
    const status = await statusOf(site.env, site.origin);
    const job = status.jobs.find((j) => j.kind === "regenerate")!;
    expect(job).toMatchObject({ state: "dead", killed: MAX_RETRIES, attempts: MAX_RETRIES });
    expect(job.deadAt).not.toBeNull();
    const page = await (await call(e, `${site.origin}/sitemap-admin/`, { headers: ADMIN })).text();
    expect(page).toMatch(/data-job="regenerate".*dead/s);
    // The next heartbeat starts it again, and this time it runs.
    queue.pending.length = 0;
    await heartbeat(e);
    expect(queue.pending.some((s) => s.body.kind === "regenerate" && s.body.chain !== m.body.chain)).toBe(true);
    await run(e, queue);
    expect((await statusOf(site.env, site.origin)).jobs.find((j) => j.kind === "regenerate")).toMatchObject({ state: "idle", error: null });
  });

  it("a retry that finds its own killed attempt takes over; a duplicate of a running step does nothing", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("chain-dup-running", { MAX_URLS_PER_SHARD: "100" });
    await write(site, demoSection(site.origin, "pages", 200), PAST);
    const { env: e, queue } = withJobs(site.env);
    await heartbeat(e);
    const m = queue.pending.find((s) => s.body.kind === "regenerate")!;
    queue.pending.splice(queue.pending.indexOf(m), 1);
    // Another delivery (another message id) runs this step: a duplicate with its own id is a no-op.
    await e.DB.prepare("UPDATE jobs SET lease_holder = 'someone-else', lease_attempt = 1, lease_until = ?3 WHERE kind = ?1 AND origin = ?2")
      .bind("regenerate", site.origin, Date.now() + 180_000)
      .run();
    const before = (await statusOf(site.env, site.origin)).runs.length;
    await deliver(e, m.body, 1, undefined, m.id);
    expect((await statusOf(site.env, site.origin)).runs.length).toBe(before);
    expect(queue.sent.filter((s) => s.body.kind === "regenerate")).toHaveLength(1);
  });
});

describe("a chain whose message was lost", () => {
  it("is replaced by the next heartbeat once its message is long overdue; its late message is then a no-op", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("chain-lost", { MAX_URLS_PER_SHARD: "100" });
    await write(site, demoSection(site.origin, "pages", 200), PAST);
    const { env: e, queue } = withJobs(site.env);
    await heartbeat(e);
    const lost = queue.pending.find((s) => s.body.kind === "regenerate")!;
    queue.pending.length = 0;
    // Not yet: a heartbeat within CHAIN_LOST_MS leaves the live chain alone.
    await heartbeat(e);
    expect(queue.pending.some((s) => s.body.kind === "regenerate")).toBe(false);
    await e.DB.prepare("UPDATE jobs SET due_at = ?3 WHERE kind = ?1 AND origin = ?2")
      .bind("regenerate", site.origin, Date.now() - CHAIN_LOST_MS - 1)
      .run();
    await heartbeat(e);
    const fresh = queue.pending.find((s) => s.body.kind === "regenerate")!;
    expect(fresh.body.chain).not.toBe(lost.body.chain);
    const before = (await statusOf(site.env, site.origin)).runs.length;
    await deliver(e, lost.body as Job, 1, undefined, lost.id);
    expect((await statusOf(site.env, site.origin)).runs.length).toBe(before);
    await run(e, queue);
    expect((await statusOf(site.env, site.origin)).runs.length).toBe(before + 1);
  });
});
