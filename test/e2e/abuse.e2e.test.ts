/**
 * Hostile clients and heavy load against the real Worker under `wrangler dev` (126,000 URLs): every
 * hostile request gets its documented answer and changes nothing; 20 s of concurrent crawling
 * while a site owner imports serve nothing broken.
 */
import { type Server, createServer } from "node:http";
import autocannon from "autocannon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, adminStatus, putUrls, regenerateNow } from "./support/admin.ts";
import { Validator, crawl, sha256 } from "./support/crawler.ts";
import { DbMirror, recordsChecksum } from "./support/db.ts";
import { type DevServer, startDevServer } from "./support/dev-server.ts";
import { type SendOptions, type WireResponse, documentBytes, get, header, send, traffic } from "./support/http.ts";
import { peakRss } from "./support/memory.ts";
import { summary } from "./support/summary.ts";

let server: DevServer;
let db: DbMirror;
const validator = new Validator();
const check = (ok: boolean, message: string): void => expect(ok, message).toBe(true);
const totals = { requests: 0, errors: 0, documentsValidated: 0, urlsCompared: 0, recordsLost: 0, loadP99Ms: 0 };

/** The site's own robots.txt, as a hostile or broken origin serves it: 40 MB, streamed. */
let origin: Server;
const ORIGIN_ROBOTS_BYTES = 40 * 1024 * 1024;

beforeAll(async () => {
  origin = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    const line = Buffer.from("Disallow: /a-very-long-path-that-repeats-forever/\n".repeat(1024));
    let sent = 0;
    const more = (): void => {
      while (sent < ORIGIN_ROBOTS_BYTES) {
        sent += line.length;
        if (!res.write(line)) return void res.once("drain", more);
      }
      res.end();
    };
    res.on("error", () => undefined);
    more();
  });
  await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
  const robots = `http://127.0.0.1:${(origin.address() as { port: number }).port}/robots.txt`;
  server = await startDevServer({ vars: { ADMIN_TOKEN, REGEN_SETTLE_SECONDS: "0", ROBOTS_ORIGIN_URL: robots } });
  db = new DbMirror(server);
});
afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => origin?.close(resolve));
  summary.add({ ...totals, requests: totals.requests + traffic.requests });
});

interface Hostile {
  name: string;
  request: SendOptions;
  /** The documented answer (docs/reference.md "What it serves", docs/ingest.md, docs/caching.md). */
  status: number;
  /** For answers from the HTTP layer in front of the Worker (URL and header size limits): any of these. */
  statusIn?: number[];
  /** `error` code of the admin API's JSON error body. */
  error?: string;
  body?: RegExp;
}

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const json = { ...auth, "content-type": "application/json" };

