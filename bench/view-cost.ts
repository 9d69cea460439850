/**
 * What the browser view costs the Worker (docs/browser-view.md "Cost"), side by side with the
 * cached XML of the same full 50,000-URL shard, in one run: the real Worker in workerd (the bench
 * harness, local D1, Cache API), requests over loopback HTTP with the headers of a top-level browser
 * navigation, timed to the last byte. Rows read are D1's own `meta.rows_read`, summed over the
 * request's statements (`/__bench/count`).
 *
 * A page reads its own key range from the manifest's page starts, from the first view on. A filter
 * reads the shard once per version and location, which stores a digest (row lines, locs) in the
 * Cache API; every later filter reads no record. The comparison rows are the view as it was before
 * both: the manifest's page starts removed and EDGE_CACHE_TTL=0, so every page and filter scans.
 */
import { request } from "node:http";
import { startHarness } from "./harness.ts";
import { type BenchOptions, type Row, type Section, int, median, ms, now, ratio } from "./lib.ts";
import { limitsContext } from "./limits.ts";
import { type Count, GZIP, SHARD, sourceOf, spread } from "./workerd.ts";

const FULL = 50_000;
const SEED_BATCH = 5_000;
const NAVIGATE = { "sec-fetch-dest": "document", "sec-fetch-mode": "navigate", "accept-encoding": "gzip" };
/** Matches one URL (the shard's last); matches about a third of them. */
const RARE = `${SHARD}?q=-49999%3F`;
const BROAD = `${SHARD}?q=colour%3Dred`;
const PAGE_50 = `${SHARD}?page=50`;
/** The view before page starts and the digest: no Cache API layer, the manifest read each time (its page starts are removed below). */
const BEFORE = JSON.stringify({ EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" });
/** Page 50 over BROAD's matches would be empty; its last page has rows. */
const BROAD_LAST = `${SHARD}?q=colour%3Dred&page=16`;

/** GET over node:http: fetch() would replace `Sec-Fetch-Mode` with its own. */
function getText(url: URL, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve(text));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

export async function viewCostBench(options: BenchOptions): Promise<Section> {
  limitsContext("view-cost", FULL);
  const h = await startHarness({ INDEXNOW_ENDPOINT: "", PING_URLS: "" }, options);
  try {
    const stamp = Date.now() - 30 * 86_400_000;
    for (let start = 0; start < FULL; start += SEED_BATCH) {
      await h.bench("seed", { origin: h.origin, section: "products", start, count: SEED_BATCH, stamp: stamp + start });
    }
    await h.bench("rebuild", { origin: h.origin });

    /** The request with its D1 rows read; `vars` override the configuration for it. */
    const count = async (path: string, vars?: string): Promise<Count> => {
      const target = new URL("/__bench/count", h.url);
      target.searchParams.set("path", path);
      if (vars) target.searchParams.set("vars", vars);
      const body = JSON.parse(await getText(target, { ...NAVIGATE, "accept-encoding": "identity" })) as Count;
      if (body.status !== 200) throw new Error(`${path} → ${body.status}`);
      return body;
    };
    const as = (path: string, vars: string): string => `/__bench/as?path=${encodeURIComponent(path)}&vars=${encodeURIComponent(vars)}`;
    const runs = Math.max(3, options.runs);
    /** Cases timed in turns (one request of each per round), so that load from elsewhere on the machine falls on all alike. */
    const rounds = async (cases: readonly { path: string; headers: Record<string, string>; source: string }[]): Promise<number[][]> => {
      const out = cases.map(() => [] as number[]);
      for (let i = 0; i < runs; i++) {
        for (const [j, c] of cases.entries()) {
          const r = await h.get(c.path, c.headers);
          if (r.status !== 200 || sourceOf(r) !== c.source) throw new Error(`${c.path} → ${r.status} from ${sourceOf(r)}`);
          out[j]!.push(r.ms);
        }
      }
      return out;
    };
    const IDENTITY = { "accept-encoding": "identity" };

    // The cached XML: one fetch of each representation fills the Cache API, the timed ones are hits.
    await h.get(SHARD, GZIP);
    await h.get(SHARD, IDENTITY);
    // Page 50 before anything else of the view: its first request already reads only its own rows.
    await h.get(SHARD, NAVIGATE); // warm isolate (page 1)
    const firstPage = await count(PAGE_50);
    // The first filter of the version reads the shard once and stores the digest.
    const t = now();
    const first = await h.get(RARE, NAVIGATE);
    const firstMs = now() - t;
    if (first.status !== 200) throw new Error(`${RARE} → ${first.status}`);
    // The digest is stored after the body (waitUntil): wait until a filter reads no record.
    for (let i = 0; i < 50 && (await count(RARE)).rowsRead > 0; i++) await new Promise((r) => setTimeout(r, 100));

    const cases = [
      { name: "cached XML of the whole shard (gzip, Cache API hit)", path: SHARD, headers: GZIP, source: "cache" },
      { name: "  same, identity", path: SHARD, headers: IDENTITY, source: "cache" },
      { name: "view, page 50: keyset read of its own key range", path: PAGE_50, headers: NAVIGATE, source: "view", target: 3 },
      { name: "view, page 1", path: SHARD, headers: NAVIGATE, source: "view" },
      { name: "view, filter matching 1 URL", path: RARE, headers: NAVIGATE, source: "view" },
      { name: "view, filter matching ~1/3 of the URLs, page 1", path: BROAD, headers: NAVIGATE, source: "view" },
      { name: "view, same filter, its last page", path: BROAD_LAST, headers: NAVIGATE, source: "view" },
    ];
    const timed = await rounds(cases);
    const base = median(timed[0]!);

    const rows: Row[] = [];
    for (const [i, c] of cases.entries()) {
      const value = median(timed[i]!);
      const counted = c.source === "view" ? await count(c.path) : null;
      rows.push({
        name: c.name,
        value: ms(value),
        detail:
          `${spread(timed[i]!)}` +
          (i > 0 ? `; ${ratio(value / base)} the cached XML` : "") +
          (counted ? `; ${int(counted.rowsRead)} rows read in ${counted.queries} queries; ${int(counted.bytes)} B of HTML` : ""),
        ...(c.target ? { target: `≤ ${c.target}× cached XML (gzip)`, met: value <= c.target * base } : {}),
      });
    }

    rows.push({
      name: "view, page 50, the very first view request of the version",
      value: `${int(firstPage.rowsRead)} rows`,
      detail: `D1 rows read in ${firstPage.queries} queries: the page's own key range, nothing before it`,
    });
    rows.push({
      name: "first filter of a version: reads the shard once, stores the digest",
      value: ms(firstMs),
      detail: `1 run; ${ratio(firstMs / base)} the cached XML`,
    });

    // The view as it was: no page starts in the manifest, no Cache API layer: every page and filter scans the shard.
    await (await h.mf.getD1Database("DB")).prepare("UPDATE shards SET page_starts = NULL WHERE origin = ?1").bind(h.origin).run();
    await h.get(as(PAGE_50, BEFORE), NAVIGATE); // warm the env
    const [scanPage, scanFilter] = await rounds([
      { path: as(PAGE_50, BEFORE), headers: NAVIGATE, source: "view" },
      { path: as(RARE, BEFORE), headers: NAVIGATE, source: "view" },
    ]);
    const scanPageRows = await count(PAGE_50, BEFORE);
    rows.push({
      name: "for comparison, the view before (no page starts, EDGE_CACHE_TTL=0): page 50",
      value: ms(median(scanPage!)),
      detail: `${spread(scanPage!)}; ${ratio(median(scanPage!) / base)} the cached XML; ${int(scanPageRows.rowsRead)} rows read in ${scanPageRows.queries} queries`,
    });
    rows.push({
      name: "  same, filter matching 1 URL",
      value: ms(median(scanFilter!)),
      detail: `${spread(scanFilter!)}; ${ratio(median(scanFilter!) / base)} the cached XML`,
    });
    return {
      title: "Browser view cost: a full shard's pages and filters against its cached XML (workerd, local D1, Cache API)",
      note:
        `One shard of ${int(FULL)} URLs (demo products). Loopback HTTP, request start to last byte, median of ${runs} runs, the cases taken in turns ` +
        "(one request of each per round); headers of a top-level browser navigation (`Sec-Fetch-Dest: document`, `Sec-Fetch-Mode: navigate`, gzip). Rows read: D1 `meta.rows_read` " +
        "summed over the request's statements. The view's HTML is `private, no-store`: every view request runs the Worker.",
      rows,
    };
  } finally {
    await h.dispose();
  }
}
