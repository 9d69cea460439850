/**
 * The KV source under KV's documented behaviour (support/eventual-kv.ts around the real binding: a
 * write is seen elsewhere only after 60 s; chosen writes stall or fail). Every acknowledged record
 * is served after the cron (and KV's propagation), none lost, none reverted: the writer object
 * decides from its SQLite, never from a KV read; its projection never has two writes of one key in
 * the air, so a late write cannot land over a newer one; a failed write is retried.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { blockName, manifestName, sitePrefix } from "../../src/adapters/kv/layout.ts";
import { writerOf } from "../../src/adapters/kv/object-protocol.ts";
import worker from "../../src/index.ts";
import { services } from "../../src/services.ts";
import { type EventualKv, PROPAGATION_MS, eventualKv } from "./support/eventual-kv.ts";
import { runCron, withJobs } from "./support/jobs.ts";
import { inObject, inSql, kvWriters, objectStatus, objectUsesKv, settled } from "./support/kv-objects.ts";
import { freshOrigin, locsOf } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let restores: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const restore of restores) await restore();
  restores = [];
});

/** A fresh KV site whose writer object and Worker both see KV through the eventual wrapper. */
async function eventualSite(label: string): Promise<{ origin: string; e: Env; kv: EventualKv }> {
  const origin = freshOrigin(label);
  const kv = eventualKv(env.URLS);
  restores.push(await objectUsesKv(origin, kv.kv));
  const e = {
    ...withJobs(env as Env).env,
    SITES: origin,
    URL_SOURCE: "kv",
    MANIFEST_STORE: "kv",
    URLS: kv.kv,
    EDGE_CACHE_TTL: "0",
    MANIFEST_CACHE_TTL: "0",
  } as unknown as Env;
  return { origin, e, kv };
}

