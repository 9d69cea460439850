/**
 * Registered sites at scale (issue 44, docs/tenants.md), measured in workerd
 * (`npm run bench -- --only tenants [--sites N]`; not in the default set): N sites registered
 * through the platform API, one heartbeat and every job it leads to, each job its own invocation,
 * until every site is served from a snapshot; then the hot path's cost of resolving a host.
 *
 * Each site gets RECORDS_PER_SITE records straight into D1 after its registration (a site without
 * records answers its index with 404, "this site has no URLs yet", so there would be nothing to serve).
 *
 * 1. Registration: `POST /sitemap-admin/sites` with the platform token, `https://t{i}.test`, in
 *    batches of 100 (bench/worker/tenant-routes.ts `t/register`: each POST one invocation of the app
 *    under the enforcing meter), two batches at a time.
 * 2. One heartbeat (the entry's `scheduled`: bench route `t/heartbeat`), then every message it and
 *    its jobs send (the registry sweep's steps, each site's regeneration), each delivered to the
 *    real consumer as its own invocation (`t/consume`), `CONCURRENCY` at a time (production's
 *    consumer runs batches concurrently; wrangler.jsonc: one message a batch). Then a sample of the
 *    sites' indexes through the app: each must come from a snapshot (or the edge cache).
 * 3. The hot path, interleaved (each round A B C, the next C B A, so that no case always follows
 *    another's after-work): a cached index of the SITES site, of a registered site (resolved from
 *    the isolate's list: a list hit), and of a random unknown host (404); the D1 queries of 2,000
 *    unknown hosts; and a list miss: `SiteRegistry.liveSites()` at N sites.
 */
import { type Harness, startHarness } from "./harness.ts";
import { BENCH_ORIGIN, type BenchOptions, type Row, type Section, int, median, ms, now } from "./lib.ts";
import { type InvocationUsage, limitsContext, recordInvocation } from "./limits.ts";
import { GZIP, sourceOf } from "./workerd.ts";

const TOKEN = "bench-platform-token-0123456789abcdef0123456789";
const BATCH = 100;
/** Registration batches in flight at once. */
const REGISTER_CONCURRENCY = 2;
/** Queue deliveries in flight at once. */
const CONCURRENCY = 4;
/** Records per site (an empty site's index is a 404, "this site has no URLs yet"), loaded straight into D1. */
const RECORDS_PER_SITE = 10;
/** Sites seeded per call. */
const SEED_SITES = 1_000;

/** `--sites N` (default 10,000; --quick 200). */
export function sitesOption(argv: readonly string[], quick: boolean): number {
  const i = argv.indexOf("--sites");
  const raw = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith("--sites="))?.slice(8);
  const n = raw === undefined ? (quick ? 200 : 10_000) : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--sites must be a whole number ≥ 1, got "${raw}"`);
  return n;
}

interface Used {
  used: InvocationUsage;
}

interface Delivery extends Used {
  idle?: boolean;
  pending: number;
  dueInMs?: number;
  kind: string;
  origin: string;
  step: number;
  result: "acked" | "retried" | "dead";
}

const siteUrl = (i: number, path = "/sitemap.xml") => `https://t${i}.test${path}`;
const as = (target: string) => `/__bench/as?path=${encodeURIComponent(target)}`;
const sleep = (delay: number) => new Promise((resolve) => setTimeout(resolve, delay));
const log = (line: string) => console.error(`[tenants] ${line}`);

/** Largest of each usage figure over some invocations. */
function largest(used: readonly InvocationUsage[]): { d1: number; kv: number; sub: number; ms: number; stopped: number } {
  return {
    d1: Math.max(0, ...used.map((u) => u.d1Queries)),
    kv: Math.max(0, ...used.map((u) => u.kvOperations)),
    sub: Math.max(0, ...used.map((u) => u.subrequests)),
    ms: Math.max(0, ...used.map((u) => u.durationMs)),
    stopped: used.filter((u) => u.limitHit).length,
  };
}
const largestText = (used: readonly InvocationUsage[]): string => {
  const l = largest(used);
  return `largest invocation: ${int(l.d1)} D1 queries, ${int(l.kv)} KV operations, ${int(l.sub)} subrequests, ${ms(l.ms)}${l.stopped ? `; ${l.stopped} stopped by the meter` : ""}`;
};

/** Every registered site and the SITES site get RECORDS_PER_SITE records of section `pages` (scaffolding, not timed). */
async function seed(h: Harness, total: number): Promise<void> {
  const stamp = Date.now();
  await h.bench("t/seed", { origin: BENCH_ORIGIN, per: RECORDS_PER_SITE, stamp });
  for (let start = 0; start < total; start += SEED_SITES) {
    await h.bench("t/seed", { start, count: Math.min(SEED_SITES, total - start), per: RECORDS_PER_SITE, stamp: stamp + 1 + start * RECORDS_PER_SITE });
  }
}

