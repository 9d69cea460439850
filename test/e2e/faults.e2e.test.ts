/**
 * A bad day, with the real Worker under `wrangler dev` (126,000 URLs): a D1 error in the middle of
 * a shard, the Worker killed (SIGKILL) in the middle of a regeneration, and a search engine that
 * answers 500, then 429, before it takes the changes. Nothing may be lost, nothing truncated may be
 * served or cached, and everything must recover.
 */
import { constants, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, adminStatus, deleteUrls, putUrls } from "./support/admin.ts";
import { Validator, crawl } from "./support/crawler.ts";
import { DbMirror, type LiveRecord, sqlQuote } from "./support/db.ts";
import { type DevServer, startDevServer } from "./support/dev-server.ts";
import { SearchEngine } from "./support/engine.ts";
import { type WireResponse, documentBytes, get, header, traffic } from "./support/http.ts";
import { Poller } from "./support/poller.ts";
import { summary } from "./support/summary.ts";

const INDEXNOW_KEY = "e2e-indexnow-key-5d1c";
const FAULT_AFTER_RECORDS = 6_000; // the third page of D1 rows (2,500 per page)

let server: DevServer;
let db: DbMirror;
let poller: Poller | undefined;
const engine = new SearchEngine();
const validator = new Validator();
const check = (ok: boolean, message: string): void => expect(ok, message).toBe(true);
const totals = { documentsValidated: 0, urlsCompared: 0, faultsInjected: 0, recordsLost: 0 };
/** Every URL whose record changed after IndexNow's first run: what the engine must get, once. */
const changed = new Set<string>();

/** The Worker without the fault, with notifications pointed at the local engine. */
const healthyVars = (): Record<string, string> => ({
  ADMIN_TOKEN,
  REGEN_SETTLE_SECONDS: "0",
  NOTIFY_SETTLE_SECONDS: "0",
  INDEXNOW_KEY,
  INDEXNOW_ENDPOINT: engine.indexNowEndpoint,
  PING_URLS: engine.pingTemplate,
});

beforeAll(async () => {
  await engine.start();
  // Fresh storage, no cron run yet: every shard is rendered live from D1 on request.
  server = await startDevServer({ vars: { FAULT_INJECTION: "on", FAULT_AFTER_RECORDS: String(FAULT_AFTER_RECORDS) } });
  db = new DbMirror(server);
});
afterAll(async () => {
  await poller?.stop();
  await server?.stop();
  await engine.stop();
  summary.add({ requests: traffic.requests, ...totals });
});

const SHARDS = ["pages-1", "products-1", "products-2", "blog-1"];
/** Every representation of every shard: gzip-encoded `.xml`, identity `.xml`, the `.xml.gz` file, the text form. */
const TARGETS = SHARDS.flatMap((name): { path: string; headers: Record<string, string> }[] => [
  { path: `/sitemap-${name}.xml`, headers: { "Accept-Encoding": "gzip" } },
  { path: `/sitemap-${name}.xml`, headers: { "Accept-Encoding": "identity" } },
  { path: `/sitemap-${name}.xml.gz`, headers: {} },
  { path: `/sitemap-${name}.txt`, headers: { "Accept-Encoding": "gzip" } },
]);
const label = (t: (typeof TARGETS)[number]): string => `${t.path} (${t.headers["Accept-Encoding"] ?? "file"})`;

/** What arrived of a broken body, decoded as far as it goes. */
function partialDocument(res: WireResponse): Buffer {
  const gzipped = header(res, "content-encoding") === "gzip" || header(res, "content-type") === "application/gzip";
  if (!gzipped) return res.body;
  try {
    return gunzipSync(res.body, { finishFlush: constants.Z_SYNC_FLUSH });
  } catch {
    return Buffer.alloc(0);
  }
}

