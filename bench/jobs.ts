/**
 * The jobs engine against a running `npm start` (not in `npm run bench`: it needs the server, see
 * BENCHMARKS.md "Issue 36"). Three measures, over HTTP only, sites told apart by `Host`:
 *
 *   1. one cron trigger (`/__scheduled`) → the time until every listed shard and the index of every
 *      site has its snapshot (per `/sitemap-admin/status`), the regeneration invocations it took and
 *      the largest one's D1 queries and KV operations (the run summaries' `usage`);
 *   2. one record written through the admin API, no cron → the time until a crawler is served it
 *      from a snapshot;
 *   3. 30 updates of one shard's records in a burst → how many regeneration jobs they caused, and the
 *      time until all 30 are served from a snapshot.
 *
 *   ADMIN_TOKEN=… node bench/jobs.ts --port 8796 --sites "http://localhost:8796 http://s2.test:8796 …"
 */
import { request } from "node:http";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface SiteStatus {
  site: string;
  manifest: {
    shards: number;
    snapshots: number;
    withoutSnapshot: string[];
    indexSnapshot: string | null;
    sections: Record<string, { shards: number }>;
  } | null;
  runs: { trigger: string; startedAt: string; usage?: { d1Queries: number; kvOperations: number } }[];
  jobs: { kind: string; state: string }[];
}

const arg = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};
const port = Number(arg("port", "8787"));
const sites = arg("sites", `http://localhost:${port}`)
  .split(/[\s,]+/)
  .filter(Boolean);
const token = process.env["ADMIN_TOKEN"] ?? "";
const limitMs = Number(arg("limit-seconds", "180")) * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function send(site: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, headers: { Host: new URL(site).host, "Accept-Encoding": "identity", ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk)).on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const admin = { Authorization: `Bearer ${token}` };
async function status(site: string): Promise<SiteStatus> {
  const res = await send(site, "GET", "/sitemap-admin/status", undefined, admin);
  if (res.status !== 200) throw new Error(`${site} status: HTTP ${res.status}`);
  return JSON.parse(res.body) as SiteStatus;
}
const complete = (s: SiteStatus): boolean => s.manifest !== null && s.manifest.withoutSnapshot.length === 0 && s.manifest.indexSnapshot !== null;

async function oneTrigger(): Promise<void> {
  const started = Date.now();
  const trigger = await send(sites[0]!, "GET", "/__scheduled?cron=17+*+*+*+*");
  console.log(`trigger: HTTP ${trigger.status} in ${Date.now() - started} ms`);
  let all: SiteStatus[] = [];
  while (Date.now() - started < limitMs) {
    all = await Promise.all(sites.map(status));
    if (all.every(complete)) break;
    await sleep(1000);
  }
  const seconds = (Date.now() - started) / 1000;
  const runs = all.flatMap((s) => s.runs.filter((r) => Date.parse(r.startedAt) >= started - 1000));
  const used = runs.flatMap((r) => (r.usage ? [r.usage] : []));
  console.log(
    JSON.stringify({
      everySnapshot: all.every(complete),
      seconds,
      shards: all.reduce((n, s) => n + (s.manifest?.shards ?? 0), 0),
      perSite: all.map((s) => `${new URL(s.site).host} ${s.manifest?.snapshots ?? 0}/${s.manifest?.shards ?? 0}`),
      invocations: runs.length,
      largestD1Queries: Math.max(0, ...used.map((u) => u.d1Queries)),
      largestKvOperations: Math.max(0, ...used.map((u) => u.kvOperations)),
    }),
  );
}

/** Polls the site's `section` shards until `check` holds for one served from a snapshot. */
async function until(site: string, section: string, shards: number, started: number, check: (body: string) => boolean): Promise<string> {
  while (Date.now() - started < limitMs) {
    for (let n = 1; n <= shards; n++) {
      const res = await send(site, "GET", `/sitemap-${section}-${n}.xml`);
      const source = String(res.headers["x-sitemap-source"]);
      if (res.status === 200 && check(res.body) && (source === "snapshot" || source === "cache"))
        return `${(Date.now() - started) / 1000} s (${section}-${n}, ${source})`;
    }
    await sleep(250);
  }
  return "not within the limit";
}

async function oneWrite(): Promise<void> {
  const site = sites[0]!;
  const pages = (await status(site)).manifest?.sections["pages"]?.shards ?? 1;
  const loc = `${site}/jobs-bench-${Date.now()}`;
  const started = Date.now();
  const put = await send(site, "PUT", "/sitemap-admin/urls", JSON.stringify([{ loc }]), { ...admin, "Content-Type": "application/json" });
  console.log(
    `write: HTTP ${put.status}; served from a snapshot after ${await until(site, "pages", pages + 1, started, (b) => b.includes(`<loc>${loc}</loc>`))}`,
  );
}

const xmlText = (s: string): string =>
  s.replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");

async function burst(): Promise<void> {
  const site = sites.at(-1)!;
  const shard = await send(site, "GET", "/sitemap-products-2.xml");
  const locs = [...shard.body.matchAll(/<loc>([^<]+)<\/loc>/g)].slice(0, 30).map((m) => xmlText(m[1]!));
  const lastmod = `2026-${String(1 + (Date.now() % 12)).padStart(2, "0")}-15`;
  const before = (await status(site)).runs.filter((r) => r.trigger === "write").length;
  const started = Date.now();
  for (const loc of locs)
    await send(site, "PUT", "/sitemap-admin/urls", JSON.stringify([{ loc, lastmod }]), { ...admin, "Content-Type": "application/json" });
  const wrote = Date.now() - started;
  const served = await until(site, "products", 2, started, (b) => (b.match(new RegExp(`<lastmod>${lastmod}</lastmod>`, "g")) ?? []).length >= locs.length);
  const jobs = (await status(site)).runs.filter((r) => r.trigger === "write").length - before;
  console.log(`burst: ${locs.length} writes in ${wrote} ms → ${jobs} regeneration job(s); all served from a snapshot after ${served}`);
}

await oneTrigger();
await oneWrite();
await burst();
