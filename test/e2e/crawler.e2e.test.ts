/**
 * A real crawler's path through the real Worker under `wrangler dev`, seeded with 126,000 URLs,
 * then a site owner's: ingest through the admin API, let the write's queued regeneration publish
 * it, crawl again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, adminStatus, putUrls } from "./support/admin.ts";
import { type Crawl, type CrawledDocument, Validator, crawl } from "./support/crawler.ts";
import { DbMirror, type LiveRecord, inNewsWindow, newestChanged } from "./support/db.ts";
import { type DevServer, startDevServer } from "./support/dev-server.ts";
import { get, header, traffic } from "./support/http.ts";
import { summary } from "./support/summary.ts";

let server: DevServer;
let db: DbMirror;
const check = (ok: boolean, message: string): void => expect(ok, message).toBe(true);
const validator = new Validator();
const totals = { documentsValidated: 0, urlsCompared: 0 };

beforeAll(async () => {
  server = await startDevServer({ vars: { ADMIN_TOKEN, REGEN_SETTLE_SECONDS: "0" } });
  db = new DbMirror(server);
});
afterAll(async () => {
  await server?.stop();
  summary.add({ requests: traffic.requests, ...totals });
});

/** Compares what the crawler collected with the database: the whole point of a sitemap. */
function compare(result: Crawl, records: readonly LiveRecord[]): void {
  const inDb = new Set(records.map((r) => r.loc));
  // No duplicates among the section shards (the news sitemap repeats blog URLs by design).
  expect(result.shardUrls.length, "a URL appears in two section shards").toBe(new Set(result.shardUrls).size);
  const crawled = new Set(result.shardUrls);
  const missing = [...inDb].filter((u) => !crawled.has(u));
  const extra = [...crawled].filter((u) => !inDb.has(u));
  expect({ missing: missing.slice(0, 5), extra: extra.slice(0, 5), missingCount: missing.length, extraCount: extra.length }).toEqual({
    missing: [],
    extra: [],
    missingCount: 0,
    extraCount: 0,
  });
  // The news sitemap: exactly the articles of the last 2 days.
  const news = new Set(inNewsWindow(records).map((r) => r.loc));
  expect(news.size).toBeGreaterThan(0);
  expect(new Set(result.newsUrls)).toEqual(news);
  // The Atom feed: the 100 most recently changed live URLs.
  expect(new Set(result.feed!.map((e) => e.id))).toEqual(new Set(newestChanged(records, 100).map((r) => r.loc)));
  totals.urlsCompared += inDb.size + news.size + result.feed!.length;
  totals.documentsValidated += result.documentsValidated;
}

const byName = (result: Crawl): Map<string, CrawledDocument> => new Map(result.documents.map((d) => [d.name, d]));

describe("a crawler", () => {
  let first: Crawl;

  it("goes robots.txt → index → every document: all valid, the shards' URLs are the database's, none twice", async () => {
    // The database is read (another process) while the crawler works.
    const [crawled, records] = await Promise.all([crawl(server.port, server.origin, check, validator), db.records()]);
    first = crawled;
    expect(first.sitemapLines).toEqual([`${server.origin}/sitemap.xml`, `${server.origin}/sitemap-feed.atom`]);
    expect(records.length).toBeGreaterThanOrEqual(120_000);
    expect(
      first.documents
        .filter((d) => d.kind === "shard")
        .map((d) => d.name)
        .sort(),
    ).toEqual(["blog-1", "pages-1", "products-1", "products-2"]);
    expect(first.documents.filter((d) => d.kind === "news").map((d) => d.name)).toEqual(["news"]);
    for (const doc of first.documents) expect(doc.indexLastmod, `${doc.url} has no lastmod in the index`).toBeDefined();
    compare(first, records);
  });

  it("after an ingest, its own queued regeneration (no cron) puts the new URLs in the right shards; the other shards keep their ETags", async () => {
    const products = Array.from({ length: 150 }, (_, i) => ({
      loc: `${server.origin}/products/e2e/new-${i}?colour=red&size=${i % 5}`,
      section: "products",
      lastmod: "2026-11-20T10:00:00+01:00",
      changefreq: "daily",
      ...(i % 10 === 0 ? { images: [`https://cdn.example.com/e2e/${i}.jpg`] } : {}),
    }));
    const pages = Array.from({ length: 60 }, (_, i) => ({ loc: `${server.origin}/pages/e2e-new/${i}`, priority: 0.4 }));
    for (const doc of first.documents) expect(doc.etag && doc.fileEtag, `${doc.url} was served without ETags`).toBeTruthy();
    expect(first.indexEtag).toBeTruthy();
    const put = await putUrls(server.port, [...products, ...pages]);
    expect(put).toEqual({ status: 200, json: { received: 210, inserted: 210, updated: 0, unchanged: 0 } });

    // A write publishes itself (docs/jobs.md): the write queued its site's regeneration, delivered
    // after REGEN_SETTLE_SECONDS (0 here) to the local queue's consumer. No cron runs in this test.
    await server.jobsDone();
    const status = await adminStatus(server.port);
    expect(status.json.runs.map((r) => r.trigger)).toContain("write");
    expect(status.json.runs.map((r) => r.trigger)).not.toContain("cron");
    expect(status.json.runs[0]).toMatchObject({ ok: true, converged: true });
    expect(status.json.manifest!.withoutSnapshot).toEqual([]);

    const [after, records] = await Promise.all([crawl(server.port, server.origin, check, validator), db.records()]);
    const old = byName(first);
    const now = byName(after);
    expect(after.indexEtag).not.toBe(first.indexEtag);
    // Appended keys land in the last shard of their section: products-2 and pages-1.
    for (const name of ["products-2", "pages-1"]) {
      expect(now.get(name)!.etag, name).not.toBe(old.get(name)!.etag);
      expect(now.get(name)!.fileEtag, name).not.toBe(old.get(name)!.fileEtag);
    }
    for (const name of ["products-1", "blog-1", "news"]) {
      expect(now.get(name)!.etag, name).toBe(old.get(name)!.etag);
      expect(now.get(name)!.fileEtag, name).toBe(old.get(name)!.fileEtag);
      expect(now.get(name)!.sha256, `${name}: same ETag, other bytes`).toBe(old.get(name)!.sha256);
    }
    const where = (loc: string): string[] => after.documents.filter((d) => d.kind === "shard" && d.urls.includes(loc)).map((d) => d.name);
    for (const r of products) expect(where(r.loc), r.loc).toEqual(["products-2"]);
    for (const r of pages) expect(where(r.loc), r.loc).toEqual(["pages-1"]);
    expect(now.get("products-2")!.lastmods.get(products[0]!.loc)).toBe("2026-11-20T10:00:00+01:00");
    compare(after, records);

    // The heartbeat after it finds nothing new to publish: every document keeps its ETag.
    expect((await server.scheduled()).status).toBe(200);
    for (const doc of [{ url: `${server.origin}/sitemap.xml`, etag: after.indexEtag }, ...after.documents]) {
      const res = await get(server.port, new URL(doc.url).pathname, { "Accept-Encoding": "gzip" });
      expect(res.status === 200 && res.complete && header(res, "etag") === doc.etag, `${doc.url} changed in a cron run after the write's`).toBe(true);
    }
  });
});
