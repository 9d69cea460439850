/**
 * Issue 53 ("blocks"), "How it will be checked", black-box against `npm start` (the demo it seeds:
 * 126,000 URLs, products-1 the fullest shard at 50,000):
 * 1. the demo's first jobs settle: npm start queues none by itself, so the cron it prints ("run the
 *    cron": the heartbeat queues each site's jobs) is run once, and status is read until every
 *    listed shard has a snapshot, the regeneration converged and every job of the site is idle;
 * 2. one URL in the middle of the fullest shard gets a new lastmod through `PUT /sitemap-admin/urls`
 *    (the site owner's token from .dev.vars); the regeneration runs it triggers read ≤ 2,500 rows
 *    in all. The figure: the sum of `rowsRead` (src/regen/summary.ts: record rows of the change feed
 *    plus the shard scans) over the runs `GET /sitemap-admin/status` lists under `runs` with an id
 *    above the last one before the change; the same runs' `sitemap.regeneration` log lines, which
 *    npm start prints from wrangler dev, must say the same;
 * 3. that shard's `.xml.gz` passes the real `gzip -t`, carries the change (and no other), validates
 *    against the project's XSDs (test/fixtures/xsd, libxml2);
 * 4. it is at most 1 % larger than `gzip -6 -c` of the same document.
 * REGEN_SETTLE_SECONDS=0 (as crawler.e2e does): the write's run starts at once, not a minute later.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locsOf } from "../shared/locs.ts";
import { Validator } from "./support/crawler.ts";
import { get, header, send, traffic } from "./support/http.ts";
import { type NpmStart, startNpm } from "./support/npm-start.ts";
import { summary } from "./support/summary.ts";

/** The bounds. */
const MAX_ROWS_READ = 2_500;
const MAX_OVER_GZIP6 = 0.01;

interface Run {
  id: number;
  ok: boolean;
  trigger: string;
  mode: string;
  rowsRead: number;
  durationMs: number;
  converged: boolean;
  published: boolean;
  changed: string[];
}
interface Status {
  manifest: { version: string; withoutSnapshot: string[]; shardFill: { document: string; section: string; urls: number }[] } | null;
  regeneration: { running: boolean; pendingShards: number; passPending: unknown; failed: unknown[] };
  runs: Run[];
  jobs: { kind: string; state: string; lastRun: string | null; error: string | null }[];
}

let demo: NpmStart;
const validator = new Validator();

beforeAll(async () => {
  demo = await startNpm(["--var", "REGEN_SETTLE_SECONDS:0"], { portFrom: 18700, prefix: "edge-sitemaps-blocks-" });
}, 300_000);
afterAll(async () => {
  await demo?.stop();
  summary.add({ requests: traffic.requests, documentsValidated: validator.validated });
}, 30_000);