async function call(e: Env, url: string, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, init) as Request<unknown, IncomingRequestCfProperties>, e, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** PUTs a batch until it is acknowledged, retrying as the answer says. */
async function putUntilStored(e: Env, origin: string, records: object[]): Promise<void> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const response = await call(e, `${origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...AUTH, "Content-Type": "application/json" },
      body: JSON.stringify(records),
    });
    if (response.status === 200) return;
    expect(response.status, await response.clone().text()).toBe(503);
    await sleep(Number(response.headers.get("retry-after")) * 1000);
  }
  throw new Error("no 200 after 40 attempts");
}

async function cron(e: Env): Promise<void> {
  await runCron(e);
}

/** Every <loc> a crawler is served: the index, then each shard it lists. */
async function served(e: Env, origin: string): Promise<string[]> {
  const text = async (url: string): Promise<string> => {
    const response = await call(e, url, { headers: { "Accept-Encoding": "identity" } });
    expect(response.status, url).toBe(200);
    return response.text();
  };
  const locs: string[] = [];
  for (const shard of locsOf(await text(`${origin}/sitemap.xml`))) locs.push(...locsOf(await text(shard)));
  return locs;
}

const batch = (origin: string, n: number, size: number, lastmod = "2026-11-01") =>
  Array.from({ length: size }, (_, i) => ({ loc: `${origin}/b${n}/r${i}`, lastmod }));

describe("the KV source with eventually consistent KV", () => {
  it("1,000 records in 100 concurrent batches: all served after one cron run, each once, though no block has reached KV yet", async () => {
    const { origin, e, kv } = await eventualSite("ev100");
    // Every block write of the projection stalls: the cron must render from the object, not from KV.
    kv.hold((name) => name.startsWith(sitePrefix(origin)));
    const batches = Array.from({ length: 100 }, (_, n) => batch(origin, n, 10));
    await Promise.all(batches.map((records) => putUntilStored(e, origin, records)));
    expect(kv.held().length).toBeGreaterThan(0);
    expect(kv.landed.filter((w) => w.name.startsWith(sitePrefix(origin)))).toEqual([]);

    await cron(e);
    // Right after the cron, KV elsewhere still answers the previous manifest (none): the wrapper works.
    expect(await kv.kv.get(manifestName(origin))).toBeNull();
    kv.advance(PROPAGATION_MS + 1_000);
    const locs = await served(e, origin);
    expect(locs).toHaveLength(1_000);
    expect(new Set(locs)).toEqual(new Set(batches.flat().map((r) => r.loc)));

    // The stalled writes land at last, and the projection catches up, one write per key at a time.
    await inObject(origin, () => kv.release());
    await settled(origin);
    expect(kv.maxConcurrentPerKey()).toBe(1);
    kv.advance(PROPAGATION_MS + 1_000);
    const live = await services(e).store.reader.recordPages({ origin, section: "pages", firstKey: 1, lastKey: 1_000 });
    let count = 0;
    for await (const page of live) count += page.length;
    expect(count).toBe(1_000);
  });

  it("a stalled KV write holds its block, not the site: later batches are acknowledged, and the late write never wins", async () => {
    const { origin, e, kv } = await eventualSite("evstall");
    const block0 = blockName(origin, "pages", 0);
    kv.hold((name) => name === block0);
    await putUntilStored(e, origin, batch(origin, 1, 10));
    // The projection's write of block 0 is now in the air, and stays there.
    for (let i = 0; i < 100 && kv.held().length === 0; i++) await sleep(20);
    expect(kv.held()).toEqual([block0]);
    // Later batches to the same block are committed meanwhile; an update of the first batch too.
    await putUntilStored(e, origin, batch(origin, 2, 10));
    await putUntilStored(e, origin, batch(origin, 1, 10, "2026-11-05"));
    const waiting = await writerOf(kvWriters(), origin).settle(origin, 500);
    expect(waiting.pending).toBe(1);
    // No second write of the block while the first is in the air.
    expect(kv.held()).toEqual([block0]);
    expect(kv.maxConcurrentPerKey()).toBe(1);

    await inObject(origin, () => kv.release());
    await settled(origin);
    const writes = kv.landed.filter((w) => w.name === block0).map((w) => JSON.parse(w.value!) as { loc: string; lastmod: string }[]);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    expect(writes[0]).toHaveLength(10); // the stalled write, with the first batch only
    const last = writes.at(-1)!;
    expect(last).toHaveLength(20); // then the newest rows
    expect(last.filter((entry) => entry.lastmod === "2026-11-05")).toHaveLength(10);
    expect(kv.maxConcurrentPerKey()).toBe(1);

    await cron(e);
    kv.advance(PROPAGATION_MS + 1_000);
    expect(new Set(await served(e, origin))).toEqual(new Set([...batch(origin, 1, 10), ...batch(origin, 2, 10)].map((r) => r.loc)));
    // The block as any location now reads it: the newest version.
    expect(JSON.parse((await kv.kv.get(block0))!).filter((entry: { lastmod: string }) => entry.lastmod === "2026-11-05")).toHaveLength(10);
  });

  it("a KV write that fails is retried with backoff, the status shows it meanwhile, and nothing is lost", async () => {
    const { origin, e, kv } = await eventualSite("evfail");
    const block0 = blockName(origin, "pages", 0);
    kv.fail((name) => name === block0, 1);
    await putUntilStored(e, origin, batch(origin, 1, 30));
    const failing = await writerOf(kvWriters(), origin).settle(origin, 200);
    expect(failing).toMatchObject({ pending: 1, failing: 1, adopting: false });
    expect(failing.lastError).toMatch(/^block write failed: injected KV failure/);
    expect(failing.nextRetryAt).toBeGreaterThan(Date.now() - 1_000);
    // The same through the store port (what /sitemap-admin/status shows).
    expect(await services(e).store.projection!.status(origin)).toMatchObject({ pending: 1, failing: 1 });
    const status = await worker.fetch(
      new Request(`${origin}/sitemap-admin/status`, { headers: { Authorization: "Bearer test-admin-token-0123456789abcdef" } }) as Request<
        unknown,
        IncomingRequestCfProperties
      >,
      e,
      createExecutionContext(),
    );
    expect(((await status.json()) as { records: unknown }).records).toMatchObject({
      store: "kv",
      projection: { pending: 1, failing: 1, lastError: expect.stringMatching(/^block write failed/), nextRetryAt: expect.any(String) },
    });

    // Retried after its backoff (1 s), by the object's alarm or here.
    const after = await settled(origin);
    expect(after).toMatchObject({ pending: 0, failing: 0, lastError: null });
    expect((await objectStatus(origin)).pending).toBe(0);

    await cron(e);
    kv.advance(PROPAGATION_MS + 1_000);
    expect(new Set(await served(e, origin))).toEqual(new Set(batch(origin, 1, 30).map((r) => r.loc)));
  });

  it("a write an earlier instance of the object left in the air fences its block for 120 s, then the block is written again", async () => {
    const { origin, e, kv } = await eventualSite("evreset");
    await putUntilStored(e, origin, batch(origin, 1, 10));
    await settled(origin);
    const block0 = blockName(origin, "pages", 0);
    const writesBefore = kv.landed.filter((w) => w.name === block0).length;
    // As a reset object leaves it: block 0 marked again, its write started by an instance that is gone.
    const mark = (putAt: number) =>
      inSql(origin, (sql) => {
        sql.exec(
          `INSERT INTO pending (kind, section, n, version, since, put_version, put_at, put_by) VALUES ('b', 'pages', 0, 7, ?, 7, ?, 'a-reset-instance')
           ON CONFLICT (kind, section, n) DO UPDATE SET put_at = excluded.put_at, put_by = excluded.put_by`,
          Date.now(),
          putAt,
        );
      });
    await mark(Date.now());
    const fenced = await writerOf(kvWriters(), origin).settle(origin, 300);
    expect(fenced.pending).toBe(1);
    expect(kv.landed.filter((w) => w.name === block0)).toHaveLength(writesBefore);
    // Past the fence, the block is written again from the rows.
    await mark(Date.now() - 121_000);
    await settled(origin);
    const writes = kv.landed.filter((w) => w.name === block0);
    expect(writes).toHaveLength(writesBefore + 1);
    expect(JSON.parse(writes.at(-1)!.value!)).toHaveLength(10);
  });
});