describe("a D1 error on the request path", () => {
  it("gives the client an error, never a short sitemap that looks complete, and caches nothing", async () => {
    const index = await get(server.port, "/sitemap.xml", { "Accept-Encoding": "gzip" });
    expect(index.status === 200 && index.complete, "the index reads no record: it is served").toBe(true);
    for (const target of TARGETS) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await get(server.port, target.path, target.headers);
        totals.faultsInjected++;
        expect(res.status >= 500 || (res.status === 200 && !res.complete), `${label(target)}: ${res.status}, complete ${res.complete}`).toBe(true);
        expect(header(res, "x-sitemap-source"), `${label(target)} came from a cache`).not.toBe("cache");
        if (res.status === 200 && !target.path.endsWith(".txt")) {
          const partial = partialDocument(res);
          expect(partial.toString().includes("</urlset>"), `${label(target)}: the partial body ends like a document`).toBe(false);
          const verdict = await validator.check(partial, "urlset");
          expect(verdict.length, `${label(target)}: the partial body validates`).toBeGreaterThan(0);
        }
        if (res.status >= 500) expect(res.body.toString()).not.toMatch(/<urlset|at .*\.ts:/);
      }
    }

    // The fault goes away (same storage, caches included): every document is whole, rendered afresh
    // (nothing was cached from the broken transfers), and the copy cached then is the whole document.
    await server.restart({ vars: healthyVars() });
    for (const target of TARGETS) {
      const fresh = await get(server.port, target.path, target.headers);
      expect(fresh.status === 200 && fresh.complete, `${label(target)}: ${fresh.status}`).toBe(true);
      expect(header(fresh, "x-sitemap-source"), `${label(target)}: a broken transfer was cached`).toBe("live");
      const again = await get(server.port, target.path, target.headers);
      expect(header(again, "x-sitemap-source"), label(target)).toBe("cache");
      const body = documentBytes(fresh);
      expect(documentBytes(again).equals(body), `${label(target)}: the cached copy differs`).toBe(true);
      if (target.path.endsWith(".txt")) {
        expect(body.toString().split("\n").filter(Boolean).length).toBeGreaterThan(FAULT_AFTER_RECORDS);
      } else {
        const errors = await validator.check(body, "urlset");
        expect(errors, label(target)).toEqual([]);
        totals.documentsValidated++;
      }
    }
  });
});

/** Picks `perSection` records spread over each section's key range (so over every shard), without extensions. */
function spread(records: readonly LiveRecord[], perSection: number, offset: number): LiveRecord[] {
  const out: LiveRecord[] = [];
  for (const section of new Set(records.map((r) => r.section))) {
    const plain = records.filter((r) => r.section === section && r.ext_kinds === 0);
    const step = Math.floor(plain.length / perSection);
    for (let i = 0; i < perSection; i++) out.push(plain[i * step + offset]!);
  }
  return out;
}