async function register(h: Harness, total: number, rows: Row[]): Promise<void> {
  const used: InvocationUsage[] = [];
  let created = 0;
  const refused: string[] = [];
  let next = 0;
  const started = now();
  await Promise.all(
    Array.from({ length: REGISTER_CONCURRENCY }, async () => {
      for (;;) {
        const start = next;
        if (start >= total) return;
        next += BATCH;
        const count = Math.min(BATCH, total - start);
        const { results } = await h.bench<{ results: ({ created: number; token: boolean; error: string | null } & Used)[] }>("t/register", {
          start,
          count,
          token: TOKEN,
          base: BENCH_ORIGIN,
        });
        for (const r of results) {
          used.push(r.used);
          recordInvocation("registration: POST /sitemap-admin/sites (one site, platform token)", r.used);
          if (r.created === 201 && r.token) created++;
          else refused.push(`${r.created} ${r.error}`);
        }
        if ((start / BATCH) % 20 === 0) log(`registered ${int(start + count)} of ${int(total)}`);
      }
    }),
  );
  const elapsed = now() - started;
  if (refused.length > 0) throw new Error(`${refused.length} registrations refused, first: ${refused[0]}`);
  rows.push({
    name: `${int(total)} sites registered through the platform API (\`POST /sitemap-admin/sites\`, ${REGISTER_CONCURRENCY} batches of ${BATCH} at a time)`,
    value: `${int((created / elapsed) * 1000)} sites/s`,
    detail: `${int(created)} answered 201 with the site's token in ${ms(elapsed)}; each POST one invocation: median ${ms(median(used.map((u) => u.durationMs)))}, ${largestText(used)}`,
  });
}

/** Every site of the sample serves its index from a snapshot or the edge cache: how many do not. */
async function servedFromSnapshots(h: Harness, sample: readonly number[]): Promise<{ bad: string[]; sources: Record<string, number> }> {
  const bad: string[] = [];
  const sources: Record<string, number> = {};
  for (const i of sample) {
    for (const path of ["/sitemap.xml", "/sitemap-pages-1.xml"]) {
      const r = await h.bench<{ status: number; source: string | null; bytes: number }>(
        "t/get",
        { target: siteUrl(i, path) },
        "POST",
        `request GET ${path} of a registered site (after the heartbeat)`,
      );
      const source = r.source ?? "live";
      sources[source] = (sources[source] ?? 0) + 1;
      if (r.status !== 200 || (source !== "snapshot" && source !== "cache")) bad.push(`t${i}${path}: ${r.status} ${source}`);
    }
  }
  return { bad, sources };
}

