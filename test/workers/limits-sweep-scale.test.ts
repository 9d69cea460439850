/**
 * The limits sweep at the sizes of a deployment rather than of a site (issue 51 item 7): a
 * 100,000-URL IndexNow backlog sent across job steps, and 20,000 registered sites through the
 * platform's health page and the heartbeat. Each runs through the Worker's entry under the
 * enforcing meter, every invocation asserted inside the limits; the largest one is logged for
 * docs/capacity.md's per-path table.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import worker from "../../src/index.ts";
import { newSite, write } from "./regen-support.ts";
import { bearer } from "./support/admin.ts";
import { deliver, runCron, withJobs } from "./support/jobs.ts";
import { quiet, report, watchMeters } from "./support/meters.ts";

afterEach(() => vi.restoreAllMocks());

const KEY = "sweep-key-0123456789abcdef";
const ENDPOINT = "https://indexnow.test/indexnow";

describe("a 100,000-URL IndexNow backlog", () => {
  it("is sent whole, each URL once, in batches of at most 10,000 across job steps, every invocation inside the limits", async () => {
    quiet();
    const site = newSite("sweep-indexnow", { INDEXNOW_KEY: KEY, INDEXNOW_ENDPOINT: ENDPOINT, NOTIFY_SETTLE_SECONDS: "0", REGEN_SETTLE_SECONDS: "0" });
    const sent: string[][] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      if (request.url !== ENDPOINT) return new Response("not found", { status: 404 });
      sent.push(((await request.json()) as { urlList: string[] }).urlList);
      return new Response(null, { status: 200 });
    });
    // The first run sets the cursor: what was written before IndexNow was on is never sent.
    await write(site, demoSection(site.origin, "before", 10), Date.now() - 3_600_000);
    await runCron(site.env);
    expect(sent).toEqual([]);
    const backlog = demoSection(site.origin, "pages", 100_000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let i = 0; i < backlog.length; i += 10_000) await write(site, backlog.slice(i, i + 10_000));
    const watch = watchMeters();
    // A run sends INDEXNOW_BATCHES_PER_RUN batches; the next heartbeat goes on from the cursor.
    const deliveries = [...(await runCron(site.env)), ...(await runCron(site.env))];
    expect(deliveries.every((d) => d.result === "acked")).toBe(true);
    expect(sent.every((batch) => batch.length <= 10_000)).toBe(true);
    const urls = sent.flat();
    expect(new Set(urls).size).toBe(urls.length);
    // Sent as URLs (percent-encoded), each of the backlog's: compared by count, a 100,000-entry diff would take minutes.
    const wanted = new Set(backlog.map((r) => new URL(r.loc).href));
    expect(urls.filter((u) => !wanted.has(u))).toEqual([]);
    expect(urls.length).toBe(wanted.size);
    expect(watch.refused).toEqual([]);
    report(`a 100,000-URL IndexNow backlog: ${sent.length} POSTs, ${deliveries.length} job steps, largest invocation ${watch.largest()} service calls`);
  }, 600_000);
});

describe("20,000 registered sites", () => {
  const SITES = 20_000;
  let prefix = "";
  afterEach(async () => {
    await baseEnv.DB.prepare("DELETE FROM registry_sites WHERE origin LIKE ?1 || '%'").bind(prefix).run();
  });

  /** The sites, written in one statement (the registry's own API is tested elsewhere; here only its size matters). */
  async function register(): Promise<void> {
    prefix = `https://sweep20k-${Math.random().toString(36).slice(2, 8)}-`;
    const now = Date.now();
    await baseEnv.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?2 - 1)
       INSERT INTO registry_sites (origin, settings, token_hash, created_at, updated_at, deleted_at, host)
       SELECT ?1 || printf('%05d', i) || '.test', '{}', printf('%064d', i), ?3, ?3, NULL, substr(?1 || printf('%05d', i) || '.test', 9) FROM n`,
    )
      .bind(prefix, SITES, now)
      .run();
  }

  it("the platform's health page answers 200 a page at a time, each page inside the limits, and the pages list every site once", async () => {
    quiet();
    await register();
    const watch = watchMeters();
    const seen = new Set<string>();
    let after: string | null = null;
    let pages = 0;
    let first = 0;
    // Every site's health, page after page, would be 1,000 pages here: the first five show the walk and its cost.
    do {
      const query: string = `health=true&contains=${encodeURIComponent(prefix.slice("https://".length))}${after === null ? "" : `&after=${encodeURIComponent(after)}`}`;
      const ctx = createExecutionContext();
      const res = await worker.fetch(new Request(`http://localhost:8787/sitemap-admin/sites?${query}`, { headers: bearer }) as never, baseEnv as Env, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { sites: { origin: string; health: unknown }[]; next: string | null };
      expect(body.sites.length).toBeGreaterThan(0);
      for (const s of body.sites) {
        expect(seen.has(s.origin)).toBe(false);
        expect(s.health).toBeDefined();
        seen.add(s.origin);
      }
      if (pages === 0) first = body.sites.length;
      after = body.next;
      pages++;
    } while (after !== null && pages < 5);
    expect(after).not.toBeNull();
    expect(seen.size).toBe(first * pages);
    expect(watch.refused).toEqual([]);
    report(`platform health page at 20,000 sites: ${first} sites a page, largest invocation ${watch.largest()} service calls`);
  }, 300_000);

  it("the heartbeat's registry sweep schedules every site's jobs across steps, each inside the limits", async () => {
    quiet();
    await register();
    const watch = watchMeters();
    const { env: e, queue } = withJobs(baseEnv as Env);
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());
    // Only the sweep's own chain is delivered: the 20,000 sites' jobs it schedules are counted, not run.
    let steps = 0;
    for (let sweep = queue.pending.find((m) => m.body.kind === "registry-sweep"); sweep; steps++) {
      expect(steps).toBeLessThan(100);
      queue.pending.splice(queue.pending.indexOf(sweep), 1);
      const result = await deliver(e, sweep.body);
      expect(result.retryMessages).toEqual([]);
      expect(result.retryBatch.retry).toBe(false);
      sweep = queue.pending.find((m) => m.body.kind === "registry-sweep");
    }
    const scheduled = new Set(queue.sent.filter((m) => m.body.origin.startsWith(prefix)).map((m) => m.body.origin));
    expect(scheduled.size).toBe(SITES);
    expect(watch.refused).toEqual([]);
    report(
      `registry sweep at 20,000 registered sites: ${steps} steps, ${queue.sent.length} messages sent, largest invocation ${watch.largest()} service calls`,
    );
  }, 300_000);
});