describe("a kill in the middle of a regeneration", () => {
  it("loses no URL, never serves a half-updated index, and the next run completes", async () => {
    engine.answer = { indexnow: 500, ping: 500 }; // a bad day for the engines as well: see below
    // A first complete run: every shard gets its snapshot; IndexNow notes where it starts.
    expect((await server.scheduled()).status).toBe(200);
    let status = await adminStatus(server.port);
    expect(status.json.runs[0]).toMatchObject({ ok: true, published: true, converged: true });
    expect(status.json.manifest!.withoutSnapshot).toEqual([]);
    const versionBefore = status.json.manifest!.version;

    const records = await db.records();
    const expected = new Set(records.map((r) => r.loc));
    // Change records in every shard, so the next run has to re-render all of them (~126,000 rows).
    let round = 0;
    const updated = new Map<string, string>();
    const change = async (): Promise<void> => {
      const lastmod = `2026-11-2${round}T12:00:0${round}Z`;
      const batch = spread(records, 40, round).map((r) => ({ loc: r.loc, section: r.section, lastmod, changefreq: "hourly" }));
      expect((await putUrls(server.port, batch)).json).toMatchObject({ received: batch.length, updated: batch.length });
      for (const r of batch) {
        updated.set(r.loc, lastmod);
        changed.add(r.loc);
      }
      round++;
    };
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    /** Whether the site's regeneration lease is held (read from the store, through status). */
    const running = async (): Promise<boolean> => (await adminStatus(server.port)).json.regeneration.running;

    poller = new Poller(server.port);
    poller.start();
    // Kill the Worker (SIGKILL) while a regeneration works: the one the write queued, which the local
    // queue's consumer starts as soon as the write is answered (REGEN_SETTLE_SECONDS 0) and which runs
    // for 1–2 s here. If the kill landed before it began or after it ended, change again and kill
    // at another moment. "Interrupted" is read from the store: the dead run still holds its lease.
    let interrupted = false;
    const kills: number[] = [];
    for (const delay of [700, 400, 1_000, 200]) {
      await change();
      await sleep(delay);
      kills.push(delay);
      await server.restart({ hard: true });
      totals.faultsInjected++;
      if (await running()) {
        interrupted = true;
        break;
      }
    }
    expect(interrupted, "no kill landed while a regeneration was running").toBe(true);

    // The killed run's message died with the local queue (Cloudflare's would deliver it again, and
    // its retry would take the step over at once: docs/jobs.md "Failures, killed steps"). Locally
    // its chain is lost: the next heartbeat leaves the live chain alone (one chain per job)…
    const regenChain = async (): Promise<string | null> =>
      (await server.query<{ chain: string | null }>(`SELECT chain FROM jobs WHERE kind = 'regenerate' AND origin = ${sqlQuote(server.origin)}`))[0]
        ?.chain ?? null;
    const lostChain = await regenChain();
    expect(lostChain).not.toBeNull();
    expect((await server.scheduled(undefined, { waitForJobs: false })).status).toBe(200);
    expect(await regenChain()).toBe(lostChain);
    expect(await running()).toBe(true);
    // …until its message is CHAIN_LOST_MS overdue and the dead run's leases (20 min) have expired:
    // let that time pass in D1. The next heartbeat then starts a new chain, which completes the
    // work the killed run left.
    await server.query(
      `UPDATE jobs SET lease_until = 0, due_at = due_at - 3600000 WHERE origin = ${sqlQuote(server.origin)} AND chain IS NOT NULL; UPDATE regen_state SET lease_until = 0 WHERE origin = ${sqlQuote(server.origin)}; UPDATE notify_leases SET lease_until = 0 WHERE origin = ${sqlQuote(server.origin)}`,
    );
    expect((await server.scheduled()).status).toBe(200);
    expect(await regenChain()).not.toBe(lostChain);
    await server.jobsDone();
    status = await adminStatus(server.port);
    expect(status.json.regeneration.running).toBe(false);
    // Published by this run, or already by the killed one if the kill came after its switch (then
    // this run finds every version stored and publishes nothing new).
    expect(status.json.runs[0]).toMatchObject({ ok: true, converged: true });
    expect(status.json.manifest!.version).not.toBe(versionBefore);
    expect(status.json.manifest!.withoutSnapshot).toEqual([]);
    await poller.more(2); // a crawler reading after the publish
    await poller.stop();

    // Everything the poller was served, before, during and after the kill.
    const report = await poller.verify(expected, check, validator);
    console.log(
      `kill mid-regeneration: killed after ${kills.join(", ")} ms; ${report.rounds} poll rounds (${report.consistentRounds} with a steady index), ${report.indexVersions} index versions, ${report.unavailable} requests met the Worker down`,
    );
    expect(report.consistentRounds).toBeGreaterThan(0);
    expect(report.indexVersions).toBeGreaterThanOrEqual(2);
    totals.documentsValidated += report.documentsChecked;
    totals.urlsCompared += report.consistentRounds * expected.size;

    // And now, a crawler finds every URL, with the changes.
    const [result, now] = await Promise.all([crawl(server.port, server.origin, check, validator), db.records()]);
    const served = new Set(result.shardUrls);
    expect(result.shardUrls.length).toBe(served.size);
    const lost = now.filter((r) => !served.has(r.loc));
    totals.recordsLost += lost.length;
    expect(lost.map((r) => r.loc)).toEqual([]);
    expect(served.size).toBe(now.length);
    const lastmods = new Map(result.documents.filter((d) => d.kind === "shard").flatMap((d) => [...d.lastmods]));
    for (const [loc, lastmod] of updated) expect(lastmods.get(loc), loc).toBe(lastmod);
    totals.documentsValidated += result.documentsValidated;
    totals.urlsCompared += now.length;
  });
});