function corpus(origin: string, port: number): Hostile[] {
  const put = (
    name: string,
    body: string | Buffer,
    status: number,
    error: string,
    headers: Record<string, string> = json,
    extra: Partial<SendOptions> = {},
  ): Hostile => ({
    name,
    request: { method: "PUT", path: "/sitemap-admin/urls", headers, body, ...extra },
    status,
    error,
  });
  const ten = 10 * 1024 * 1024;
  return [
    // Path traversal and odd paths: "anything else … 404" (docs/reference.md), never a file of the project.
    ...[
      "/../../etc/passwd",
      "/sitemap-..%2f..%2fwrangler.jsonc",
      "/sitemap-%2e%2e/%2e%2e/wrangler.jsonc",
      "/sitemap.xsl/../../wrangler.jsonc",
      "/sitemap-pages-1.xml%00.txt",
      "//sitemap.xml",
      "/sitemap-pages-0.xml",
      "/sitemap-PAGES-1.xml",
      "/sitemap-pages-999999999.xml",
      "/sitemap-pages-1.xml/..%2f..%2fpackage.json",
      "/.dev.vars",
      "/src/index.ts",
    ].map((path): Hostile => ({ name: `path ${path}`, request: { path }, status: 404, body: /^404 Not Found: / })),
    {
      name: "traversal inside the admin API, no token",
      request: { path: "/sitemap-admin/..%2f../sitemap-admin/status" },
      status: 401,
      error: "unauthorized",
    },
    { name: "admin path via dot segments, no token", request: { path: "/x/../sitemap-admin/status" }, status: 401, error: "unauthorized" },
    // Huge query strings: ignored by the Worker (never part of a cache key) up to the URL limit of the
    // HTTP layer in front of it, which refuses longer ones (414 URI Too Long / 431).
    { name: "query string of 8 KB", request: { path: `/sitemap.xml?${"a=1&".repeat(2_000)}` }, status: 200 },
    { name: "query string of 100 KB", request: { path: `/sitemap.xml?${"a".repeat(100_000)}` }, status: 414, statusIn: [400, 414, 431] },
    { name: "query string of 1 MB", request: { path: `/sitemap.xml?${"a".repeat(1_000_000)}` }, status: 431, statusIn: [400, 414, 431] },
    // Unknown hosts: 404 before any cache or store is touched; forwarding headers are never consulted.
    { name: "unknown host", request: { path: "/sitemap.xml", host: "evil.example" }, status: 404, body: /unknown site/ },
    { name: "IP literal as host", request: { path: "/sitemap.xml", host: `127.0.0.1:${port}` }, status: 404, body: /unknown site/ },
    { name: "site host, other port", request: { path: "/sitemap.xml", host: "localhost:1" }, status: 404, body: /unknown site/ },
    {
      name: "unknown host + X-Forwarded-Host of the site",
      request: { path: "/sitemap.xml", host: "evil.example", headers: { "x-forwarded-host": `localhost:${port}` } },
      status: 404,
    },
    { name: "empty host", request: { path: "/sitemap.xml", host: "" }, status: 404 },
    {
      name: "admin API on an unknown host, right token",
      request: {
        method: "PUT",
        path: "/sitemap-admin/urls",
        host: "evil.example",
        headers: json,
        body: JSON.stringify([{ loc: "https://evil.example/x" }]),
      },
      status: 404,
    },
    // Invalid If-None-Match / If-Modified-Since: malformed members match nothing → the full 200.
    ...["garbage", '"unterminated', "W/", `${'"x",'.repeat(2_000)}"y"`, "\u00ff\u00fe"].map(
      (value): Hostile => ({
        name: `If-None-Match ${JSON.stringify(value.slice(0, 20))}`,
        request: { path: "/sitemap-pages-1.xml", headers: { "if-none-match": value, "accept-encoding": "gzip" } },
        status: 200,
      }),
    ),
    { name: "If-Modified-Since: yesterday", request: { path: "/sitemap.xml", headers: { "if-modified-since": "yesterday" } }, status: 200 },
    { name: "If-None-Match: * (matches any current representation)", request: { path: "/sitemap.xml", headers: { "if-none-match": "*" } }, status: 304 },
    // Wrong tokens: 401 with nothing more.
    {
      name: "admin, no Authorization",
      request: { method: "PUT", path: "/sitemap-admin/urls", headers: { "content-type": "application/json" }, body: "[]" },
      status: 401,
      error: "unauthorized",
    },
    {
      name: "admin, wrong token",
      request: { method: "PUT", path: "/sitemap-admin/urls", headers: { "content-type": "application/json", authorization: "Bearer wrong" }, body: "[]" },
      status: 401,
      error: "unauthorized",
    },
    {
      name: "admin, token + suffix",
      request: { path: "/sitemap-admin/status", headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } },
      status: 401,
      error: "unauthorized",
    },
    {
      name: "admin, token prefix",
      request: { path: "/sitemap-admin/status", headers: { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` } },
      status: 401,
      error: "unauthorized",
    },
    {
      name: "admin, Basic scheme",
      request: { path: "/sitemap-admin/status", headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString("base64")}` } },
      status: 401,
      error: "unauthorized",
    },
    { name: "admin, token in the query", request: { path: `/sitemap-admin/status?token=${ADMIN_TOKEN}` }, status: 401, error: "unauthorized" },
    {
      name: "admin, wrong token, DELETE",
      request: {
        method: "DELETE",
        path: "/sitemap-admin/urls",
        headers: { "content-type": "application/json", authorization: "Bearer nope" },
        body: JSON.stringify([`${origin}/pages/x/1`]),
      },
      status: 401,
      error: "unauthorized",
    },
    // Oversized bodies: 413, nothing read beyond the limit, nothing written.
    // A declared Content-Length over the limit is refused before the body is read: only its first
    // bytes are sent, and the answer comes anyway.
    put("admin, Content-Length over 10 MiB", "[", 413, "payload_too_large", json, { declaredLength: ten + 1 }),
    // Just over the 1 MiB limit: the Worker answers as soon as it passes it and drops the rest, so a
    // much longer upload would meet a closed connection before its answer.
    put("admin, chunked body over the 1 MiB limit", `[${" ".repeat(1024 * 1024 + 16 * 1024)}]`, 413, "payload_too_large", json, { chunked: true }),
    put(
      "admin, 10,001 records",
      JSON.stringify(Array.from({ length: 10_001 }, (_, i) => ({ loc: `${origin}/pages/flood/${i}` }))),
      413,
      "payload_too_large",
    ),
    // Malformed bodies: 400 / 415 / 422, nothing written.
    put("admin, JSON cut short", `[{"loc": "${origin}/pages/a"`, 400, "invalid_body"),
    put("admin, not an array", `{"loc": "${origin}/pages/a"}`, 400, "invalid_body"),
    put("admin, empty body", "", 400, "invalid_body"),
    put(
      "admin, invalid UTF-8",
      Buffer.concat([Buffer.from(`[{"loc": "${origin}/pages/`), Buffer.from([0xff, 0xfe]), Buffer.from('"}]')]),
      400,
      "invalid_body",
    ),
    put("admin, NDJSON with a broken line", `{"loc":"${origin}/pages/n1"}\n{nope\n`, 400, "invalid_body", {
      ...auth,
      "content-type": "application/x-ndjson",
    }),
    put("admin, text/plain", "[]", 415, "unsupported_media_type", { ...auth, "content-type": "text/plain" }),
    put("admin, no Content-Type", "[]", 415, "unsupported_media_type", auth),
    put("admin, charset latin1", "[]", 415, "unsupported_media_type", { ...auth, "content-type": "application/json; charset=iso-8859-1" }),
    // Refused unparsed: a record is a few levels deep (src/admin/record-shape.ts).
    put("admin, 100,000 nested arrays", `[${"[".repeat(100_000)}${"]".repeat(100_000)}]`, 400, "invalid_body"),
    put("admin, 100,000 nested objects", `[${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}]`, 400, "invalid_body"),
    put(
      "admin, one good record among hostile ones",
      JSON.stringify([
        { loc: `${origin}/pages/fine/1` },
        { loc: "javascript:alert(1)" },
        { loc: "https://evil.example/elsewhere" },
        { loc: `${origin}/pages/x`, priority: 7 },
        { loc: `${origin}/pages/ctl\u0001` },
        { loc: `${origin}/pages/fine/1` },
        { loc: `${origin}/pages/proto`, ["__proto__"]: { admin: true } },
        { loc: `${origin}/pages/lastmod`, lastmod: "2024-13-45" },
        { loc: `${origin}/${"a".repeat(5_000)}` },
        { loc: `${origin}/pages/<script>`, section: "../../etc" },
      ]),
      422,
      "validation_failed",
    ),
    {
      name: "admin DELETE of non-strings",
      request: { method: "DELETE", path: "/sitemap-admin/urls", headers: json, body: JSON.stringify([`${origin}/pages/x/1`, 42, null]) },
      status: 422,
      error: "validation_failed",
    },
    { name: "admin GET without loc", request: { path: "/sitemap-admin/urls", headers: auth }, status: 400, error: "invalid_query" },
    {
      // Not found here, as another tenant's loc is (issue 50: no 422 that tells a tenant's loc apart).
      name: "admin GET of a foreign loc",
      request: { path: "/sitemap-admin/urls?loc=https%3A%2F%2Fevil.example%2F", headers: auth },
      status: 404,
      error: "not_found",
    },
    // Bad methods: no such route → "anything else … 404" (docs/reference.md); an unknown method is refused by
    // the HTTP layer (501).
    ...[
      ["POST", "/sitemap.xml"],
      ["PUT", "/sitemap-pages-1.xml"],
      ["DELETE", "/sitemap-pages-1.xml"],
      ["PATCH", "/sitemap-products-1.xml.gz"],
      ["OPTIONS", "/sitemap.xml"],
      ["TRACE", "/sitemap.xml"],
      ["POST", "/robots.txt"],
      ["POST", "/sitemap-admin/urls"],
      ["PATCH", "/sitemap-admin/urls"],
      ["GET", "/sitemap-admin/regenerate"],
      ["DELETE", "/sitemap-admin/status"],
    ].map(([method, path]): Hostile => ({ name: `${method} ${path}`, request: { method: method!, path: path!, headers: json, body: "[]" }, status: 404 })),
    { name: "unknown method", request: { method: "FOO", path: "/sitemap.xml" }, status: 501, statusIn: [400, 405, 501] },
  ];
}

