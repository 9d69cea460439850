/**
 * Mirrors end to end: the real Worker (wrangler's test harness, real local D1/KV) with
 * MIRROR_SITEMAPS pointing at a real node:http server on 127.0.0.1 run by this test, the cron
 * trigger run as the platform runs it. What the CMS's sitemap says is what the Worker serves,
 * removals included; an unchanged sitemap costs one conditional request; failures keep the last
 * good state and show in /sitemap-admin/status.
 */
import { createHash } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locsOf } from "../shared/locs.ts";
import { TOKEN } from "./import-helpers.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

const SITE = "http://cms.example"; // http: the harness serves plain HTTP, and the site is the request origin

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let base: string;
let worker: RunningWorker;
const routes = new Map<string, Handler>();
const requests: { path: string; ifNoneMatch: string | undefined }[] = [];

/** Serves `body` with an ETag of its bytes, answering 304 to a matching If-None-Match. */
function serve(body: string | Buffer, type = "application/xml"): Handler {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  const etag = `"${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}"`;
  return (req, res) => {
    if (req.headers["if-none-match"] === etag) {
      res.writeHead(304, { ETag: etag }).end();
      return;
    }
    res.writeHead(200, { "Content-Type": type, ETag: etag }).end(bytes);
  };
}

const urlset = (locs: string[], lastmod = "2026-01-01") =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs
    .map((loc) => `<url><loc>${loc}</loc><lastmod>${lastmod}</lastmod></url>`)
    .join("\n")}\n</urlset>\n`;
const index = (locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs
    .map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`)
    .join("\n")}\n</sitemapindex>\n`;
const pages = (prefix: string, n: number, from = 1) => Array.from({ length: n }, (_, i) => `${SITE}${prefix}${from + i}`);

async function cron(): Promise<void> {
  await worker.harness.getWorker().scheduled({ cron: "17 * * * *", scheduledTime: new Date() });
}

interface MirrorStatus {
  url: string;
  state: string;
  lastError: string | null;
  counts: Record<string, number>;
  position: unknown;
}

async function mirrors(): Promise<MirrorStatus[]> {
  const res = await worker.harness.fetch(`${SITE}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { mirrors: MirrorStatus[] }).mirrors;
}

/** Live locs the Worker holds for SITE, and who brought them. */
async function live(): Promise<Map<string, string | null>> {
  const { results } = await worker.env.DB.prepare("SELECT loc, source FROM urls WHERE origin = ?1 AND deleted = 0 ORDER BY loc")
    .bind(SITE)
    .all<{ loc: string; source: string | null }>();
  return new Map(results.map((r) => [r.loc, r.source]));
}

async function served(): Promise<string[]> {
  const idx = await worker.harness.fetch(`${SITE}/sitemap.xml`);
  const out: string[] = [];
  for (const shard of locsOf(await idx.text())) out.push(...locsOf(await (await worker.harness.fetch(shard)).text()));
  return out.sort();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push({ path, ifNoneMatch: req.headers["if-none-match"] as string | undefined });
    const handler = routes.get(path);
    if (handler) handler(req, res);
    else res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  worker = await startWorker(
    {
      SITES: SITE,
      MIRROR_SITEMAPS: `${base}/cms/sitemap_index.xml ${base}/other.xml`,
      MIRROR_MAX_RECORDS_PER_RUN: "100",
      MIRROR_TIMEOUT_MS: "1500",
      MIRROR_MAX_BYTES: "200000",
      REGEN_SETTLE_SECONDS: "0",
    },
    { secrets: { ADMIN_TOKEN: TOKEN } },
  );
});

