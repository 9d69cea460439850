/**
 * Issue 50, item 8: the crawler log's rows name what was served, not what a path's syntax says.
 * A verified crawler's generated requests (the site's documents in both forms, made-up shard numbers
 * and sections, odd spellings, percent-encodings, query strings; GET, HEAD, a conditional GET, POST)
 * go through the Worker's entry with real D1 and Cache API; a row exists exactly for each document
 * served (2xx, 304) and for a failed answer at a fixed path (the index, the feed, the stylesheet).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { XSL_PATH } from "../../src/documents/paths.ts";
import worker from "../../src/index.ts";
import { seeded } from "./support/admin.ts";

const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/** The site's documents (seeded: three pages, two a shard) by path, as the log names them. */
const DOCUMENTS: Readonly<Record<string, string>> = {
  "/sitemap.xml": "index",
  "/sitemap-pages-1.xml": "pages-1",
  "/sitemap-pages-1.xml.gz": "pages-1",
  "/sitemap-pages-2.xml": "pages-2",
  "/sitemap-pages-2.xml.gz": "pages-2",
  "/sitemap-pages-1.txt": "text-pages-1",
  "/sitemap-pages-2.txt": "text-pages-2",
  "/sitemap-feed.atom": "feed",
  [XSL_PATH]: "stylesheet",
};
/** Documents at one fixed path each: a failed answer for one is still a row. */
const FIXED = new Set(["index", "feed", "stylesheet"]);

const path = fc.oneof(
  fc.constantFrom(...Object.keys(DOCUMENTS)),
  // Made-up shard numbers of a real section, in both forms.
  fc.tuple(fc.integer({ min: 3, max: 999_999_999 }), fc.constantFrom(".xml", ".xml.gz")).map(([n, ext]) => `/sitemap-pages-${n}${ext}`),
  // Sections the site does not have.
  fc.tuple(fc.constantFrom("blog", "products", "x", "a_b"), fc.integer({ min: 1, max: 99 })).map(([s, n]) => `/sitemap-${s}-${n}.xml`),
  fc.constantFrom(
    "/sitemap-Pages-1.xml",
    "/sitemap-pages-01.xml",
    "/sitemap-pages-1.XML",
    "/sitemap-pages-1.xml/",
    "/sitemap-pages--1.xml",
    "/sitemap-pages-0.xml",
    "/sitemap-pages-1.xml.gzip",
    "/sitemap.xml.gz",
    "/sitemap_index.xml",
    "/sitemap-news.xml",
    "/sitemap-news7.xml.gz",
    "/sitemap-pages-3.txt",
    "/sitemap-pages-%31.xml",
    "/sitemap%2Dpages-1.xml",
    "/sitemap-pages-1%2Exml",
    "/sitemap-pages-99999.xml",
  ),
);
const query = fc.constantFrom("", "", "?x=1", "?page=2&utm_source=a");
const method = fc.constantFrom("GET", "HEAD", "conditional", "POST");
const request = fc.record({ path, query, method });

interface Answer {
  pathname: string;
  status: number;
}

async function fetchAs(origin: string, e: Env, r: { path: string; query: string; method: string }): Promise<Answer> {
  const url = new URL(`${origin}${r.path}${r.query}`);
  const headers: Record<string, string> = { "User-Agent": GOOGLEBOT, "CF-Connecting-IP": "203.0.113.9", "Accept-Encoding": "gzip" };
  if (r.method === "conditional") headers["If-None-Match"] = "*";
  const ctx = createExecutionContext();
  const req = new Request(url, {
    method: r.method === "conditional" ? "GET" : r.method,
    headers,
    cf: { verifiedBotCategory: "Search Engine Crawler" },
  });
  const res = await worker.fetch(req as unknown as Request<unknown, IncomingRequestCfProperties>, e, ctx);
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return { pathname: url.pathname, status: res.status };
}

const ok = (status: number) => (status >= 200 && status < 300) || status === 304;

describe("a verified crawler's rows", () => {
  it("exist exactly for the documents served, and for failed answers at a fixed path; made-up paths are only counted", { timeout: 120_000 }, async () => {
    let served = 0;
    let madeUp = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 12 }), async (requests) => {
        const { origin, env: e } = await seeded("crawler-served");
        const expected = new Set<string>();
        for (const r of requests) {
          const answer = await fetchAs(origin, e, r);
          const document = DOCUMENTS[answer.pathname];
          // Only the site's own documents are ever served.
          if (ok(answer.status)) expect(document, `${r.method} ${answer.pathname} answered ${answer.status}`).toBeDefined();
          if (document !== undefined && (ok(answer.status) || FIXED.has(document))) expected.add(`${document} ${ok(answer.status) ? "ok" : "failed"}`);
          if (ok(answer.status)) served++;
          else if (document === undefined) madeUp++;
        }
        const { results } = await e.DB.prepare("SELECT document, status, path FROM crawler_fetches WHERE origin = ?1")
          .bind(origin)
          .all<{ document: string; status: number; path: string }>();
        expect(new Set(results.map((row) => `${row.document} ${ok(row.status) ? "ok" : "failed"}`))).toEqual(expected);
        for (const row of results) expect(DOCUMENTS[row.path], row.path).toBe(row.document);
        // Counted per site, crawler and verification (an hour's and a day's slot), never per path.
        const counts = await e.DB.prepare("SELECT COUNT(*) AS n FROM crawler_counts WHERE origin = ?1").bind(origin).first<{ n: number }>();
        expect(counts!.n).toBeLessThanOrEqual(2);
      }),
      { numRuns: 15 },
    );
    // The generated requests reached both kinds of answer.
    expect(served).toBeGreaterThan(0);
    expect(madeUp).toBeGreaterThan(0);
  });
});
