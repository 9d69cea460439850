/**
 * The worst case the protocol allows, with the real Worker under `wrangler dev` (its local KV
 * refuses values above 25 MiB, as KV does): 28,000 high-entropy URLs of ~2 KB in one section
 * (~57 MB of XML, whose first shard gzips to ~38 MB) and one new URL in another. The writes publish
 * themselves (each queues its site's regeneration, docs/jobs.md): once those jobs ran, every shard
 * is listed, XSD-valid and snapshotted (in parts), every URL once.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, adminStatus, putUrls } from "./support/admin.ts";
import { Validator, crawl } from "./support/crawler.ts";
import { type DevServer, startDevServer } from "./support/dev-server.ts";
import { get, header } from "./support/http.ts";
import { summary } from "./support/summary.ts";

const TOKENS = 28_000;
const BATCH = 400; // ~0.8 MB of JSON, below the default ADMIN_MAX_BYTES (1 MiB)
const LOC_LENGTH = 2_000;

let server: DevServer;
const validator = new Validator();
const check = (ok: boolean, message: string): void => expect(ok, message).toBe(true);

beforeAll(async () => {
  // Writes are published REGEN_SETTLE_SECONDS after the first of a burst (docs/jobs.md): 10 s gathers
  // the ingest (~7 s here) into one or two runs. At 0 each write's run re-rendered the growing ~38 MB
  // shard, 20 runs in a row, and the ingest beside them took 95 s instead of 7.
  server = await startDevServer({ seed: false, vars: { ADMIN_TOKEN, REGEN_SETTLE_SECONDS: "10", EDGE_CACHE_TTL: "0" } });
});
afterAll(async () => {
  await server?.stop();
});

/** A signed-looking URL: base64url of random bytes (6 bits of entropy per character). */
function tokenUrl(i: number): string {
  const head = `${server.origin}/t/${i}?sig=`;
  return (
    head +
    randomBytes(LOC_LENGTH)
      .toString("base64url")
      .slice(0, LOC_LENGTH - head.length)
  );
}

describe("a snapshot larger than a KV value, and a section beside it", () => {
  it("the writes' queued regeneration publishes every shard (stored in parts), all 28,000 URLs once, and the other section's new URL", async () => {
    expect((await putUrls(server.port, [{ loc: `${server.origin}/pages/a`, section: "pages" }])).status).toBe(200);
    await server.jobsDone();

    const locs = Array.from({ length: TOKENS }, (_, i) => tokenUrl(i));
    for (let i = 0; i < TOKENS; i += BATCH) {
      const put = await putUrls(
        server.port,
        locs.slice(i, i + BATCH).map((loc) => ({ loc, section: "tokens" })),
      );
      expect(put.status, JSON.stringify(put.json).slice(0, 300)).toBe(200);
    }
    const other = `${server.origin}/pages/b`;
    expect((await putUrls(server.port, [{ loc: other, section: "pages" }])).status).toBe(200);

    // No cron: the jobs the writes queued run on the local queue's consumer.
    await server.jobsDone();

    const status = await adminStatus(server.port);
    const body = status.json as unknown as {
      manifest: { shards: number; urls: number; withoutSnapshot: string[]; snapshotBytes: Record<string, number | null> };
      regeneration: { failed: unknown[] };
      runs: { ok: boolean; failed: unknown[]; published: boolean; converged: boolean; trigger: string; error?: string }[];
    };
    expect(body.runs[0]).toMatchObject({ ok: true, converged: true, failed: [] });
    expect(body.runs.filter((r) => r.published).map((r) => r.trigger)).toContain("write");
    expect(body.runs.every((r) => r.ok)).toBe(true);
    expect(body.regeneration.failed).toEqual([]);
    expect(body.manifest.withoutSnapshot).toEqual([]);
    expect(body.manifest.urls).toBe(TOKENS + 2);
    const sizes = body.manifest.snapshotBytes;
    expect(Object.keys(sizes).sort()).toEqual(["index", "pages-1", "tokens-1", "tokens-2"]);
    for (const [name, bytes] of Object.entries(sizes)) expect(bytes, `${name} has no stored bytes`).toBeGreaterThan(0);
    // The first shard's gzip does not fit one KV value: it was stored in parts.
    expect(sizes["tokens-1"]!).toBeGreaterThan(26_214_400);

    const crawled = await crawl(server.port, server.origin, check, validator);
    const names = crawled.documents.map((d) => d.name).sort();
    expect(names).toEqual(["pages-1", "tokens-1", "tokens-2"]);
    const tokens = crawled.documents.filter((d) => d.name.startsWith("tokens-")).flatMap((d) => d.urls);
    expect(tokens.length).toBe(TOKENS);
    expect(new Set(tokens)).toEqual(new Set(locs));
    expect(crawled.documents.find((d) => d.name === "pages-1")!.urls.sort()).toEqual([`${server.origin}/pages/a`, other]);
    for (const name of names) {
      const res = await get(server.port, `/sitemap-${name}.xml`, { "Accept-Encoding": "gzip" });
      expect(header(res, "x-sitemap-source"), name).toBe("snapshot");
    }
    summary.add({ requests: crawled.requests, documentsValidated: crawled.documentsValidated, urlsCompared: tokens.length + 2 });
  });
});
