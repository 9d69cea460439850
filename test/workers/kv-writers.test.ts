/**
 * Concurrent writers (issue #21): every 200 means stored, every other answer says when to retry,
 * and after the retries every record is there. KV goes through each site's writer object
 * (src/adapters/kv/site-writer.ts); D1 runs the same test as a guard. Also a writer that dies
 * mid-batch (the next writer finishes it) and a batch over the KV operation budget (413).
 */
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { kvBulkEntries } from "../../src/adapters/kv/bulk.ts";
import { Journal } from "../../src/adapters/kv/journal.ts";
import { bucketOfHash, locHash } from "../../src/adapters/kv/layout.ts";
import { kvReads } from "../../src/adapters/kv/site-batch.ts";
import type { KvSiteWriter } from "../../src/adapters/kv/site-writer.ts";
import { KvRecordWriter } from "../../src/adapters/kv/writer.ts";
import { ApiErrorSchema } from "../../src/admin/schemas.ts";
import { validateBatch } from "../../src/core/validate.ts";
import worker from "../../src/index.ts";
import { services } from "../../src/services.ts";
import { StoreBudgetError } from "../../src/store/errors.ts";
import { failingKv } from "./fixtures/kv-ops.ts";

const SITE = "http://localhost:8787"; // SITES in wrangler.jsonc
const ADMIN = `${SITE}/sitemap-admin/urls`;
const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

type Vars = Record<string, string>;
const KV: Vars = { URL_SOURCE: "kv", MANIFEST_STORE: "kv" };
const D1: Vars = { URL_SOURCE: "d1" };

let sections = 0;
/** A section name no other test uses (sections are per site, and the site is shared). */
const freshSection = (tag: string): string => `${tag}${Date.now().toString(36)}${sections++}`;

async function call(url: string, init: RequestInit, vars: Vars): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, init) as Request<unknown, IncomingRequestCfProperties>, { ...env, ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const put = (records: object[], vars: Vars): Promise<Response> =>
  call(ADMIN, { method: "PUT", headers: { ...AUTH, "Content-Type": "application/json" }, body: JSON.stringify(records) }, vars);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  /** Status of every answer, in order; the last one is 200. */
  statuses: number[];
}

/** PUTs until a 200, as a client should: every other answer must be a 503 with Retry-After and a JSON reason. */
async function putUntilStored(records: object[], vars: Vars): Promise<Outcome> {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 40; attempt++) {
    const response = await put(records, vars);
    statuses.push(response.status);
    if (response.status === 200) return { statuses };
    expect(response.status, await response.clone().text()).toBe(503);
    const retryAfter = response.headers.get("retry-after");
    expect(retryAfter).toMatch(/^\d+$/);
    const body = ApiErrorSchema.parse(await response.json());
    expect(["busy", "unavailable"]).toContain(body.error);
    expect(body.message).toMatch(/nothing|finish/);
    await sleep(Number(retryAfter) * 1000);
  }
  throw new Error(`no 200 after 40 attempts: ${statuses.join(",")}`);
}

/** Live locs of a section, read back through the configured store. */
async function storedLocs(vars: Vars, section: string): Promise<string[]> {
  const { store } = services({ ...env, ...vars } as Env);
  const keys = new Set<number>();
  const rows: number[] = [];
  for await (const row of store.reader.keyRows(SITE)) if (row.section === section && !row.deleted) rows.push(row.key);
  for (const key of rows) keys.add(key);
  expect(keys.size, "every record has its own key").toBe(rows.length);
  const locs: string[] = [];
  if (rows.length === 0) return locs;
  for await (const page of store.reader.recordPages({ origin: SITE, section, firstKey: Math.min(...rows), lastKey: Math.max(...rows) })) {
    for (const r of page) locs.push(r.loc);
  }
  return locs.sort();
}

const batchOf = (section: string, writer: number, size: number): { loc: string; section: string; lastmod: string }[] =>
  Array.from({ length: size }, (_, i) => ({ loc: `${SITE}/${section}/w${writer}/${i}`, section, lastmod: "2026-11-01" }));

describe.each([
  ["kv", KV],
  ["d1", D1],
])("10 concurrent writers on %s", (name, vars) => {
  it("acknowledge only stored records, and store all 1,000 after the retries", async () => {
    const section = freshSection(`c${name}`);
    const batches = Array.from({ length: 10 }, (_, w) => batchOf(section, w, 100));
    const acknowledged = new Set<string>();
    const outcomes = await Promise.all(
      batches.map(async (batch) => {
        const outcome = await putUntilStored(batch, vars);
        for (const r of batch) acknowledged.add(r.loc);
        return outcome;
      }),
    );
    const stored = await storedLocs(vars, section);
    expect(stored).toHaveLength(1000);
    expect(new Set(stored)).toEqual(acknowledged);
    // Spot checks through the read-back endpoint.
    for (const batch of batches) {
      const probe = await call(`${ADMIN}?loc=${encodeURIComponent(batch[57]!.loc)}`, { headers: AUTH }, vars);
      expect(probe.status).toBe(200);
    }
    // Every answer was a 200 or a retryable 503 (putUntilStored checks each); 10 writers fit the KV writer's queue.
    expect(outcomes.every((o) => o.statuses.at(-1) === 200)).toBe(true);
  });
});

