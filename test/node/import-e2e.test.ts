/**
 * The import CLI end to end: the real Worker (wrangler's test harness, in-memory storage, real
 * D1), the CLI as a child process, real HTTP between them. The served sitemaps are read back and
 * compared with the fixture files as parsed by an independent XML parser (fast-xml-parser).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { XMLParser } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeLoc } from "../../src/core/url.ts";
import { locsOf } from "../shared/locs.ts";
import { FIXTURES, TOKEN, runCli, summaryOf } from "./import-helpers.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

const SHOP = "http://shop.example";

/** Locs of a fixture shard, read by fast-xml-parser (not by the CLI's own reader), normalised. */
function fixtureLocs(file: string): string[] {
  const xml = gunzipSync(readFileSync(join(FIXTURES, file))).toString("utf8");
  const doc = new XMLParser({ processEntities: true, htmlEntities: true, trimValues: true }).parse(xml) as {
    urlset: { url: { loc: string }[] };
  };
  return doc.urlset.url.map((u) => {
    const n = normalizeLoc(String(u.loc).trim());
    if (!n.ok) throw new Error(`fixture loc ${u.loc} is invalid: ${n.message}`);
    return n.loc;
  });
}

/** Every loc served for a site: the index, then each shard it lists. */
async function servedLocs(worker: RunningWorker, origin: string): Promise<{ shards: string[]; locs: string[] }> {
  const index = await worker.harness.fetch(`${origin}/sitemap.xml`);
  expect(index.status).toBe(200);
  const shards = locsOf(await index.text());
  const locs: string[] = [];
  for (const shard of shards) {
    expect(shard.startsWith(`${origin}/sitemap-`)).toBe(true);
    const response = await worker.harness.fetch(shard);
    expect(response.status).toBe(200);
    locs.push(...locsOf(await response.text()));
  }
  return { shards, locs };
}

