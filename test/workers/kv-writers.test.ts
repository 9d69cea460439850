/**
 * Concurrent writers: every 200 means stored, every other answer says when to retry, and after the
 * retries every record is there, exactly once. KV goes through each site's writer object
 * (src/adapters/kv/writer-object.ts); D1 runs the same test as a guard. Also the check of issue 29
 * (50 clients × 40 URLs, one cron run, all 2,000 served once) and a site whose records are already
 * in KV (the object adopts them while writers are told to retry).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { kvBulkEntries } from "../../src/adapters/kv/bulk.ts";
import { ApiErrorSchema } from "../../src/admin/schemas.ts";
import { validateBatch } from "../../src/core/validate.ts";
import worker from "../../src/index.ts";
import { services } from "../../src/services.ts";
import { runCron, withJobs } from "./support/jobs.ts";
import { settled } from "./support/kv-objects.ts";
import { freshOrigin, locsOf } from "./support.ts";

const SITE = "http://localhost:8787"; // SITES in wrangler.jsonc
const ADMIN = `${SITE}/sitemap-admin/urls`;
const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

type Vars = Record<string, string>;
const KV: Vars = { URL_SOURCE: "kv", MANIFEST_STORE: "kv" };
const D1: Vars = { URL_SOURCE: "d1" };

let sections = 0;
/** A section name no other test uses (sections are per site, and the site is shared). */
const freshSection = (tag: string): string => `${tag}${Date.now().toString(36)}${sections++}`;

/** The jobs the writes queue (regenerations), run by the cron's drain. */
const jobs = withJobs(env as Env);

async function call(url: string, init: RequestInit, vars: Vars): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, init) as Request<unknown, IncomingRequestCfProperties>, { ...jobs.env, ...vars } as Env, ctx);
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
    expect(body.message).toMatch(/nothing|not at all/);
    await sleep(Number(retryAfter) * 1000);
  }
  throw new Error(`no 200 after 40 attempts: ${statuses.join(",")}`);
}

/** Live locs of a section, read back through the configured store (on KV, once the projection has reached it). */
async function storedLocs(vars: Vars, section: string): Promise<string[]> {
  if (vars["URL_SOURCE"] === "kv") await settled(SITE);
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
    // Every answer was a 200 or a retryable 503 (putUntilStored checks each; on KV, writers that
    // arrive while the site's object adopts what KV already holds are told to come back).
    expect(outcomes.every((o) => o.statuses.at(-1) === 200)).toBe(true);
  });
});

/** Every <loc> of the site's documents as a crawler sees them: the index, then each shard it lists. */
async function servedLocs(e: Env, origin: string): Promise<string[]> {
  const fetchText = async (url: string): Promise<string> => {
    const response = await call(url, { headers: { "Accept-Encoding": "identity" } }, e as unknown as Vars);
    expect(response.status, url).toBe(200);
    return response.text();
  };
  const locs: string[] = [];
  for (const shard of locsOf(await fetchText(`${origin}/sitemap.xml`))) locs.push(...locsOf(await fetchText(shard)));
  return locs;
}

describe("50 concurrent clients of one KV site, 40 URLs each (issue 29's check)", () => {
  it("are all stored, and after one cron run all 2,000 URLs are served, each exactly once", async () => {
    const origin = freshOrigin("kv50");
    const e = { ...jobs.env, SITES: origin, ...KV, EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" } as unknown as Env;
    const vars = e as unknown as Vars;
    const batches = Array.from({ length: 50 }, (_, client) =>
      Array.from({ length: 40 }, (_, i) => ({ loc: `${origin}/c${client}/u${i}`, lastmod: "2026-11-01" })),
    );
    const outcomes = await Promise.all(
      batches.map(async (records) => {
        const statuses: number[] = [];
        for (;;) {
          const response = await call(
            `${origin}/sitemap-admin/urls`,
            { method: "PUT", headers: { ...AUTH, "Content-Type": "application/json" }, body: JSON.stringify(records) },
            vars,
          );
          statuses.push(response.status);
          if (response.status === 200) return statuses;
          expect([409, 429, 503], await response.clone().text()).toContain(response.status);
          await sleep(Number(response.headers.get("retry-after")) * 1000);
        }
      }),
    );
    expect(outcomes.every((statuses) => statuses.at(-1) === 200)).toBe(true);

    await runCron(e);

    const served = await servedLocs(e, origin);
    expect(served).toHaveLength(2_000);
    expect(new Set(served)).toEqual(new Set(batches.flat().map((r) => r.loc)));
  });
});

describe("a KV site whose records are already in KV (a bulk load, or an earlier version)", () => {
  it("is adopted by its writer object on the first write; writers that come meanwhile are told to retry; every loc keeps its key", async () => {
    const origin = freshOrigin("kvadopt");
    const e = { ...env, SITES: origin, ...KV } as unknown as Env;
    const ctx = { sites: new Set([origin]), defaultSection: "pages" };
    const loaded = validateBatch(
      Array.from({ length: 3_000 }, (_, i) => ({ loc: `${origin}/old/${i}` })),
      ctx,
    );
    for (const entry of kvBulkEntries(loaded, { stampOf: () => Date.UTC(2026, 0, 1) })) {
      await env.URLS.put(entry.key, entry.value, entry.metadata ? { metadata: entry.metadata } : {});
    }
    const writes = Array.from({ length: 5 }, (_, w) => [{ loc: `${origin}/old/${w * 7}`, lastmod: "2026-11-02" }, { loc: `${origin}/new/${w}` }]);
    const outcomes = await Promise.all(
      writes.map(async (records) => {
        const statuses: number[] = [];
        for (;;) {
          const response = await call(
            `${origin}/sitemap-admin/urls`,
            { method: "PUT", headers: { ...AUTH, "Content-Type": "application/json" }, body: JSON.stringify(records) },
            e as unknown as Vars,
          );
          statuses.push(response.status);
          if (response.status === 200) return { statuses, body: (await response.json()) as { inserted: number; updated: number } };
          expect(response.status).toBe(503);
          expect(await response.text()).toMatch(/adopting the records already in KV; nothing of this batch was written/);
          await sleep(Number(response.headers.get("retry-after")) * 1000);
        }
      }),
    );
    expect(outcomes.map((o) => o.body)).toEqual(writes.map(() => expect.objectContaining({ inserted: 1, updated: 1 })));
    const { store } = services(e);
    expect((await store.reader.find(`${origin}/old/2999`))?.key).toBe(3_000);
    expect(await store.reader.find(`${origin}/old/14`)).toMatchObject({ key: 15, lastmod: "2026-11-02" });
    const newKeys = await Promise.all(writes.map((_, w) => store.reader.find(`${origin}/new/${w}`).then((r) => r?.key)));
    expect(newKeys.sort((a, b) => a! - b!)).toEqual([3_001, 3_002, 3_003, 3_004, 3_005]);
  });
});
