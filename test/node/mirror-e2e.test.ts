/**
 * Mirrors end to end: the real Worker (wrangler's test harness, real local D1/KV) with
 * MIRROR_SITEMAPS pointing at a real node:http server on 127.0.0.1 run by this test, the cron
 * trigger run as the platform runs it. What the CMS's sitemap says is what the Worker serves,
 * removals included; an unchanged sitemap costs conditional requests only, and a sitemap that
 * changed under an unchanged index is still followed; a pass that spans runs never deletes what
 * the remote lists, even when the remote changed between runs; a mirror writes its one site only;
 * failures keep the last good state and show in /sitemap-admin/status; a token in a mirror's URL
 * is shown nowhere. (https-only rules, and logs: test/workers/mirror-fetch.test.ts.)
 */
import { createHash } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locsOf } from "../shared/locs.ts";
import { TOKEN } from "./import-helpers.ts";
import { cronAndJobs, oneStepEach } from "./support/jobs.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

const SITE = "http://cms.example"; // http: the harness serves plain HTTP, and the site is the request origin
/** Another site the deployment serves: no mirror of SITE may write it. */
const SHOP = "http://shop.example";
const TOKEN_QUERY = "key=t0ken-5ecret-9f3b";

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

/**
 * One bounded step of every mirror (MIRROR_MAX_RECORDS_PER_RUN each), as one invocation of its job
 * does it, and the regeneration a finished pass goes on to. On the platform a mirror's job continues
 * by itself until its pass is committed (one trigger: "one cron trigger takes a mirror larger than
 * a step all the way" below); here the steps are taken one at a time, so that a pass can be
 * observed, and the remote changed, between them.
 */
async function cron(): Promise<void> {
  await oneStepEach(worker.env, "mirror", mirrorUrls());
}

const mirrorUrls = () => [
  `${base}/cms/sitemap_index.xml`,
  `${base}/other.xml`,
  `${base}/big.xml`,
  `${base}/feed.xml?${TOKEN_QUERY}`,
  `${base}/shop/index.xml`,
  `${base}/repair.xml`,
];