afterAll(async () => {
  await worker?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe("mirrors", () => {
  const first = pages("/a/", 30);
  const second = pages("/b/", 20);

  it("a mirrored sitemap index with .xml and .xml.gz sitemaps is served after the cron", async () => {
    routes.set("/cms/sitemap_index.xml", serve(index([`${base}/cms/pages.xml`, `${base}/cms/posts.xml.gz`, "https://elsewhere.example/x.xml"])));
    routes.set("/cms/pages.xml", serve(urlset([...first, "https://not-configured.example/x"])));
    routes.set("/cms/posts.xml.gz", serve(gzipSync(urlset(second)), "application/gzip"));
    routes.set("/other.xml", serve(urlset(pages("/other/", 3))));
    await cron();
    const status = await mirrors();
    expect(status[0]).toMatchObject({ state: "idle", lastError: null, counts: { records: 51, inserted: 50, rejected: 2, deleted: 0 } });
    const held = await live();
    expect([...held.keys()].filter((loc) => !loc.includes("/other/")).sort()).toEqual([...first, ...second].sort());
    expect(held.get(first[0]!)).toBe(`mirror:${base}/cms/sitemap_index.xml`);
    expect(await served()).toEqual([...first, ...second, ...pages("/other/", 3)].sort());
  });

  it("an unchanged sitemap costs one conditional request and no sync", async () => {
    const syncs = async () => (await worker.env.DB.prepare("SELECT COUNT(*) AS n FROM syncs").first<{ n: number }>())?.n ?? 0;
    const before = await syncs();
    requests.length = 0;
    await cron();
    const top = requests.filter((r) => r.path === "/cms/sitemap_index.xml");
    expect(top).toHaveLength(1);
    expect(top[0]!.ifNoneMatch).toMatch(/^"/);
    expect(requests.some((r) => r.path === "/cms/pages.xml")).toBe(false);
    expect(await syncs()).toBe(before);
  });

  it("follows the remote changes, removals included; the API's and other mirrors' records stay", async () => {
    const api = await worker.harness.fetch(`${SITE}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify([{ loc: `${SITE}/from-api` }]),
    });
    expect(api.status).toBe(200);
    const changed = [...first.slice(0, 25), `${SITE}/a/new`];
    routes.set("/cms/pages.xml", serve(urlset(changed, "2026-02-01")));
    // The index changed too (a CMS's index carries lastmod): a new pass.
    routes.set("/cms/sitemap_index.xml", serve(index([`${base}/cms/pages.xml`, `${base}/cms/posts.xml.gz`, `${base}/cms/extra.xml`])));
    routes.set("/cms/extra.xml", serve(urlset([])));
    await cron();
    expect((await mirrors())[0]).toMatchObject({ state: "idle", lastError: null, counts: { inserted: 1, updated: 25, unchanged: 20, deleted: 5 } });
    const held = await live();
    expect([...held.keys()].sort()).toEqual([...changed, ...second, ...pages("/other/", 3), `${SITE}/from-api`].sort());
    expect(held.get(`${SITE}/from-api`)).toBeNull();
    expect(await served()).toEqual([...held.keys()].sort());
  });

  it("failures keep the last good state and show in status: 404, 500, timeout, invalid XML, too big, the guard", async () => {
    const good = [...(await live()).keys()].sort();
    const cases: [string, Handler, RegExp][] = [
      ["404", (_req, res) => res.writeHead(404).end(), /answered 404/],
      ["500", (_req, res) => res.writeHead(500).end(), /answered 500/],
      ["timeout", () => undefined, /no complete answer within 1500 ms/],
      ["invalid XML", serve("<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'><url><loc>x</url></urlset>"), /not a readable sitemap/],
      ["too big", serve(urlset(first).replace("<url>", `<!-- ${"x".repeat(250_000)} --><url>`)), /larger than 200000 bytes/],
      ["guard", serve(urlset(first.slice(0, 2))), /would delete 44 of the 46 records the mirror brought in; MIRROR_MAX_DELETE allows 50%/],
    ];
    routes.set("/cms/sitemap_index.xml", serve(index([`${base}/cms/pages.xml`])));
    for (const [name, handler, reason] of cases) {
      routes.set("/cms/pages.xml", handler);
      await cron();
      const status = (await mirrors())[0]!;
      expect(status.state, name).toBe("failing");
      expect(status.lastError, name).toMatch(reason);
      expect(status.lastError, name).not.toContain("?");
      expect([...(await live()).keys()].sort(), name).toEqual(good);
    }
    const open = await worker.env.DB.prepare("SELECT COUNT(*) AS n FROM syncs WHERE state IN ('open', 'committing')").first<{ n: number }>();
    expect(open?.n).toBe(0);
  });

  it("a mirror larger than a run's budget converges over several runs", async () => {
    routes.set("/cms/sitemap_index.xml", (_req, res) => res.writeHead(404).end()); // the other mirror fails without reading anything
    const many = pages("/other/", 250);
    routes.set("/other.xml", serve(urlset(many)));
    await cron();
    const after1 = (await mirrors())[1]!;
    expect(after1).toMatchObject({ state: "in-progress", position: { document: 0, recordsDone: 100 } });
    await cron();
    await cron();
    const done = (await mirrors())[1]!;
    expect(done).toMatchObject({ state: "idle", lastError: null, counts: { records: 250, inserted: 247, unchanged: 3, deleted: 0 } });
    const held = [...(await live()).entries()].filter(([, source]) => source === `mirror:${base}/other.xml`).map(([loc]) => loc);
    expect(held.sort()).toEqual(many.sort());
  });
});