describe("more concurrent KV writers than the site's queue holds", () => {
  it("turns the rest away with 503 + Retry-After, and stores them when they come back", async () => {
    const section = freshSection("q");
    const batches = Array.from({ length: 18 }, (_, w) => batchOf(section, w, 5));
    const outcomes = await Promise.all(batches.map((batch) => putUntilStored(batch, KV)));
    expect(outcomes.filter((o) => o.statuses[0] === 503).length).toBeGreaterThanOrEqual(2);
    expect(await storedLocs(KV, section)).toEqual(
      batches
        .flat()
        .map((r) => r.loc)
        .sort(),
    );
  });
});

describe("a KV writer that dies mid-batch", () => {
  const validated = (records: object[]) => validateBatch(records, { sites: new Set([SITE]), defaultSection: "pages" });
  const stub = () => env.KV_WRITERS.get(env.KV_WRITERS.idFromName(SITE)) as DurableObjectStub<KvSiteWriter>;

  it("is finished by the next writer: the counter, loc index and blocks it left half-written", async () => {
    const section = freshSection("kill");
    const dying = batchOf(section, 0, 100);
    const now = Date.parse("2026-11-20T10:00:00Z");
    // The writer journals its batch, then dies after 3 KV writes (of ~4: counter, index buckets).
    await runInDurableObject(stub(), async (_instance: KvSiteWriter, state) => {
      new Journal(state.storage.sql).save({ kind: "upsert", records: validated(dying), now });
    });
    await expect(new KvRecordWriter(failingKv(env.URLS, 3), { concurrency: 1 }).upsert(validated(dying), now)).rejects.toThrow(/partway/);
    expect(await storedLocs(KV, section)).toEqual([]);

    // The next writer is told to come back (its batch not written yet), then stored.
    const next = batchOf(section, 1, 100);
    const outcome = await putUntilStored(next, KV);
    expect(outcome.statuses).toEqual([503, 200]);
    const stored = await storedLocs(KV, section);
    expect(stored).toEqual([...dying, ...next].map((r) => r.loc).sort());
    const { store } = services({ ...env, ...KV } as Env);
    expect((await store.reader.find(dying[42]!.loc))?.updatedAt).toBe(now);
  });
});

describe("a KV write that fails partway", () => {
  const stub = () => env.KV_WRITERS.get(env.KV_WRITERS.idFromName(SITE)) as DurableObjectStub<KvSiteWriter>;

  it("is a 500 that says part may be written (KV is not atomic), and the next batch completes it", async () => {
    const section = freshSection("part");
    const first = batchOf(section, 0, 100);
    // The site's writer object gets a KV binding that fails after 2 writes (the counter and one index bucket), for one request.
    const own = await runInDurableObject(stub(), async (instance: KvSiteWriter) => {
      const real = Reflect.get(instance, "env") as Env;
      Reflect.set(instance, "env", { ...real, URLS: failingKv(real.URLS, 2) });
      return real;
    });
    const failed = await put(first, KV).finally(() =>
      runInDurableObject(stub(), async (instance: KvSiteWriter) => {
        Reflect.set(instance, "env", own);
      }),
    );
    expect(failed.status).toBe(500);
    const body = ApiErrorSchema.parse(await failed.json());
    expect(body.error).toBe("write_failed");
    expect(body.message).toMatch(/a KV write failed partway .*part of the batch may be written/);
    expect(body.message).toMatch(/not atomic: sending the same batch again completes it/);
    expect(body.message).not.toMatch(/nothing was written/);

    const second = batchOf(section, 1, 10);
    expect((await putUntilStored(second, KV)).statuses).toEqual([503, 200]);
    expect(await storedLocs(KV, section)).toEqual([...first, ...second].map((r) => r.loc).sort());
  });
});

