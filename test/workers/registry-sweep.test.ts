/**
 * The heartbeat's fan-out over registered sites (src/jobs/registry-sweep.ts, docs/jobs.md): one
 * heartbeat queues one registry sweep, whose chain schedules every registered site's jobs page by
 * page through the real consumer, each invocation within Cloudflare's per-invocation limits (the
 * entry's meter throws past them: src/jobs/meter.ts; the bindings are counted here besides); a
 * heartbeat crossing the sweep starts no second one; a registered site's jobs run on its own
 * services.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index.ts";
import { type Counts, countingEnv } from "./support/counting-env.ts";
import { type RecordingQueue, type Sent, deliver, withJobs } from "./support/jobs.ts";

const SITES = 1_000;
/** The Paid plan's per-invocation limits (D1 and KV "Limits"; Queues sends count as subrequests). */
const D1_QUERIES_PER_INVOCATION = 1_000;
const KV_OPERATIONS_PER_INVOCATION = 1_000;

const origin = (i: number): string => `https://t${i}.sweep.example`;
const MIRRORED = origin(7);
const CMS_SITEMAP = "http://127.0.0.1:9/cms-sitemap.xml";

async function heartbeat(e: Env): Promise<void> {
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());
}

/** Delivers one pending message as its own invocation, counted at its bindings; whether the consumer acknowledged it. */
async function deliverCounted(e: Env, queue: RecordingQueue, message: Sent, counts: Counts): Promise<boolean> {
  queue.pending.splice(queue.pending.indexOf(message), 1);
  message.attempts++;
  const result = await deliver(countingEnv(e, counts), message.body, message.attempts, undefined, message.id);
  return !result.retryBatch.retry && result.retryMessages.length === 0;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the registry sweep", () => {
  it(`one heartbeat schedules every one of ${SITES} registered sites, each invocation within the limits; a crossing heartbeat starts no second sweep`, async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const now = Date.now();
    // 1,000 registered sites with valid (empty) settings, in one statement; one of them mirrors a CMS on another host.
    await baseEnv.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       INSERT INTO registry_sites (origin, settings, token_hash, created_at, updated_at, host)
       SELECT 'https://t' || i || '.sweep.example', '{}', lower(hex(randomblob(32))), ?2, ?2, 't' || i || '.sweep.example' FROM n`,
    )
      .bind(SITES, now)
      .run();
    await baseEnv.DB.prepare("UPDATE registry_sites SET settings = ?2 WHERE origin = ?1")
      .bind(MIRRORED, JSON.stringify({ MIRROR_SITEMAPS: CMS_SITEMAP }))
      .run();

    // The deployment vouches for its tenants' hosts: the CMS is on another host (docs/tenants.md "Settings that name hosts").
    const { env: e, queue } = withJobs({ ...baseEnv, SITE_SETTINGS_ANY_HOST: "true" } as Env);
    await heartbeat(e);
    const sweeps = () => queue.sent.filter((m) => m.body.kind === "registry-sweep");
    // The heartbeat itself schedules no registered site: it queues the sweep.
    expect(sweeps()).toHaveLength(1);
    expect(queue.sent.filter((m) => m.body.origin.endsWith(".sweep.example"))).toHaveLength(0);

    const perInvocation: Counts[] = [];
    let crossed = false;
    for (;;) {
      const next = queue.pending.find((m) => m.body.kind === "registry-sweep");
      if (!next) break;
      const counts = { d1: 0, kv: 0 };
      perInvocation.push(counts);
      expect(await deliverCounted(e, queue, next, counts)).toBe(true);
      if (!crossed) {
        // A heartbeat while the sweep's chain is live leaves it to that chain.
        crossed = true;
        await heartbeat(e);
      }
    }
    expect(sweeps().map((m) => [m.body.trigger, m.body.step])).toEqual([
      ["cron", 0],
      ["continue", 1],
    ]);
    for (const counts of perInvocation) {
      expect(counts.d1).toBeLessThan(D1_QUERIES_PER_INVOCATION);
      expect(counts.kv).toBeLessThan(KV_OPERATIONS_PER_INVOCATION);
    }
    // Measured: 54 D1 queries for the step of 1,000 sites (a page read per 200, a statement per 24 jobs started).
    expect(Math.max(...perInvocation.map((c) => c.d1))).toBeLessThan(100);

    // Every site got its regeneration, started as a chain in its database's jobs table.
    const regenerations = new Set(queue.sent.filter((m) => m.body.kind === "regenerate").map((m) => m.body.origin));
    for (let i = 1; i <= SITES; i++) expect(regenerations.has(origin(i))).toBe(true);
    const rows = await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'regenerate' AND origin LIKE '%.sweep.example'").first("n");
    expect(rows).toBe(SITES);
    // The mirrored site's mirror job carries the site, since its URL is on another host; its target is the site's and
    // the URL's, so another site naming the URL keeps a chain of its own.
    const mirror = queue.sent.find((m) => m.body.kind === "mirror");
    expect(mirror?.body).toMatchObject({ origin: `${MIRRORED} ${CMS_SITEMAP}`, site: MIRRORED });

    // A registered site's jobs run on its own services through the consumer.
    const regenerate = queue.pending.find((m) => m.body.kind === "regenerate" && m.body.origin === origin(3))!;
    expect(await deliverCounted(e, queue, regenerate, { d1: 0, kv: 0 })).toBe(true);
    const ran = await baseEnv.DB.prepare("SELECT outcome FROM jobs WHERE kind = 'regenerate' AND origin = ?1").bind(origin(3)).first<string>("outcome");
    expect(ran).toBeTruthy();
    expect(await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM manifests WHERE origin = ?1").bind(origin(3)).first("n")).toBe(1);
    const mirrored = queue.pending.find((m) => m === mirror)!;
    expect(await deliverCounted(e, queue, mirrored, { d1: 0, kv: 0 })).toBe(true);
    const mirrorOutcome = await baseEnv.DB.prepare("SELECT outcome FROM jobs WHERE kind = 'mirror' AND origin = ?1")
      .bind(`${MIRRORED} ${CMS_SITEMAP}`)
      .first<string>("outcome");
    expect(mirrorOutcome).toBeTruthy();
    expect(mirrorOutcome).not.toBe("not-a-mirror");

    // A job of a site deleted since it was queued is acknowledged as a no-op.
    await baseEnv.DB.prepare("UPDATE registry_sites SET deleted_at = ?2 WHERE origin = ?1").bind(origin(4), Date.now()).run();
    const gone = queue.pending.find((m) => m.body.kind === "regenerate" && m.body.origin === origin(4))!;
    const logged = vi.spyOn(console, "log").mockImplementation(() => undefined);
    // A fresh env: a new isolate's list of sites (this one's was read before the deletion).
    const fresh = { ...e };
    queue.pending.splice(queue.pending.indexOf(gone), 1);
    const result = await deliver(fresh, gone.body, 1, undefined, gone.id);
    expect(result.retryMessages).toEqual([]);
    expect(logged.mock.calls.map((c) => String(c[0])).some((line) => line.includes('"outcome":"no such site"'))).toBe(true);
  });
});
