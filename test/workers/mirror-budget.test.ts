/**
 * Large remotes finish (issue 34): a pass's requests come out of a per-run budget shared
 * round-robin by all mirrors, its verification before the commit goes on over runs from a saved
 * cursor, and a document that fails is asked again in a later run without resetting the pass.
 * Requests are counted at the fake remote, per run. The mirror entry (mirrorAll) is called as the
 * cron calls it, with the remote faked at its fetch.
 */
import { describe, expect, it } from "vitest";
import { MemoryMirrorState, MemorySync } from "./support/memory-mirror-ports.ts";
import { index, mirrorSite, url, urlset, xml } from "./support/mirror-remote.ts";

/** An index at `path` of `n` sitemaps with one URL each (a CMS paginating by one), with ETags. */
function oneUrlChildren(m: ReturnType<typeof mirrorSite>, path: string, n: number): string[] {
  const children = Array.from({ length: n }, (_, i) => `${m.origin}${path}/part-${i}.xml`);
  m.answers.set(`${m.origin}${path}/index.xml`, xml(index(children), '"index-1"'));
  const locs: string[] = [];
  children.forEach((child, i) => {
    const loc = `${m.origin}${path}/page-${String(i).padStart(5, "0")}`;
    locs.push(loc);
    m.answers.set(child, xml(urlset([url(loc)]), `"part-${i}"`));
  });
  return locs;
}

/** Runs until every mirror is idle (or failing), at most `max` runs; the number of runs. */
async function runUntilIdle(m: ReturnType<typeof mirrorSite>, max: number, options: Parameters<ReturnType<typeof mirrorSite>["run"]>[0] = {}) {
  for (let runs = 1; runs <= max; runs++) {
    await m.run(options.budget ? { ...options, budget: { ...options.budget } } : options);
    if ((await m.status()).every((s) => s.state !== "in-progress")) return runs;
  }
  return Number.POSITIVE_INFINITY;
}

describe("a remote index of many sitemaps", () => {
  it("1,000 one-URL sitemaps at 100 records a run: committed, 1,000 served, at most 300 requests in any run", async () => {
    const m = mirrorSite(["/big/index.xml"], { MIRROR_MAX_RECORDS_PER_RUN: "100" });
    const locs = oneUrlChildren(m, "/big", 1000);
    const runs = await runUntilIdle(m, 30);
    const [status] = await m.status();
    expect(status).toMatchObject({ state: "idle", lastError: null, counts: { records: 1000, inserted: 1000, deleted: 0, restarts: 0 } });
    // Reading: 100 sitemaps a run (10 runs); checking the 1,000 again before the commit: ≤ 200 a run (MIRROR_MAX_REQUESTS_PER_RUN).
    expect(runs).toBeLessThanOrEqual(17);
    expect(Math.max(...m.perRun)).toBeLessThanOrEqual(300);
    expect(Math.max(...m.perRun)).toBeLessThanOrEqual(m.s.config.mirror.maxRequestsPerRun);
    expect(await m.served()).toEqual(locs);
  });

  it("10,000 one-URL sitemaps with a budget of 300 requests a run commit within a bounded number of runs", async () => {
    // The mirror's state and sync in memory: 20,000 documents through real D1 would take minutes.
    const sync = new MemorySync();
    const m = mirrorSite(["/huge/index.xml"], {}, { mirrors: new MemoryMirrorState(), sync });
    const locs = oneUrlChildren(m, "/huge", 10_000);
    const runs = await runUntilIdle(m, 80, { budget: { requests: 300, records: 300 } });
    expect((await m.status())[0]).toMatchObject({ state: "idle", lastError: null, counts: { records: 10_000, inserted: 10_000, deleted: 0 } });
    // 10,000 reads and 10,000 checks at 300 requests a run: 67 runs, and a few for the edges.
    expect(runs).toBeLessThanOrEqual(2 * Math.ceil(10_000 / 300) + 4);
    expect(Math.max(...m.perRun)).toBeLessThanOrEqual(300);
    expect(m.perRun.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2 * 10_000 + 2 * runs);
    expect([...sync.live.keys()].sort()).toEqual(locs);
  }, 120_000);
});