describe("a KV batch over the operation budget", () => {
  it("is a 413 that says to split the batch, and writes nothing", async () => {
    const tag = freshSection("b");
    // One section per record: a block each, so 800 records need far more than 1,000 KV operations.
    const records = Array.from({ length: 800 }, (_, i) => ({ loc: `${SITE}/${tag}/${i}`, section: `${tag}s${i}` }));
    const response = await put(records, KV);
    expect(response.status).toBe(413);
    const body = ApiErrorSchema.parse(await response.json());
    expect(body.error).toBe("payload_too_large");
    expect(body.message).toMatch(/nothing was written: send smaller batches \(about \d+ records/);
    const probe = await call(`${ADMIN}?loc=${encodeURIComponent(records[0]!.loc)}`, { headers: AUTH }, KV);
    expect(probe.status).toBe(404);
  });
});

describe("KV reads of values larger together than one bulk get answers", () => {
  it("reads them in smaller groups: three 10 MB values (30 MB, over the 25 MB limit) all come back", async () => {
    const names = ["l#big#00", "l#big#01", "l#big#02"];
    const values = names.map((name, i) => `${name}:${String(i).repeat(10 * 1024 * 1024)}`);
    for (const [i, name] of names.entries()) await env.URLS.put(name, values[i]!);
    const summary = { operations: 0 };
    const read = await kvReads(env.URLS, summary).getMany(names, 20);
    expect(names.map((name) => read.get(name)?.length)).toEqual(values.map((v) => v.length));
    expect(names.map((name) => read.get(name)?.slice(0, 12))).toEqual(values.map((v) => v.slice(0, 12)));
    expect(summary.operations).toBeGreaterThan(1); // the one bulk get of all three was refused
  });
});

describe("a KV batch whose loc-index buckets are too large to load together", () => {
  it("is refused before loading them, with the batch size that fits, and writes nothing; that size is stored", async () => {
    const origin = "https://big.example";
    // A site of 10,000,000 records: its 256 buckets are ~1.5 MB each. Only the counter says so.
    await env.URLS.put(`c#${origin}`, "10000001");
    const ctx = { sites: new Set([origin]), defaultSection: "pages" };
    // Locs that differ early (the bucket is the hash's top byte): 100 of them land in many buckets.
    const records = (n: number) =>
      validateBatch(
        Array.from({ length: n }, (_, i) => ({ loc: `${origin}/${i}/${"p".repeat(i % 7)}` })),
        ctx,
      );
    expect(new Set(records(100).map((r) => bucketOfHash(locHash(r.loc)))).size).toBeGreaterThan(20);
    const writer = new KvRecordWriter(env.URLS);
    const refused = await writer.upsert(records(100)).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StoreBudgetError);
    expect((refused as Error).message).toMatch(/touches \d+ loc-index buckets of ~1\.5 MB each .*nothing was written: send at most 10 records per batch/);
    expect((await env.URLS.list({ prefix: `r#${origin}#` })).keys).toEqual([]);
    expect(await env.URLS.get(`c#${origin}`)).toBe("10000001");

    const stored = await writer.upsert(records(10));
    expect(stored.inserted).toBe(10);
    expect(await env.URLS.get(`c#${origin}`)).toBe("10000011");
  });
});

describe("a KV batch whose blocks are too large to load together", () => {
  it("is refused once the blocks it read pass the budget, with the batch size that fits, and writes nothing", async () => {
    const origin = "https://blocks.example";
    const ctx = { sites: new Set([origin]), defaultSection: "pages" };
    // 8 full blocks of 1,000 entries of ~3.5 KB each (under the 4,096-byte inline limit): ~28 MB.
    const pad = "x".repeat(1700);
    const record = (i: number, lastmod: string) => ({
      loc: `${origin}/${i}/${pad}`,
      lastmod,
      images: [{ loc: `${origin}/img/${i}/${pad}.jpg` }],
    });
    const seeded = validateBatch(
      Array.from({ length: 8000 }, (_, i) => record(i, "2026-01-01")),
      ctx,
    );
    for (const entry of await kvBulkEntries(seeded)) await env.URLS.put(entry.key, entry.value, entry.metadata ? { metadata: entry.metadata } : {});
    const blocks = await env.URLS.list({ prefix: `r#${origin}#` });
    expect(blocks.keys).toHaveLength(9); // keys 1–8,000: blocks 0–8
    const before = await Promise.all(blocks.keys.map((k) => env.URLS.get(k.name)));

    // One changed record in each of the 8 full blocks.
    const changes = (n: number) =>
      validateBatch(
        Array.from({ length: n }, (_, b) => record(b * 1000 + 500, "2026-02-02")),
        ctx,
      );
    const writer = new KvRecordWriter(env.URLS);
    const refused = await writer.upsert(changes(8)).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StoreBudgetError);
    const advice = /touches 8 blocks of ~3\.\d\d MB each; .*nothing was written: send at most (\d) records per batch/.exec((refused as Error).message);
    expect(advice).not.toBeNull();
    expect(await Promise.all(blocks.keys.map((k) => env.URLS.get(k.name)))).toEqual(before);

    // The advice holds: that many scattered records are stored.
    const fit = Number(advice![1]);
    expect(fit).toBeGreaterThanOrEqual(4);
    const stored = await writer.upsert(changes(fit));
    expect(stored.updated).toBe(fit);
    const changed = await env.URLS.get(blocks.keys[0]!.name);
    expect(changed).not.toBe(before[0]);
    expect(changed).toContain('"lastmod":"2026-02-02"');
  });
});