describe("hostile bodies cost bounded memory (workerd's resident memory sampled while each runs)", () => {
  const MiB = 1024 * 1024;
  /**
   * An isolate has 128 MB; a request must stay well below it whatever its body. Measured here, the
   * largest costs ~57 MiB (the valid batch of small images), which includes local D1's copy of it.
   */
  const BOUND = 80 * MiB;
  /** The default ADMIN_MAX_BYTES: every body below is as large as it may be. */
  const LIMIT = MiB;
  const put = (type: string, body: string): SendOptions => {
    expect(body.length, "a body at the limit").toBeLessThanOrEqual(LIMIT);
    expect(body.length, "a body at the limit").toBeGreaterThan(0.9 * LIMIT);
    return { method: "PUT", path: "/sitemap-admin/urls", headers: { ...auth, "content-type": type }, body };
  };
  const badImage = JSON.stringify({ loc: "not a url", x: 1 });
  const refused = (res: WireResponse, error: string, message: RegExp): void => {
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString())).toMatchObject({ error, message: expect.stringMatching(message) });
  };
  // First in the file, and the costliest first: a heap already grown by earlier requests would hide a cost.
  const cases: { name: string; request: () => SendOptions; check: (res: WireResponse) => void }[] = [
    {
      name: "5,000 valid records of 9 small images each, written",
      request: () => {
        const images = Array.from({ length: 9 }, (_, k) => `"http://a.b/${k}"`).join(",");
        const record = (i: number) => `{"loc":"${server.origin}/pages/small-images/${i}","images":[${images}]}`;
        return put("application/json", `[${Array.from({ length: 5_000 }, (_, i) => record(i)).join(",")}]`);
      },
      check: (res) => {
        expect(res.status, res.body.toString().slice(0, 300)).toBe(200);
        expect(JSON.parse(res.body.toString())).toMatchObject({ received: 5_000 });
      },
    },
    {
      name: "422 flood: 100 records × 400 bad images (80,000 issues)",
      request: () =>
        put(
          "application/x-ndjson",
          Array.from({ length: 100 }, (_, i) => `{"loc":"${server.origin}/flood/${i}","images":[${Array(400).fill(badImage).join(",")}]}`).join("\n"),
        ),
      check: (res) => {
        expect(res.status).toBe(422);
        const body = JSON.parse(res.body.toString()) as { issues: unknown[]; issueCount: number };
        expect(body.issues.length).toBeLessThanOrEqual(1000);
        expect(body.issueCount).toBeGreaterThanOrEqual(80_000);
      },
    },
    {
      name: "one record nesting arrays 500,000 deep",
      request: () => put("application/json", `[{"loc":"${server.origin}/deep","x":${"[".repeat(500_000)}${"]".repeat(500_000)}}]`),
      check: (res) => refused(res, "invalid_body", /^line 1: record 0 nests deeper than 16 levels/),
    },
    {
      name: "one NDJSON record of 340,000 empty objects",
      request: () => put("application/x-ndjson", `{"loc":"${server.origin}/wide","x":[${"{},".repeat(340_000)}{}]}`),
      check: (res) => refused(res, "invalid_body", /^line 1: record has more than 50,000 JSON values/),
    },
    {
      name: "4,400 valid records with lastmod and 3 images, written",
      request: () => {
        const images = (i: number) => Array.from({ length: 3 }, (_, k) => `"${server.origin}/img/${i}/${k}.jpg"`).join(",");
        const record = (i: number) => `{"loc":"${server.origin}/pages/ordinary/${i}","lastmod":"2024-01-01","changefreq":"daily","images":[${images(i)}]}`;
        return put("application/x-ndjson", Array.from({ length: 4_400 }, (_, i) => record(i)).join("\n"));
      },
      check: (res) => {
        expect(res.status, res.body.toString().slice(0, 300)).toBe(200);
        expect(JSON.parse(res.body.toString())).toMatchObject({ received: 4_400 });
      },
    },
    {
      name: "one NDJSON line of 1 MiB",
      request: () => put("application/x-ndjson", `{"loc":"${server.origin}/${"a".repeat(LIMIT - 100)}"}`),
      check: (res) => {
        expect(res.status).toBe(422);
        expect(res.body.length).toBeLessThan(64 * 1024);
      },
    },
    {
      name: "an origin robots.txt of 40 MB",
      request: () => ({ path: "/robots.txt" }),
      check: (res) => {
        expect(res.status).toBe(200);
        expect(res.body.length).toBeLessThan(600 * 1024);
        expect(res.body.toString()).toMatch(/^Sitemap: /m);
      },
    },
  ];

  it.each(cases)("$name", async ({ request, check: checkAnswer, name }) => {
    const group = server.group();
    expect(group).toBeDefined();
    // A written batch queued its site's regeneration (docs/jobs.md; the first is a site pass over
    // every row): it runs in the same workerd, so it is let finish first, to measure only this body.
    const background = await peakRss(group!, () => server.jobsDone());
    console.log(`memory: background jobs before ${name}: ${(background.before / MiB).toFixed(0)} → peak ${(background.peak / MiB).toFixed(0)} MiB`);
    const options = request();
    const { result, before, peak } = await peakRss(group!, () => send(server.port, { ...options, timeoutMs: 120_000 }));
    const growth = peak - before;
    console.log(
      `memory: ${name}: workerd resident ${(before / MiB).toFixed(0)} → peak ${(peak / MiB).toFixed(0)} MiB (+${(growth / MiB).toFixed(1)} MiB)`,
    );
    checkAnswer(result);
    expect(growth, `${name}: +${(growth / MiB).toFixed(1)} MiB`).toBeLessThan(BOUND);
  });
});