interface MirrorStatus {
  url: string;
  site: string | null;
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

/** Live locs the Worker holds for a site, and who brought them. */
async function live(site = SITE): Promise<Map<string, string | null>> {
  const { results } = await worker.env.DB.prepare("SELECT loc, source FROM urls WHERE origin = ?1 AND deleted = 0 ORDER BY loc")
    .bind(site)
    .all<{ loc: string; source: string | null }>();
  return new Map(results.map((r) => [r.loc, r.source]));
}

/** Of `locs`, those the Worker holds as tombstones. */
async function tombstoned(locs: readonly string[]): Promise<string[]> {
  const { results } = await worker.env.DB.prepare("SELECT loc FROM urls WHERE origin = ?1 AND deleted = 1").bind(SITE).all<{ loc: string }>();
  const wanted = new Set(locs);
  return results.map((r) => r.loc).filter((loc) => wanted.has(loc));
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
      SITES: `${SITE} ${SHOP}`,
      MIRROR_SITEMAPS: mirrorUrls().join(" "),
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

  it("a mirrored sitemap index with .xml and .xml.gz sitemaps is served after the cron; records of another site are not written", async () => {
    routes.set("/cms/sitemap_index.xml", serve(index([`${base}/cms/pages.xml`, `${base}/cms/posts.xml.gz`, "https://elsewhere.example/x.xml"])));
    routes.set("/cms/pages.xml", serve(urlset([...first, "https://not-configured.example/x", `${SHOP}/planted`])));
    routes.set("/cms/posts.xml.gz", serve(gzipSync(urlset(second)), "application/gzip"));
    routes.set("/other.xml", serve(urlset(pages("/other/", 3))));
    await cron();
    const status = await mirrors();
    expect(status[0]).toMatchObject({
      site: SITE,
      state: "idle",
      lastError: null,
      counts: { records: 52, inserted: 50, rejected: 2, foreign: 1, deleted: 0 },
    });
    expect([...(await live(SHOP)).keys()]).toEqual([]);
    const held = await live();
    expect([...held.keys()].filter((loc) => !loc.includes("/other/")).sort()).toEqual([...first, ...second].sort());
    expect(held.get(first[0]!)).toBe(`mirror:${base}/cms/sitemap_index.xml`);
    expect(await served()).toEqual([...first, ...second, ...pages("/other/", 3)].sort());
  });

  const syncs = async () => (await worker.env.DB.prepare("SELECT COUNT(*) AS n FROM syncs").first<{ n: number }>())?.n ?? 0;

  it("an unchanged sitemap index costs one conditional request per sitemap and no sync", async () => {
    const before = await syncs();
    requests.length = 0;
    await cron();
    for (const path of ["/cms/sitemap_index.xml", "/cms/pages.xml", "/cms/posts.xml.gz", "/other.xml"]) {
      const asked = requests.filter((r) => r.path === path);
      expect(asked, path).toHaveLength(1);
      expect(asked[0]!.ifNoneMatch, path).toMatch(/^"/);
    }
    expect(await syncs()).toBe(before);
    expect((await mirrors())[0]).toMatchObject({ state: "idle", lastError: null });
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

  it("a sitemap that changed under an index answering 304 is followed; the unchanged ones are asked conditionally", async () => {
    const posts = [...second.slice(1), `${SITE}/b/new`];
    routes.set("/cms/posts.xml.gz", serve(gzipSync(urlset(posts)), "application/gzip"));
    requests.length = 0;
    await cron();
    const top = requests.filter((r) => r.path === "/cms/sitemap_index.xml");
    expect(top[0]?.ifNoneMatch).toMatch(/^"/); // asked conditionally (a 304), then read again for the pass
    expect(requests.find((r) => r.path === "/cms/pages.xml")?.ifNoneMatch).toMatch(/^"/);
    expect((await mirrors())[0]).toMatchObject({ state: "idle", lastError: null, counts: { inserted: 1, deleted: 1 } });
    const held = await live();
    expect(held.has(`${SITE}/b/new`)).toBe(true);
    expect(held.has(second[0]!)).toBe(false);
    expect(await served()).toEqual([...held.keys()].sort());
    // And then it is unchanged again: no new sync.
    const before = await syncs();
    await cron();
    expect(await syncs()).toBe(before);
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

  it("one cron trigger takes a mirror larger than a step all the way: its job continues, then the regeneration publishes it", async () => {
    const many = [...pages("/other/", 250), ...pages("/trigger/", 230)];
    routes.set("/other.xml", serve(urlset(many)));
    const before = requests.filter((r) => r.path === "/other.xml").length;
    await cronAndJobs(worker.harness, worker.env.DB);
    expect((await mirrors())[1]).toMatchObject({ state: "idle", lastError: null, counts: { records: 480, inserted: 230 } });
    // Five bounded steps (100 records each) from the one trigger, each its own invocation.
    expect(requests.filter((r) => r.path === "/other.xml").length - before).toBeGreaterThanOrEqual(5);
    const servedNow = new Set(await served());
    expect(many.filter((loc) => !servedNow.has(loc))).toEqual([]);
    // Back to what the next tests expect (an unchanged other.xml).
    routes.set("/other.xml", serve(urlset(pages("/other/", 250))));
    await cronAndJobs(worker.harness, worker.env.DB);
    expect((await mirrors())[1]).toMatchObject({ state: "idle", lastError: null, counts: { deleted: 230 } });
  });

  it("a pass resumed over a remote that changed between runs deletes nothing the remote lists (151 URLs, 100 a run)", async () => {
    // The other mirrors cost nothing: the index fails without reading, other.xml answers 304.
    const big = pages("/big/", 151);
    routes.set("/big.xml", serve(urlset(big)));
    await cron();
    expect((await mirrors())[2]).toMatchObject({ state: "in-progress", position: { document: 0, recordsDone: 100 } });

    // The remote drops its first URL: what the next run would skip is no longer what was sent.
    const listed = big.slice(1);
    routes.set("/big.xml", serve(urlset(listed)));
    // Run until the resumed pass commits (here: one run reads big.xml again from its start, 100
    // records; the next the rest, then the commit).
    let runs = 0;
    do {
      await cron();
      runs += 1;
    } while ((await mirrors())[2]!.state === "in-progress" && runs < 4);
    expect((await mirrors())[2]).toMatchObject({ state: "idle", lastError: null });
    // Right after the resumed pass commits: everything the remote lists is held and served, nothing of it tombstoned.
    expect(await tombstoned(listed)).toEqual([]);
    const held = await live();
    expect(listed.filter((loc) => !held.has(loc))).toEqual([]);
    const servedNow = new Set(await served());
    expect(listed.filter((loc) => !servedNow.has(loc))).toEqual([]);
    expect(runs).toBe(2);
    expect((await mirrors())[2]).toMatchObject({ counts: { restarts: 1, records: 250, deleted: 0 } });

    // What only the old version listed goes with the next pass, which the changed document forces.
    await cron();
    await cron();
    const next = (await mirrors())[2]!;
    expect(next).toMatchObject({ state: "idle", lastError: null, counts: { restarts: 0, deleted: 1, records: 150 } });
    expect(await tombstoned(listed)).toEqual([]);
    expect((await live()).has(big[0]!)).toBe(false);
    expect([...(await live()).entries()].filter(([, source]) => source === `mirror:${base}/big.xml`).map(([loc]) => loc)).toEqual([...listed].sort());
  });

  it("a change past the part already sent needs no restart: the rest is read from the new version", async () => {
    const before = pages("/big/", 150, 2);
    const listed = [...before.slice(0, -1), `${SITE}/big/tail`]; // the last URL replaced
    await cron(); // unchanged: 304
    routes.set("/big.xml", serve(urlset(before, "2026-03-01"))); // a new version: a new pass
    await cron();
    expect((await mirrors())[2]).toMatchObject({ state: "in-progress", position: { document: 0, recordsDone: 100 } });
    routes.set("/big.xml", serve(urlset(listed, "2026-03-01")));
    await cron();
    expect((await mirrors())[2]).toMatchObject({ state: "idle", lastError: null, counts: { restarts: 0, records: 150, inserted: 1, deleted: 1 } });
    expect(await tombstoned(listed)).toEqual([]);
    const held = [...(await live()).entries()].filter(([, source]) => source === `mirror:${base}/big.xml`).map(([loc]) => loc);
    expect(held.sort()).toEqual([...listed].sort());
    routes.delete("/big.xml"); // from here on it fails without reading: the next test has the budget
  });

  it("a URL that moved, mid-pass, from a sitemap not yet read to one already read is not deleted", async () => {
    const a = pages("/m/a", 60);
    const b = pages("/m/b", 80);
    routes.set("/shop/index.xml", serve(index([`${base}/shop/a.xml`, `${base}/shop/b.xml`])));
    routes.set("/shop/a.xml", serve(urlset(a)));
    routes.set("/shop/b.xml", serve(urlset(b)));
    await cron();
    await cron();
    expect((await mirrors())[4]).toMatchObject({ state: "idle", lastError: null, counts: { inserted: 140 } });

    routes.set("/shop/a.xml", serve(urlset(a, "2026-04-01"))); // a new pass (the index itself unchanged)
    await cron(); // the index, a.xml, and 40 of b.xml
    expect((await mirrors())[4]).toMatchObject({ state: "in-progress", position: { document: 2, recordsDone: 40 } });
    const moved = b[49]!; // not yet read: it moves to a.xml, already read
    routes.set("/shop/a.xml", serve(urlset([...a, moved], "2026-04-01")));
    routes.set("/shop/b.xml", serve(urlset(b.filter((loc) => loc !== moved))));
    await cron(); // the rest of b.xml; then a.xml, changed since it was read, is read again; then the commit
    expect((await mirrors())[4]).toMatchObject({ state: "idle", lastError: null, counts: { restarts: 1, deleted: 0 } });
    expect(await tombstoned([...a, ...b])).toEqual([]);
    expect(new Set(await served()).has(moved)).toBe(true);
  });

  it("a token in a mirror's URL shows neither in status nor in the syncs' source", async () => {
    const token = TOKEN_QUERY.split("=")[1]!;
    const admin = (path: string) => worker.harness.fetch(`${SITE}/sitemap-admin${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    // Failing first (no route yet): the reason names the URL without its query.
    let status = (await mirrors())[3]!;
    expect(status).toMatchObject({ url: `${base}/feed.xml?…`, state: "failing", lastError: `${base}/feed.xml?… answered 404` });
    routes.set("/feed.xml", serve(urlset(pages("/feed/", 150))));
    await cron(); // stops mid-pass: the sync is open and listed in status
    const during = await (await admin("/status")).text();
    expect((JSON.parse(during) as { syncs: { source: string | null }[] }).syncs.map((sync) => sync.source)).toContain(`mirror:${base}/feed.xml?…`);
    expect(during).not.toContain(token);
    // The run's records are shared with the shop's mirror, which starts a pass too (the last one saw its a.xml change).
    for (let runs = 0; runs < 3 && (await mirrors())[3]!.state === "in-progress"; runs++) await cron();
    status = (await mirrors())[3]!;
    expect(status).toMatchObject({ url: `${base}/feed.xml?…`, state: "idle", lastError: null, counts: { inserted: 150 } });
    const { results } = await worker.env.DB.prepare("SELECT id FROM syncs WHERE scope LIKE ?1").bind(`%feed.xml%`).all<{ id: string }>();
    expect(results.length).toBeGreaterThan(0);
    for (const { id } of results) {
      const body = await (await admin(`/syncs/${id}`)).text();
      expect(JSON.parse(body)).toMatchObject({ source: `mirror:${base}/feed.xml?…` });
      expect(body).not.toContain(token);
    }
    expect(await (await admin("/status")).text()).not.toContain(token);
  });
  it("a mirror of 100 URLs re-listed with 10 future lastmods: all 100 still served after the pass, 10 repaired in status", async () => {
    const locs = pages("/r/", 100);
    const untilIdle = async () => {
      for (let runs = 0; runs < 5; runs++) {
        await cron();
        if ((await mirrors())[5]!.state === "idle") return;
      }
    };
    routes.set("/repair.xml", serve(urlset(locs)));
    await untilIdle();
    expect((await mirrors())[5]).toMatchObject({ state: "idle", counts: { inserted: 100 } });
    const future = new Set(locs.slice(0, 10));
    const body = urlset(locs).replace(/<url><loc>([^<]+)<\/loc><lastmod>2026-01-01<\/lastmod>/g, (whole, loc: string) =>
      future.has(loc) ? `<url><loc>${loc}</loc><lastmod>2099-01-01</lastmod>` : whole,
    );
    expect(body.match(/2099-01-01/g)).toHaveLength(10);
    routes.set("/repair.xml", serve(body));
    await untilIdle();
    expect((await mirrors())[5]).toMatchObject({ state: "idle", lastError: null, counts: { records: 100, repaired: 10, updated: 10, deleted: 0 } });
    expect(await tombstoned(locs)).toEqual([]);
    const servedNow = new Set(await served());
    expect(locs.filter((loc) => !servedNow.has(loc))).toEqual([]);
  });
});