describe("a search engine that answers 500, then 429, then 200", () => {
  it("gets every changed URL exactly once, and the index announced once", async () => {
    // So far every submission got 500 (IndexNow noted its start in the first run above).
    const failed500 = engine.of("indexnow");
    expect(failed500.length).toBeGreaterThanOrEqual(1);
    expect(failed500.every((r) => r.status === 500)).toBe(true);

    // More changes: new URLs and deletions.
    const records = await db.records();
    const fresh = Array.from({ length: 40 }, (_, i) => ({
      loc: `${server.origin}/blog/2026/e2e-${i}?ref=%22feed%22&x=${i}`,
      section: "blog",
      lastmod: "2026-11-22",
    }));
    expect((await putUrls(server.port, fresh)).json).toMatchObject({ inserted: 40 });
    const doomed = records
      .filter((r) => r.section === "pages" && !changed.has(r.loc))
      .slice(100, 115)
      .map((r) => r.loc);
    expect((await deleteUrls(server.port, doomed)).json).toMatchObject({ deleted: doomed.length });
    for (const loc of [...fresh.map((r) => r.loc), ...doomed]) changed.add(loc);

    // The backoff after a 500 is 5 minutes: a run now sends nothing…
    const attempts = engine.requests.length;
    expect((await server.scheduled()).status).toBe(200);
    expect(engine.requests.length, "the backoff was not honoured").toBe(attempts);
    // …so let the 5 minutes pass (in D1). Now the engine throttles.
    const fastForward = (): Promise<unknown> => server.query(`UPDATE notify_targets SET next_attempt_at = 0 WHERE origin = ${sqlQuote(server.origin)}`);
    engine.answer = { indexnow: 429, ping: 429 };
    await fastForward();
    expect((await server.scheduled()).status).toBe(200);
    const throttled = engine.of("indexnow").at(-1)!;
    expect(throttled.status).toBe(429);
    expect(new Set(throttled.payload!.urlList)).toEqual(changed);

    // The engine recovers.
    engine.answer = { indexnow: 200, ping: 200 };
    await fastForward();
    expect((await server.scheduled()).status).toBe(200);
    // Nothing new: nothing more is sent.
    expect((await server.scheduled()).status).toBe(200);

    const accepted = engine.of("indexnow").filter((r) => r.status === 200);
    const delivered = accepted.flatMap((r) => r.payload!.urlList);
    expect(delivered.length, "a URL was delivered twice").toBe(new Set(delivered).size);
    expect(new Set(delivered)).toEqual(changed);
    for (const r of accepted) {
      expect(r.payload).toMatchObject({
        host: new URL(server.origin).host,
        key: INDEXNOW_KEY,
        keyLocation: `${server.origin}/sitemap-indexnow-${INDEXNOW_KEY}.txt`,
      });
    }
    const keyFile = await get(server.port, `/sitemap-indexnow-${INDEXNOW_KEY}.txt`);
    expect([keyFile.status, keyFile.body.toString()]).toEqual([200, INDEXNOW_KEY]);

    const pings = engine.of("ping");
    expect(pings.filter((r) => r.status === 200).map((r) => r.sitemap)).toEqual([`${server.origin}/sitemap.xml`]);
    expect(pings.filter((r) => r.status !== 200).length).toBeGreaterThanOrEqual(2);

    const status = await adminStatus(server.port);
    for (const target of status.json.notifications) expect(target, target.target).toMatchObject({ pending: 0, failures: 0, httpStatus: 200 });
    totals.faultsInjected += engine.requests.filter((r) => r.status !== 200).length;
    totals.urlsCompared += delivered.length;
  });
});