describe("hostile requests", () => {
  it("each get their documented answer; the Worker stays up and the data set is unchanged", async () => {
    // A cron run first, so snapshots and the cache are in play as well.
    expect((await server.scheduled()).status).toBe(200);
    const before = await recordsChecksum(server);
    expect(before.rows).toBeGreaterThanOrEqual(120_000);
    const indexBefore = await get(server.port, "/sitemap.xml", { "accept-encoding": "gzip" });

    const answers: { name: string; got: number; want: number | number[] }[] = [];
    for (const hostile of corpus(server.origin, server.port)) {
      const res: WireResponse = await send(server.port, hostile.request);
      const ok = hostile.statusIn ? hostile.statusIn.includes(res.status) : res.status === hostile.status;
      answers.push({ name: hostile.name, got: res.status, want: hostile.statusIn ?? hostile.status });
      expect(ok, `${hostile.name}: ${res.status} ${res.body.subarray(0, 200).toString()}`).toBe(true);
      expect(res.complete, `${hostile.name}: broken transfer`).toBe(true);
      const text = res.body.toString();
      if (hostile.error) expect((JSON.parse(text) as { error: string }).error, hostile.name).toBe(hostile.error);
      if (hostile.body) expect(text, hostile.name).toMatch(hostile.body);
      if (res.status === 401) expect(header(res, "www-authenticate"), hostile.name).toBe('Bearer realm="sitemap-admin"');
      // Nothing of the project's files or internals ever comes back.
      expect(text, hostile.name).not.toMatch(/d1_databases|"devDependencies"|ADMIN_TOKEN=|\bat .+\.ts:\d+|root:x:0:0/);
      if (res.status === 200) {
        const xml = documentBytes(res);
        const kind = hostile.request.path.startsWith("/sitemap.xml") ? "siteindex" : "urlset";
        expect(await validator.check(xml, kind), hostile.name).toEqual([]);
        totals.documentsValidated++;
      }
    }
    console.log(`hostile requests: ${answers.map((a) => `${a.got}`).join(" ")}`);

    // Still up, still the same documents, and not one record changed.
    const indexAfter = await get(server.port, "/sitemap.xml", { "accept-encoding": "gzip" });
    expect([indexAfter.status, header(indexAfter, "etag")]).toEqual([200, header(indexBefore, "etag")]);
    expect(documentBytes(indexAfter).equals(documentBytes(indexBefore))).toBe(true);
    const after = await recordsChecksum(server);
    expect(after).toEqual(before);
    expect(server.logs()).not.toMatch(/unhandled error/);
    totals.urlsCompared += after.rows;
  });
});