async function getRecord(worker: RunningWorker, loc: string): Promise<Response> {
  return fetch(`${worker.origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
}

let worker: RunningWorker;
let tmp: string;

beforeAll(async () => {
  // Small limits on purpose: shards of 100 URLs, and at most 100 records per admin request (the
  // CLI's default batch of 1,000 is then answered 413 and split until it fits).
  worker = await startWorker(
    // A write's regeneration settles 3 s, not the default minute: the CLI's wait is the same loop
    // either way, and each test that regenerates took a minute of the suite.
    { SITES: SHOP, MAX_URLS_PER_SHARD: "100", ADMIN_MAX_RECORDS: "100", REGEN_SETTLE_SECONDS: "3" },
    { secrets: { ADMIN_TOKEN: TOKEN }, servesOwnOrigin: true },
  );
  tmp = mkdtempSync(join(tmpdir(), "import-e2e-"));
});

afterAll(async () => {
  await worker?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("import CLI → local Worker", () => {
  const expected = [...fixtureLocs("shop-1.xml.gz"), ...fixtureLocs("shop-2.xml.gz")];

  it("imports a sitemap index with two gz shards; the served sitemaps list exactly those URLs", async () => {
    expect(expected).toHaveLength(224);
    expect(new Set(expected).size).toBe(224);

    const run = await runCli([join(FIXTURES, "shop-index.xml"), "--url", worker.origin, "--json", "--progress-interval", "1"], { ADMIN_TOKEN: TOKEN });
    expect(run.code, run.stderr).toBe(0);
    const summary = summaryOf(run);
    expect(summary).toMatchObject({ exitCode: 0, records: 224, invalid: 0, sent: 224, inserted: 224, updated: 0, unchanged: 0 });
    expect(summary["batches"] as number).toBeGreaterThanOrEqual(3); // split to fit ADMIN_MAX_RECORDS=100
    expect(run.stderr).toMatch(/importing: [\d,]+ records, [\d,]+ records\/s, [\d.]+%/);

    // POST /sitemap-admin/regenerate covers the site the request goes to (127.0.0.1:port), not
    // shop.example: the CLI says so, and the first request builds shop.example's index (a fresh DB
    // has no manifest yet).
    expect(run.stderr).toContain(`note: ${SHOP}'s sitemaps update at the Worker's next cron run`);
    expect(summary["regenerated"]).toBeNull();

    const served = await servedLocs(worker, SHOP);
    expect(served.shards).toHaveLength(3);
    expect([...served.locs].sort()).toEqual([...expected].sort());

    // Extensions came through: read one record back.
    const product = await getRecord(worker, `${SHOP}/products/0`);
    expect(product.status).toBe(200);
    expect(await product.json()).toMatchObject({
      loc: `${SHOP}/products/0`,
      lastmod: "2024-03-01",
      changefreq: "weekly",
      priority: 0.7,
      ext: {
        images: [{ loc: "https://cdn.shop.example/img/0.jpg" }],
        alternates: [
          { hreflang: "en", href: `${SHOP}/products/0` },
          { hreflang: "de", href: `${SHOP}/de/produkte/0` },
        ],
      },
    });
  });

  it("a second import of the same index changes nothing (--remote with an explicit URL and token)", async () => {
    const run = await runCli([join(FIXTURES, "shop-index.xml"), "--remote", "--url", worker.origin, "--token", TOKEN, "--json", "--quiet"]);
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ sent: 224, inserted: 0, updated: 0, unchanged: 224 });
    expect(run.stderr).toBe("");
  });

  it("retries 503 and 429 (honouring Retry-After) through a faulty proxy and loses nothing", async () => {
    const faults = [503, 429, 502];
    let puts = 0;
    const proxy: Server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (req.method === "PUT" && puts++ < faults.length) {
        res.writeHead(faults[puts - 1]!, faults[puts - 1] === 429 ? { "Retry-After": "0" } : {});
        res.end("try again");
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of ["authorization", "content-type", "accept"]) if (req.headers[name]) headers[name] = String(req.headers[name]);
      const init: RequestInit = { method: req.method!, headers };
      if (chunks.length > 0) init.body = Buffer.concat(chunks);
      const upstream = await fetch(`${worker.origin}${req.url}`, init);
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "text/plain" });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const port = (proxy.address() as { port: number }).port;
      const run = await runCli([join(FIXTURES, "products.csv"), "--url", `http://127.0.0.1:${port}`, "--retry-delay", "1", "--json"], {
        ADMIN_TOKEN: TOKEN,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(summaryOf(run)).toMatchObject({ sent: 4, inserted: 4, retries: 3 });
      expect(run.stderr).toMatch(/retry 1\/5 in \d+ ms \(HTTP 503\)/);
      // Retry-After: 0 is honoured: no wait beyond the ≤ 250 ms jitter that spreads concurrent importers.
      const honoured = /retry 2\/5 in (\d+) ms \(HTTP 429\)/.exec(run.stderr);
      expect(honoured, run.stderr).not.toBeNull();
      expect(Number(honoured![1])).toBeLessThanOrEqual(250);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
    const quoted = await getRecord(worker, `${SHOP}/csv/quoted?a=1,2`);
    expect(await quoted.json()).toMatchObject({ section: "products", lastmod: "2024-05-02T10:00:00Z" });
    const odd = await getRecord(worker, `${SHOP}/csv/"odd"`);
    expect(await odd.json()).toMatchObject({ loc: `${SHOP}/csv/%22odd%22`, priority: 0.2, section: "pages" });
  });

  it("sends nothing when a line is invalid, and names each bad line", async () => {
    const file = join(tmp, "bad.ndjson");
    writeFileSync(
      file,
      [
        `{"loc": "${SHOP}/bad/1"}`,
        `{"loc": "${SHOP}/bad/2", "priority": 1.5}`,
        `{"loc": "${SHOP}/bad/3"`,
        `{"loc": "${SHOP}/bad/4", "changefreq": "Weekly", "lastmod": "yesterday"}`,
        `{"loc": "${SHOP}/bad/./1"}`,
        `{"loc": "${SHOP}/bad/5"}`,
      ].join("\n"),
    );
    // --strict: a repeated loc is an error too.
    const strict = await runCli([file, "--url", worker.origin, "--json", "--strict"], { ADMIN_TOKEN: TOKEN });
    expect(strict.code).toBe(1);
    expect(summaryOf(strict)).toMatchObject({ invalid: 4, duplicates: 0, sent: 0 });
    expect(strict.stderr).toMatch(new RegExp(`${file}:5: loc: .*first at ${file}:1\\) \\[duplicate-loc\\]`));

    // By default the repeat is no error: the last occurrence wins, with a warning.
    const run = await runCli([file, "--url", worker.origin, "--json"], { ADMIN_TOKEN: TOKEN });
    expect(run.code).toBe(1);
    expect(summaryOf(run)).toMatchObject({ invalid: 3, duplicates: 1, sent: 0 });
    expect(run.stderr).toContain(`1 loc repeats an earlier one (first at ${file}:5): the last occurrence of each was kept`);
    expect(run.stderr).toContain(`${file}:2: priority:`);
    expect(run.stderr).toContain("[priority-range]");
    expect(run.stderr).toContain(`${file}:3: not valid JSON`);
    expect(run.stderr).toMatch(new RegExp(`${file}:4: changefreq: .*\\[changefreq-enum\\]`));
    expect(run.stderr).toMatch(new RegExp(`${file}:4: lastmod: .*\\[w3c-datetime\\]`));
    expect(run.stderr).toContain("nothing was sent");
    for (const n of [1, 5]) expect((await getRecord(worker, `${SHOP}/bad/${n}`)).status).toBe(404);

    // --skip-invalid: the valid records go in, the bad ones are still reported.
    const skip = await runCli([file, "--url", worker.origin, "--json", "--skip-invalid"], { ADMIN_TOKEN: TOKEN });
    expect(skip.code).toBe(1);
    expect(summaryOf(skip)).toMatchObject({ invalid: 3, duplicates: 1, records: 2, sent: 2, inserted: 2 });
    for (const n of [1, 5]) expect((await getRecord(worker, `${SHOP}/bad/${n}`)).status).toBe(200);
    for (const n of [2, 4]) expect((await getRecord(worker, `${SHOP}/bad/${n}`)).status).toBe(404);
  });

  it("imports a real-world sitemap tolerantly: unrepresentable parts dropped, URLs kept, the last of repeated locs wins across batches", async () => {
    const file = join(tmp, "tolerant.xml");
    writeFileSync(
      file,
      [
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" xmlns:mobile="http://www.google.com/schemas/sitemap-mobile/1.0">',
        `<url><loc>${SHOP}/tolerant/a</loc><lastmod>2024-01-01</lastmod><mobile:mobile/>`,
        `<xhtml:link rel="alternate" href="android-app://com.example/http/shop.example/a"/><xhtml:link rel="alternate" hreflang="en" href="${SHOP}/tolerant/a"/></url>`,
        `<url><loc>${SHOP}/tolerant/b</loc><video:video><video:thumbnail_loc>${SHOP}/t.jpg</video:thumbnail_loc><video:description>no title</video:description><video:content_loc>${SHOP}/v.mp4</video:content_loc></video:video></url>`,
        `<url><loc>${SHOP}/tolerant/c</loc></url>`,
        `<url><loc>${SHOP}/tolerant/a</loc><lastmod>2024-06-01</lastmod></url>`,
        "</urlset>",
      ].join("\n"),
    );
    const run = await runCli([file, "--url", worker.origin, "--json", "--batch-size", "2"], { ADMIN_TOKEN: TOKEN });
    expect(run.code).toBe(0);
    expect(summaryOf(run)).toMatchObject({
      records: 3,
      invalid: 0,
      duplicates: 1,
      dropped: { "<mobile:mobile>": 1, "<xhtml:link>: alternates[].hreflang [required]": 1, "<video:video>: videos[].title [required]": 1 },
    });
    const a = (await (await getRecord(worker, `${SHOP}/tolerant/a`)).json()) as { lastmod: string | null; alternates?: unknown };
    expect(a.lastmod).toBe("2024-06-01");
    const b = await getRecord(worker, `${SHOP}/tolerant/b`);
    expect(b.status).toBe(200);
    expect(((await b.json()) as { videos?: unknown }).videos).toBeUndefined();
  });

  it("stops before sending when records are on a site a remote Worker does not serve", async () => {
    const file = join(tmp, "other.txt");
    writeFileSync(file, `${SHOP}/other/1\nhttps://elsewhere.example/x\n`);
    const run = await runCli([file, "--remote", "--url", worker.origin, "--json"], { ADMIN_TOKEN: TOKEN });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("https://elsewhere.example is not a configured site");
    expect(run.stderr).toContain("--origin");
    expect(summaryOf(run)).toMatchObject({ sent: 0 });
    expect((await getRecord(worker, `${SHOP}/other/1`)).status).toBe(404);
  });

  it("--origin imports a production sitemap under the local Worker's own origin", async () => {
    const run = await runCli([join(FIXTURES, "shop-2.xml.gz"), "--url", worker.origin, "--origin", worker.origin, "--json"], { ADMIN_TOKEN: TOKEN });
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ sent: 100, inserted: 100 });
    const served = await servedLocs(worker, worker.origin);
    expect([...served.locs].sort()).toEqual(
      fixtureLocs("shop-2.xml.gz")
        .map((l) => l.replace(SHOP, worker.origin))
        .sort(),
    );
  });

  it("previews a foreign site's sitemap on a local Worker under the Worker's own origin", async () => {
    const file = join(tmp, "mysite.txt");
    writeFileSync(file, "https://www.mysite.example/\nhttps://www.mysite.example/about?x=1\n");
    const run = await runCli([file, "--url", worker.origin, "--json"], { ADMIN_TOKEN: TOKEN });
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ sent: 2, inserted: 2, rehostedTo: worker.origin });
    expect(run.stderr).toContain("https://www.mysite.example is not a configured site of this local Worker");
    expect(run.stderr).not.toContain("warning:");
    for (const path of ["/", "/about?x=1"]) expect((await getRecord(worker, `${worker.origin}${path}`)).status).toBe(200);
    // What `npm run import -- my-sitemap.xml.gz` against `npm start` promises: the URLs are served
    // right away (the CLI regenerated the Worker's own site, whose index existed already).
    expect(summaryOf(run)["regenerated"]).toBe(true);
    // Readable, not the run's raw JSON.
    expect(run.stderr).toMatch(/regenerated the sitemaps: \d+ shards? rendered of \d+ checked, published [0-9a-f]/);
    expect(run.stderr).not.toContain('"shardsRendered"');
    // The queued regeneration was waited for, and the wait said why.
    expect(run.stderr).toContain("waiting for the regeneration");
    const served = await servedLocs(worker, worker.origin);
    expect(served.locs).toEqual(expect.arrayContaining([`${worker.origin}/`, `${worker.origin}/about?x=1`]));
    expect(served.locs).toHaveLength(102);
    // Not a site of this Worker: not found here (rule `site`), and nothing was stored under it.
    const other = await getRecord(worker, "https://www.mysite.example/");
    expect(other.status).toBe(404);
    expect(((await other.json()) as { issues: { rule: string }[] }).issues.map((i) => i.rule)).toEqual(["site"]);
  });

  it("fails with exit 3 and sends nothing when the token is wrong", async () => {
    const run = await runCli([join(FIXTURES, "urls.txt"), "--url", worker.origin, "--token", "wrong", "--json"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("token was rejected (401)");
    expect((await getRecord(worker, `${SHOP}/txt/1`)).status).toBe(404);
  });
});