async function heartbeatUntilServed(h: Harness, total: number, rows: Row[]): Promise<void> {
  // What a site registered a moment ago answers before any job ran (t0 is left out of the sample below).
  const before = await h.bench<{ status: number; source: string | null; bytes: number }>(
    "t/get",
    { target: siteUrl(0) },
    "POST",
    "request GET /sitemap.xml of a registered site before its first regeneration",
  );
  const started = now();
  const beat = await h.bench<{ sent: number; used: InvocationUsage; pending: number }>("t/heartbeat");
  recordInvocation("heartbeat (the cron's scheduled)", beat.used);
  log(`heartbeat sent ${beat.sent}`);
  const byKind = new Map<string, InvocationUsage[]>();
  let retried = 0;
  let dead = 0;
  let sweepDoneAt = Number.NaN;
  let regenerations = 0;
  let inFlight = 0;
  let done = false;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (!done) {
        inFlight++;
        const d = await h.bench<Delivery>("t/consume").finally(() => inFlight--);
        if (d.idle) {
          // Nothing due: the queue is empty once no delivery is in flight (one could still send), else wait for it.
          if (d.pending === 0 && inFlight === 0) done = true;
          else await sleep(Math.min(d.dueInMs ?? 20, 1_000));
          continue;
        }
        const list = byKind.get(d.kind) ?? [];
        list.push(d.used);
        byKind.set(d.kind, list);
        recordInvocation(
          d.kind === "regenerate" && d.origin !== BENCH_ORIGIN ? `job: regenerate (a registered site, ${RECORDS_PER_SITE} records)` : `job: ${d.kind}`,
          d.used,
        );
        if (d.result === "retried") retried++;
        if (d.result === "dead") dead++;
        if (d.kind === "registry-sweep") sweepDoneAt = now() - started;
        if (d.kind === "regenerate" && d.origin !== BENCH_ORIGIN && ++regenerations % 1_000 === 0) log(`${int(regenerations)} regenerations`);
      }
    }),
  );
  const elapsed = now() - started;
  const invocations = [...byKind.values()].reduce((n, l) => n + l.length, 0) + 1;
  const all = [beat.used, ...[...byKind.values()].flat()];
  // A sample: every site up to 500, else 500 spread over them, the last included (t0 answered before the heartbeat).
  const step = Math.max(1, Math.floor((total - 1) / 500));
  const sample = [...new Set([...Array.from({ length: Math.min(500, total - 1) }, (_, k) => 1 + k * step).filter((i) => i < total), total - 1])];
  const checked = await servedFromSnapshots(h, sample);
  rows.push({
    name: `one heartbeat → every registered site's index and shard served from a snapshot (${CONCURRENCY} queue deliveries at a time)`,
    value: ms(elapsed),
    detail:
      `${int(invocations)} invocations (heartbeat 1, ${[...byKind].map(([k, l]) => `${k} ${int(l.length)}`).join(", ")}${retried ? `; ${retried} retried` : ""}${dead ? `; ${dead} dead` : ""}); ` +
      `the registry sweep's last step ended at ${ms(sweepDoneAt)}; ${largestText(all)}. ` +
      `Sample of ${sample.length} sites' \`/sitemap.xml\` and \`/sitemap-pages-1.xml\` afterwards: ${Object.entries(checked.sources)
        .map(([s, n]) => `${n} ${s}`)
        .join(", ")}${checked.bad.length ? `; not from a snapshot: ${checked.bad.slice(0, 5).join(", ")}` : ""}. ` +
      `Before the heartbeat a site's index answered ${before.status} (${before.source ?? "live"}: built within the request, MANIFEST_REQUEST_ROWS)`,
    target: "every sampled site from a snapshot",
    met: checked.bad.length === 0 && dead === 0,
  });
  for (const [kind, list] of byKind) {
    const sites = kind === "registry-sweep" ? `; ${int(total)} sites over ${list.length} steps` : "";
    rows.push({
      name: `  job ${kind}: ${int(list.length)} invocations`,
      value: `median ${ms(median(list.map((u) => u.durationMs)))}`,
      detail: `${largestText(list)}${sites}`,
    });
  }
  rows.push({
    name: "  heartbeat (the cron's invocation)",
    value: ms(beat.used.durationMs),
    detail: `${beat.sent} messages sent; ${largestText([beat.used])}`,
  });
}