describe("a failing document", () => {
  it("is asked again in a later run and never resets the pass: reading or checking, the same pass commits", async () => {
    const m = mirrorSite(["/cms/index.xml"]);
    const locs = oneUrlChildren(m, "/cms", 6);
    const [mirror] = m.urls as [string];
    const budget = { requests: 100, records: 2 };
    await m.run({ budget: { ...budget } }); // the index and two sitemaps
    const pass = (await m.s.mirrors!.load(mirror))!.syncId;
    expect(pass).not.toBeNull();

    const third = `${m.origin}/cms/part-2.xml`;
    const good = m.answers.get(third)!;
    m.answers.set(third, () => new Response("busy", { status: 503 }));
    await m.run({ budget: { ...budget } });
    let [status] = await m.status();
    expect(status).toMatchObject({ state: "failing", lastError: `${third} answered 503`, position: { document: 3, recordsDone: 0, verifying: false } });
    expect(m.asked()).toEqual([third]);
    expect((await m.s.mirrors!.load(mirror))!.syncId).toBe(pass);

    m.answers.set(third, good);
    await m.run({ budget: { ...budget } }); // part-2 and part-3
    [status] = await m.status();
    expect(status).toMatchObject({ state: "in-progress", lastError: null, position: { document: 5, verifying: false } });
    await m.run({ budget: { ...budget } }); // part-4 and part-5: every document read; checking starts next run

    // A check before the commit fails: the check is asked again later; nothing read is read again.
    const first = `${m.origin}/cms/part-0.xml`;
    const firstGood = m.answers.get(first)!;
    m.answers.set(first, () => new Response("busy", { status: 500 }));
    await m.run({ budget: { ...budget } });
    [status] = await m.status();
    expect(status).toMatchObject({ state: "failing", lastError: `${first} answered 500`, position: { document: 1, verifying: true } });
    m.answers.set(first, firstGood);
    await m.run({ budget: { ...budget } });
    [status] = await m.status();
    expect(status).toMatchObject({ state: "idle", lastError: null, counts: { records: 6, inserted: 6, restarts: 0, deleted: 0 } });
    expect((await m.s.mirrors!.load(mirror))!.syncId).toBeNull();
    const syncs = await m.env.DB.prepare("SELECT COUNT(*) AS n FROM syncs WHERE scope LIKE ?1").bind(`%${mirror}%`).first<{ n: number }>();
    expect(syncs?.n).toBe(1);
    expect(await m.live()).toEqual(locs);
  });
});

describe("the run's budget is shared", () => {
  it("two mirrors, the first big: the second gets its share of every run and finishes first", async () => {
    const m = mirrorSite(["/big.xml", "/small/index.xml"], { MIRROR_MAX_RECORDS_PER_RUN: "100" });
    const bigLocs = Array.from({ length: 1000 }, (_, i) => `${m.origin}/b/${i}`);
    m.answers.set(m.urls[0]!, xml(urlset(bigLocs.map((loc) => url(loc))), '"big-1"'));
    const smallLocs = oneUrlChildren(m, "/small", 60);

    await m.run();
    let [big, small] = await m.status();
    // Half the run's records each, though the big one comes first and could use them all.
    expect(big).toMatchObject({ state: "in-progress", counts: { records: 50 } });
    expect(small).toMatchObject({ state: "in-progress", counts: { records: 50 } });
    await m.run();
    [big, small] = await m.status();
    // The small one reads its last 10 sitemaps, checks the 50 read before, and commits; the big one gets the rest.
    expect(small).toMatchObject({ state: "idle", lastError: null, counts: { records: 60, inserted: 60, deleted: 0 } });
    expect(big).toMatchObject({ state: "in-progress", counts: { records: 140 } });
    expect(Math.max(...m.perRun)).toBeLessThanOrEqual(m.s.config.mirror.maxRequestsPerRun);

    expect(await runUntilIdle(m, 12)).toBeLessThanOrEqual(9);
    expect((await m.status()).map((s) => s.state)).toEqual(["idle", "idle"]);
    expect(await m.live()).toEqual([...bigLocs, ...smallLocs].sort());
  });
});
