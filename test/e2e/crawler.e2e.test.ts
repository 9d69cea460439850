/** A real crawler's path through the real Worker under `wrangler dev`, seeded with 126,000 URLs. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crawl } from "./support/crawler.ts";
import { type DevServer, startDevServer } from "./support/dev-server.ts";
import { summary } from "./support/summary.ts";

let server: DevServer;

beforeAll(async () => {
  server = await startDevServer();
});
afterAll(async () => {
  await server?.stop();
});

describe("a crawler", () => {
  it("finds every URL in the database exactly once, in documents that all validate", async () => {
    const stats = await crawl(server.port, `${server.origin}/sitemap.xml`, (ok, message) => expect(ok, message).toBe(true));
    const inDb = server.query<{ loc: string }>(`SELECT loc FROM urls WHERE deleted = 0 AND origin = '${server.origin}'`).map((r) => r.loc);
    expect(inDb.length).toBeGreaterThanOrEqual(120_000);
    expect(stats.shardUrls.length).toBeGreaterThanOrEqual(3);
    expect(stats.urls.length).toBe(new Set(stats.urls).size);
    expect(new Set(stats.urls)).toEqual(new Set(inDb));
    summary.add({ requests: stats.requests, documentsValidated: stats.documentsValidated, urlsCompared: inDb.length });
  });
});