describe("load", () => {
  it("20 s of concurrent crawling while a batch is imported: 0 errors, 0 invalid documents", async () => {
    const origin = server.origin;
    // The cached shard: read once, served from the edge cache from then on.
    await get(server.port, "/sitemap-products-1.xml", { "accept-encoding": "gzip" });
    const warm = await get(server.port, "/sitemap-products-1.xml", { "accept-encoding": "gzip" });
    expect(header(warm, "x-sitemap-source")).toBe("cache");

    const host = `localhost:${server.port}`;
    const gz = { host, "accept-encoding": "gzip" };
    let running = true;

    // A site owner imports a batch of 5,000 records meanwhile, the way the import CLI sends it (requests
    // of 500); each write queues its site's regeneration, and the owner asks for one halfway and at
    // the end (202, queued): the shards it lands in get new versions while the load runs, so their
    // next reads are cold again (snapshot, then cache).
    const imported: string[] = [];
    const sections = ["pages", "products", "blog"];
    const importer = (async () => {
      await new Promise((r) => setTimeout(r, 2_000));
      for (let batch = 0; batch < 10 && running; batch++) {
        const records = Array.from({ length: 500 }, (_, i) => ({
          loc: `${origin}/${sections[batch % 3]}/load-${batch}/${i}?a=1&b=${i}`,
          section: sections[batch % 3],
          lastmod: "2026-11-22T08:00:00Z",
        }));
        const put = await putUrls(server.port, records);
        expect(put.status, JSON.stringify(put.json)).toBe(200);
        imported.push(...records.map((r) => r.loc));
        if (batch % 5 === 4) {
          const regen = await regenerateNow(server.port);
          expect(regen.status, JSON.stringify(regen.json)).toBe(202);
          expect(regen.json).toMatchObject({ queued: true, site: origin });
        }
        await new Promise((r) => setTimeout(r, 1_000));
      }
      return imported.length;
    })();

    // A crawler samples what is served during the load: every document is kept and judged afterwards.
    const samples = new Map<string, { path: string; kind: "urlset" | "siteindex"; body: Buffer }>();
    let sampled = 0;
    const sampleTargets: { path: string; headers: Record<string, string> }[] = [
      { path: "/sitemap.xml", headers: { "accept-encoding": "gzip" } },
      { path: "/sitemap-products-1.xml", headers: { "accept-encoding": "gzip" } },
      { path: "/sitemap-products-2.xml", headers: { "accept-encoding": "identity" } },
      { path: "/sitemap-pages-1.xml.gz", headers: {} },
      { path: "/sitemap-blog-1.xml", headers: { "accept-encoding": "gzip" } },
      { path: "/sitemap-news.xml", headers: { "accept-encoding": "gzip" } },
    ];
    const sources = new Map<string, number>();
    const sampler = (async () => {
      for (let i = 0; running; i++) {
        const target = sampleTargets[i % sampleTargets.length]!;
        const res = await get(server.port, target.path, target.headers);
        sampled++;
        const source = header(res, "x-sitemap-source") ?? "?";
        sources.set(source, (sources.get(source) ?? 0) + 1);
        expect(res.status === 200 && res.complete, `${target.path} during the load: ${res.status} ${res.error ?? ""}`).toBe(true);
        const body = documentBytes(res);
        samples.set(sha256(body), { path: target.path, kind: target.path === "/sitemap.xml" ? "siteindex" : "urlset", body });
      }
    })();

    let result: Awaited<ReturnType<typeof autocannon>>;
    let importedCount: number;
    try {
      result = await autocannon({
        url: `http://127.0.0.1:${server.port}`,
        connections: 8,
        duration: 20,
        timeout: 30,
        requests: [
          { path: "/sitemap.xml", headers: gz },
          { path: "/sitemap-products-1.xml", headers: gz }, // cached
          { path: "/sitemap-products-2.xml", headers: { host, "accept-encoding": "identity" } }, // cold after each publish
          { path: "/sitemap-pages-1.xml.gz", headers: { host } }, // cold after each publish
          { path: "/sitemap-blog-1.xml", headers: gz }, // cold after each publish
          { path: "/sitemap-news.xml", headers: gz },
        ],
      });
    } finally {
      running = false;
      importedCount = await importer;
      await sampler;
    }

    const p99 = result.latency.p99;
    console.log(
      `load: ${result.requests.total} requests in ${result.duration} s (${Math.round(result.requests.average)} req/s), latency p50 ${result.latency.p50} ms, ` +
        `p99 ${p99} ms, max ${result.latency.max} ms; errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}; ` +
        `${sampled} documents sampled (${samples.size} distinct; from ${[...sources].map(([k, v]) => `${k} ${v}`).join(", ")}), ${importedCount} records imported and published`,
    );
    totals.requests += result.requests.total;
    totals.errors += result.errors + result.timeouts + result.non2xx;
    totals.loadP99Ms = p99;
    expect({ errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx }).toEqual({ errors: 0, timeouts: 0, non2xx: 0 });
    expect(result.requests.total).toBeGreaterThan(0);
    expect(importedCount).toBe(5_000);
    for (const { path, kind, body } of samples.values()) expect(await validator.check(body, kind), path).toEqual([]);
    totals.documentsValidated += sampled;

    // Nothing imported during the load is lost: once the queued regenerations ran, a crawler finds every record.
    await server.jobsDone();
    const status = await adminStatus(server.port);
    expect(status.json.runs[0]).toMatchObject({ ok: true, converged: true });
    expect(status.json.manifest!.withoutSnapshot).toEqual([]);
    const [crawled, records] = await Promise.all([crawl(server.port, origin, check, validator), db.records()]);
    const served = new Set(crawled.shardUrls);
    expect(crawled.shardUrls.length).toBe(served.size);
    const lost = records.filter((r) => !served.has(r.loc)).length + imported.filter((loc) => !served.has(loc)).length;
    totals.recordsLost += lost;
    expect(lost).toBe(0);
    expect(served.size).toBe(records.length);
    totals.documentsValidated += crawled.documentsValidated;
    totals.urlsCompared += records.length;
  });
});