async function admin<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await send(demo.port, {
    method,
    path: `/sitemap-admin${path}`,
    headers: { authorization: `Bearer ${demo.adminToken()}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: JSON.parse(res.body.toString() || "null") as T };
}

async function status(): Promise<Status> {
  const res = await admin<Status>("GET", "/status");
  expect(res.status).toBe(200);
  return res.json;
}

/** Status once the site is quiet: every listed shard snapshotted, nothing pending or running, every job idle; `done` says what else to wait for. */
async function settled(done: (s: Status) => boolean, timeoutMs: number): Promise<Status> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await status();
    const quiet =
      s.manifest !== null &&
      s.manifest.withoutSnapshot.length === 0 &&
      !s.regeneration.running &&
      s.regeneration.pendingShards === 0 &&
      !s.regeneration.passPending &&
      s.jobs.every((j) => j.state === "idle") &&
      s.runs[0]?.converged === true;
    if (quiet && done(s)) return s;
    if (Date.now() > until)
      throw new Error(`not settled within ${timeoutMs / 1000} s: ${JSON.stringify({ ...s, runs: s.runs.slice(0, 3) }).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** A document's `<url>` elements, in order, and what surrounds them. */
function urlElements(xml: string): { head: string; urls: string[]; tail: string } {
  const first = xml.indexOf("<url>");
  const last = xml.lastIndexOf("</url>") + "</url>".length;
  return { head: xml.slice(0, first), urls: xml.slice(first, last).match(/<url>[\s\S]*?<\/url>/g) ?? [], tail: xml.slice(last) };
}

const lastmodOf = (element: string): string | undefined => /<lastmod>([^<]*)<\/lastmod>/.exec(element)?.[1];

/** What step 2 did, for steps 3 and 4. */
let change: { document: string; loc: string; lastmod: string; before: string; runs: Run[] } | undefined;

describe("issue 53: a change costs its block, not its shard (against npm start's demo)", () => {
  let fullest: string;

  it("1. the demo's first jobs settle (the cron npm start prints, once): every shard snapshotted, converged, every job idle", async () => {
    const cron = await get(demo.port, "/__scheduled?cron=17+*+*+*+*");
    expect(cron.status).toBe(200);
    const s = await settled((st) => st.runs.some((r) => r.ok && r.published), 170_000);
    expect(s.runs.every((r) => r.ok)).toBe(true);
    expect(s.regeneration.failed).toEqual([]);
    const shards = [...s.manifest!.shardFill].sort((a, b) => b.urls - a.urls);
    fullest = shards[0]!.document;
    expect(shards[0]!.urls).toBe(50_000);
    console.log(`settled: ${s.runs.length} run(s), ${s.runs.reduce((n, r) => n + r.rowsRead, 0)} rows read; fullest shard ${fullest}`);
  });

  it(`2. one URL in the middle of the fullest shard gets a new lastmod: the runs it triggers read ≤ ${MAX_ROWS_READ.toLocaleString("en")} rows in all`, async () => {
    expect(fullest, "step 1 found the fullest shard").toBeDefined();
    const path = `/sitemap-${fullest}.xml.gz`;
    const before = await get(demo.port, path);
    expect(before.status).toBe(200);
    const beforeXml = gunzipSync(before.body).toString();
    const locs = locsOf(beforeXml);
    expect(locs.length).toBe(50_000);
    const loc = locs[locs.length / 2]!;

    // The record as stored, sent back with a new lastmod only: a normal authenticated write.
    const stored = await admin<Record<string, unknown>>("GET", `/urls?loc=${encodeURIComponent(loc)}`);
    expect(stored.status, JSON.stringify(stored.json)).toBe(200);
    const { section, changefreq, priority, ext } = stored.json;
    const lastmod = `${new Date(Date.now() - 60_000).toISOString().slice(0, 19)}Z`;
    const record = { loc, section, lastmod, ...(changefreq ? { changefreq } : {}), ...(priority !== null ? { priority } : {}), ...(ext ?? {}) };
    const lastRunId = Math.max(0, ...(await status()).runs.map((r) => r.id));
    const logOffset = demo.output().length;
    const put = await admin<{ updated: number }>("PUT", "/urls", [record]);
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    expect(put.json.updated).toBe(1);

    const s = await settled((st) => st.runs.some((r) => r.id > lastRunId && r.published), 170_000);
    const runs = s.runs.filter((r) => r.id > lastRunId);
    change = { document: fullest, loc, lastmod, before: beforeXml, runs };
    // Status lists the last 20 runs: all of them are newer than the change only if it listed them all.
    expect(s.runs.length > runs.length || s.runs.length < 20, "every run since the change is listed").toBe(true);
    const logged = demo
      .output()
      .slice(logOffset)
      .split("\n")
      .filter((line) => line.includes('"event":"sitemap.regeneration"'))
      .map((line) => JSON.parse(line.slice(line.indexOf("{"))) as Run);
    const rowsRead = runs.reduce((n, r) => n + r.rowsRead, 0);
    const figures = runs
      .map((r) => `run ${r.id} (${r.trigger}, ${r.mode}): ${r.rowsRead} rows, ${r.durationMs} ms, changed ${r.changed.join(" ")}`)
      .join("; ");
    console.log(`change of ${loc} in ${fullest}: ${runs.length} run(s), ${rowsRead} rows read in all (status runs.rowsRead): ${figures}`);
    expect(runs.every((r) => r.ok)).toBe(true);
    expect(
      logged.map((r) => r.rowsRead).reduce((n, x) => n + x, 0),
      "the runs' log lines say the same",
    ).toBe(rowsRead);
    expect(rowsRead, figures).toBeLessThanOrEqual(MAX_ROWS_READ);
  });

  it("3. that shard's .xml.gz passes gzip -t, carries the change (and no other), and validates against the XSDs", async () => {
    expect(change, "step 2 made the change").toBeDefined();
    const { document, loc, lastmod, before } = change!;
    const res = await get(demo.port, `/sitemap-${document}.xml.gz`);
    expect(res.status).toBe(200);
    expect(header(res, "x-sitemap-source"), "the stored file, not a live render").not.toBe("live");
    const dir = mkdtempSync(join(tmpdir(), "edge-sitemaps-blocks-gz-"));
    try {
      writeFileSync(join(dir, `${document}.xml.gz`), res.body);
      const test = spawnSync("gzip", ["-t", `${document}.xml.gz`], { cwd: dir, encoding: "utf8" });
      expect(test.status, `gzip -t: ${test.stderr}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const xml = gunzipSync(res.body);
    const after = urlElements(xml.toString());
    const old = urlElements(before);
    expect(after.urls.length).toBe(old.urls.length);
    const differing = after.urls.flatMap((element, i) => (element === old.urls[i] ? [] : [i]));
    expect(differing.map((i) => locsOf(after.urls[i]!)[0])).toEqual([loc]);
    expect(Date.parse(lastmodOf(after.urls[differing[0]!]!) ?? "")).toBe(Date.parse(lastmod));
    expect(after.head).toBe(old.head);
    expect(after.tail).toBe(old.tail);
    expect(await validator.check(xml, "urlset")).toEqual([]);
  });

  it(`4. that .xml.gz is at most ${MAX_OVER_GZIP6 * 100} % larger than gzip -6 of the same document`, async () => {
    expect(change, "step 2 made the change").toBeDefined();
    const res = await get(demo.port, `/sitemap-${change!.document}.xml.gz`);
    expect(res.status).toBe(200);
    const xml = gunzipSync(res.body);
    const gzip6 = spawnSync("gzip", ["-6", "-c"], { input: xml, maxBuffer: 64 * 1024 * 1024 });
    expect(gzip6.status, gzip6.stderr?.toString()).toBe(0);
    const ratio = res.body.length / gzip6.stdout.length;
    console.log(
      `${change!.document}.xml.gz: ${res.body.length} bytes; gzip -6 -c of its ${xml.length} bytes: ${gzip6.stdout.length} bytes; ratio ${ratio.toFixed(4)}`,
    );
    expect(ratio).toBeLessThanOrEqual(1 + MAX_OVER_GZIP6);
  });
});