async function hotPath(h: Harness, total: number, options: BenchOptions, rows: Row[]): Promise<void> {
  const registered = siteUrl(Math.floor(total / 2));
  const configured = `${BENCH_ORIGIN}/sitemap.xml`;
  // Fill the edge cache of both indexes (stored after the body, in waitUntil).
  for (const target of [configured, registered]) {
    let filled = false;
    for (let i = 0; i < 50 && !filled; i++) {
      const r = await h.get(as(target), GZIP);
      filled = r.status === 200 && sourceOf(r) === "cache";
      if (!filled) await sleep(100);
    }
    if (!filled) throw new Error(`${target} never came from the edge cache`);
  }
  let unknown = 0;
  const randomHost = () =>
    `https://u${Date.now().toString(36)}${(unknown++).toString(36)}${Math.random().toString(36).slice(2, 8)}.example.net/sitemap.xml`;
  const cases = [
    { name: "SITES site", times: [] as number[], target: () => configured, status: 200, source: "cache" },
    { name: "registered site", times: [] as number[], target: () => registered, status: 200, source: "cache" },
    { name: "unknown host", times: [] as number[], target: randomHost, status: 404, source: null },
  ];
  const rounds = options.quick ? 100 : 600;
  // Warm-up (JIT, the list of sites read once more if it went stale), untimed.
  for (let i = 0; i < 20; i++) for (const c of cases) await h.get(as(c.target()), GZIP);
  for (let i = 0; i < rounds; i++) {
    for (const c of i % 2 === 0 ? cases : [...cases].reverse()) {
      const r = await h.get(as(c.target()), GZIP);
      if (r.status !== c.status || (c.source !== null && sourceOf(r) !== c.source)) throw new Error(`${c.name}: ${r.status} ${sourceOf(r)}`);
      c.times.push(r.ms);
    }
  }
  const [a, b, c] = cases.map((x) => median(x.times)) as [number, number, number];
  rows.push({
    name: `hot path, interleaved (${rounds} rounds, ABC then CBA): cached \`/sitemap.xml\` of the SITES site (A), of a registered site resolved from the isolate's list (B: list hit), a random unknown host (C: 404)`,
    value: `B − A ${(b - a).toFixed(3)} ms`,
    detail: `medians: A ${ms(a)}, B ${ms(b)}, C ${ms(c)} (C − A ${(c - a).toFixed(3)} ms); through \`/__bench/as\` (the real entry), loopback HTTP, ${int(total)} sites registered`,
    target: "B − A ≤ 0.2 ms",
    met: b - a <= 0.2,
  });

  // Unknown hosts reach no D1: each request one metered invocation of the app.
  const floods = options.quick ? 200 : 2_000;
  let queries = 0;
  let most = 0;
  let notFound = 0;
  const flood = now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < floods) {
        next++;
        const r = await h.bench<{ status: number; usage: InvocationUsage }>(
          "t/get",
          { target: randomHost() },
          "POST",
          "request GET /sitemap.xml of an unknown host",
        );
        queries += r.usage.d1Queries;
        most = Math.max(most, r.usage.d1Queries);
        if (r.status === 404) notFound++;
      }
    }),
  );
  rows.push({
    name: `${int(floods)} requests for random unknown hosts (4 at a time): D1 queries`,
    value: int(queries),
    detail: `${int(notFound)} answered 404; at most ${most} in one request; ${ms(now() - flood)} in all (the list of sites is read again at most once per MANIFEST_CACHE_TTL per isolate, by the request that finds it stale)`,
    target: "0 per request",
    met: queries <= 1,
  });

  // A list miss: the registry's live origins read and kept as the resolver keeps them.
  const runs = options.quick ? 5 : 21;
  const ticks: number[] = [];
  for (let i = 0; i < 5; i++) ticks.push((await h.bench<{ ms: number }>("t/live", { tick: 1 }, "POST", "a timer's turn (t/live tick)")).ms);
  const tick = median(ticks);
  const lists: { ms: number; sites: number; rowsRead: number; queries: number }[] = [];
  const fresh: { ms: number; found: boolean; rowsRead: number; queries: number }[] = [];
  for (let i = 0; i < runs; i++) {
    lists.push(await h.bench("t/live", {}, "POST", "registry list read (SiteRegistry.live)"));
    fresh.push(
      await h.bench("t/live", { origin: registered.replace("/sitemap.xml", "") }, "POST", "a fresh isolate's first resolve of a registered host"),
    );
  }
  if (lists[0]!.sites !== total) throw new Error(`liveSites() listed ${lists[0]!.sites} sites, not ${total}`);
  if (!fresh.every((f) => f.found)) throw new Error("a fresh resolver did not find the registered site");
  rows.push({
    name: `list miss: \`SiteRegistry.liveSites()\` at ${int(total)} sites, and the Map each isolate keeps (${runs} runs)`,
    value: `median ${ms(median(lists.map((l) => l.ms)))}`,
    detail: `${lists[0]!.queries} query, ${int(lists[0]!.rowsRead)} rows read; min ${ms(Math.min(...lists.map((l) => l.ms)))}, max ${ms(Math.max(...lists.map((l) => l.ms)))} (a timer's turn, ${ms(tick)}, included: workerd's clock moves at I/O)`,
  });
  rows.push({
    name: "  a fresh isolate's first resolve of a registered host (the list, then the site's record)",
    value: `median ${ms(median(fresh.map((l) => l.ms)))}`,
    detail: `${fresh[0]!.queries} queries, ${int(fresh[0]!.rowsRead)} rows read; then once per MANIFEST_CACHE_TTL (60 s) per isolate, in the background for a listed host`,
  });
}

export async function tenantsBench(options: BenchOptions, total: number): Promise<Section> {
  limitsContext("tenants", total);
  const rows: Row[] = [];
  // No outbound requests: no IndexNow or pings (no notify jobs), no crawler ranges to fetch.
  const h = await startHarness(
    { ADMIN_TOKEN: TOKEN, INDEXNOW_ENDPOINT: "", PING_URLS: "", CRAWLER_IP_RANGES: "none" },
    { storage: options.storage, heapCapMiB: options.heapCapMiB },
  );
  try {
    const t = now();
    await register(h, total, rows);
    log(`registered in ${ms(now() - t)}`);
    await seed(h, total);
    await heartbeatUntilServed(h, total, rows);
    log("served");
    await hotPath(h, total, options, rows);
  } finally {
    await h.dispose();
  }
  return {
    title: `Registered sites: ${int(total)} sites through the platform API, one heartbeat, the hot path (workerd)`,
    note:
      `The real Worker in workerd (Miniflare, D1/KV in a second workerd process), every invocation under the enforcing meter; ` +
      `the harness has no queue consumer, so the bench delivers each message the heartbeat and its jobs send to the real consumer as its own invocation (bench/worker/tenant-routes.ts). ` +
      `Each site, the SITES site too, has ${RECORDS_PER_SITE} records (section \`pages\`, loaded straight into D1 after the registration: a site without any answers its index with 404 "this site has no URLs yet"). Wall times are this machine's, shared and loaded, not production's.`,
    rows,
  };
}
