/**
 * From an acknowledged write to its shard's new snapshot being served (issue 53, Deliver 3): one
 * record in the middle of the measured shard is changed through the admin API (`PUT
 * /sitemap-admin/urls`, its `200` is the acknowledgement), one regeneration run follows as the
 * harness runs them (`/__bench/regen`: the `regenerate` job's step; the harness has no queue
 * consumer), and the shard is polled until its ETag changes, first with the edge cache off (the
 * snapshot read from KV), then through the Cache API (whose keys carry the version).
 *
 * In production the queue adds REGEN_SETTLE_SECONDS between the write and the run (src/jobs/writes.ts
 * asks for it with that delay): said beside the figure, not slept here.
 */
import { fileURLToPath } from "node:url";
import { unstable_readConfig } from "wrangler";
import { demoSection } from "../src/demo/demo-data.ts";
import type { Harness } from "./harness.ts";
import { int, ms, now } from "./lib.ts";

export const ADMIN_TOKEN = "bench-admin-token-0123456789abcdef0123456789";

interface RegenAnswer {
  rowsRead: number;
  rowsWritten: number;
  queries: number;
  bySql: Record<string, { rowsRead: number; rowsWritten: number; queries: number }>;
  kvOps: Record<string, number>;
  summary: { shardsRendered: number; shardsSpliced: number; blocksRendered: number; rowsRead: number; published: boolean };
}

const header = (v: string | string[] | undefined): string | null => (typeof v === "string" ? v : null);

/** Polls `path` until its ETag is not `before` (and its source is `source`, when given): ms from the call, or null after `limitMs`. */
async function untilNewEtag(
  h: Harness,
  path: string,
  before: string,
  source: string | null,
  limitMs: number,
): Promise<{ ms: number; etag: string } | null> {
  const t = now();
  while (now() - t < limitMs) {
    const r = await h.get(path, { "accept-encoding": "gzip" });
    const etag = header(r.headers["etag"]);
    const from = header(r.headers["x-sitemap-source"]);
    if (r.status === 200 && etag && etag !== before && (source === null || from === source)) return { ms: now() - t, etag };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}

/**
 * `record`: the demo index (of `section`) written; `shard`: its shard's path; `uncachedPath`: the
 * same with the edge cache off. Returns the row's text.
 */
export async function writeToServed(h: Harness, at: { section: string; record: number; shard: string; uncachedPath: string }): Promise<string> {
  const vars = unstable_readConfig({ config: fileURLToPath(new URL("../wrangler.jsonc", import.meta.url)) }).vars as Record<string, unknown>;
  const settleSeconds = String(vars["REGEN_SETTLE_SECONDS"] ?? "?");
  const gz = { "accept-encoding": "gzip" };
  const before = header((await h.get(at.uncachedPath, gz)).headers["etag"]);
  const beforeCached = header((await h.get(at.shard, gz)).headers["etag"]);
  if (!before || !beforeCached) throw new Error(`${at.shard}: no ETag before the write`);
  // A lastmod no other record of the run has (an hour back, to the second), so the served body can be checked for it.
  const lastmod = `${new Date(Date.now() - 3_600_000).toISOString().slice(0, 19)}Z`;
  const { section: _s, ...fields } = demoSection(h.origin, at.section, 1, at.record)[0]!;
  const body = `${JSON.stringify({ ...fields, section: at.section, lastmod })}\n`;

  const t0 = now();
  const put = await fetch(new URL("/sitemap-admin/urls", h.url), {
    method: "PUT",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/x-ndjson" },
    body,
  });
  const answer = await put.text();
  if (put.status !== 200) throw new Error(`PUT /sitemap-admin/urls → ${put.status}: ${answer.slice(0, 300)}`);
  const acked = now();
  const ack = acked - t0;

  const t1 = now();
  const cpu0 = h.workerdCpu();
  const run = await h.bench<RegenAnswer>("regen", { origin: h.origin, full: 0 });
  const runMs = now() - t1;
  const cpu = h.workerdCpu() - cpu0;
  const snapshot = await untilNewEtag(h, at.uncachedPath, before, "snapshot", 10_000);
  if (!snapshot) throw new Error(`${at.uncachedPath}: the ETag did not change within 10 s of the run`);
  const served = now() - acked; // from the 200: the run, then the polls until the new ETag came back
  const cached = await untilNewEtag(h, at.shard, beforeCached, null, 30_000);

  // The new snapshot decodes (undici's gunzip checks the CRC and length) and carries the change.
  const text = await (await fetch(new URL(at.uncachedPath, h.url), { headers: gz })).text();
  // The renderer writes IRIs as URIs (non-ASCII percent-encoded), as the URL parser serializes them.
  const loc = `<loc>${new URL(fields.loc).href.replaceAll("&", "&amp;")}</loc>`;
  const from = text.indexOf(loc);
  const element = from < 0 ? "" : text.slice(from, text.indexOf("</url>", from));
  const carries = element.includes(lastmod) || element.includes(lastmod.replace("Z", "+00:00"));

  const kv = Object.values(run.kvOps).reduce((n, v) => n + v, 0);
  // What the run wrote to D1, by statement (the cost model prices D1 rows written).
  const writes = Object.entries(run.bySql)
    .filter(([, v]) => v.rowsWritten > 0)
    .sort((a, b) => b[1].rowsWritten - a[1].rowsWritten)
    .map(([sql, v]) => `${v.rowsWritten} by ${v.queries} × \`${sql.slice(0, 60)}…\``)
    .join("; ");
  const s = run.summary;
  return (
    `from the admin API's 200 (the PUT took ${ms(ack)}) to the new ETag served (snapshot, edge cache off): ${ms(served)}, of which the run ${ms(runMs)} (${int(run.rowsRead)} rows read, ${run.queries} D1 queries, ${kv} KV operations ` +
    `(${Object.entries(run.kvOps)
      .map(([op, n]) => `${op} ${n}`)
      .join(", ")}), Worker CPU ${ms(cpu)}; ` +
    `${s.shardsSpliced} shard spliced, ${s.blocksRendered} block rendered); through the Cache API ${cached ? `${ms(cached.ms)} later` : "not within 30 s"}; ` +
    `in production the queue adds REGEN_SETTLE_SECONDS (${settleSeconds} s in wrangler.jsonc) before the run; ` +
    `D1 rows written by the run ${int(run.rowsWritten)} (${writes}); the served gzip carries the change: ${carries ? "yes" : `NO (${from < 0 ? `${loc} not found` : element.slice(0, 300)}; wrote ${body.trim()})`}`
  );
}
