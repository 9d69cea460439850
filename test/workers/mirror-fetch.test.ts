/**
 * Mirrors over https, in workerd with real D1: what test/node/mirror-e2e.test.ts cannot serve from
 * a plain-HTTP loopback server. The remote is faked at the fetch boundary (a `fetcher`, as the
 * notification suites do). A redirect from https to http is refused with the last good state kept;
 * an https index never leads to an http sitemap; a URL's token shows in no status, sync or log.
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Fetcher } from "../../src/mirror/fetch.ts";
import { runMirror } from "../../src/mirror/run.ts";
import { mirrorStatus } from "../../src/mirror/status.ts";
import { services } from "../../src/services.ts";
import { call, freshOrigin } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

type Answer = (request: { url: string; headers: Headers }) => Response;

/** A fake remote: answers by URL (query included), records what was asked. */
function remote(answers: Map<string, Answer>): { fetch: Fetcher; asked: string[] } {
  const asked: string[] = [];
  const fetch: Fetcher = async (input, init) => {
    asked.push(input);
    const answer = answers.get(input);
    return answer ? answer({ url: input, headers: new Headers(init.headers) }) : new Response("not found", { status: 404 });
  };
  return { fetch, asked };
}

const urlset = (locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${l}</loc></url>`).join("")}</urlset>`;
const index = (locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<sitemap><loc>${l}</loc></sitemap>`).join("")}</sitemapindex>`;
const xml =
  (body: string, etag?: string): Answer =>
  () =>
    new Response(body, { headers: { "Content-Type": "application/xml", ...(etag ? { ETag: etag } : {}) } });

function setup(mirrorUrl: (origin: string) => string, otherSites: readonly string[] = []) {
  const origin = freshOrigin("mirror");
  const url = mirrorUrl(origin);
  const sites = [origin, ...otherSites].join(" ");
  const env = { ...baseEnv, URL_SOURCE: "d1", SITES: sites, MIRROR_SITEMAPS: url, MIRROR_MAX_RECORDS_PER_RUN: "1000" } as Env;
  const s = services(env);
  const answers = new Map<string, Answer>();
  const fake = remote(answers);
  let last = 0;
  // Each call is a cron run of its own (a later time: what a pass read "in this run" is told by it).
  const run = async (records = 1000) => {
    const now = Math.max(Date.now(), last + 1);
    last = now;
    return runMirror({ config: s.config, sync: s.store.sync!, state: s.mirrors!, fetch: fake.fetch }, url, { records, requests: 1000 }, now);
  };
  const status = async () => (await mirrorStatus(s.mirrors, [url]))[0]!;
  const live = async () =>
    (await baseEnv.DB.prepare("SELECT loc FROM urls WHERE origin = ?1 AND deleted = 0 ORDER BY loc").bind(origin).all<{ loc: string }>()).results.map(
      (r) => r.loc,
    );
  return { origin, url, env, s, answers, fake, run, status, live };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("mirrors over https", () => {
  it("refuses a redirect from https to http: the mirror fails with the reason in status, the last good state stays", async () => {
    const m = setup((origin) => `${origin}/sitemap.xml`);
    const locs = [`${m.origin}/a`, `${m.origin}/b`];
    m.answers.set(m.url, xml(urlset(locs), '"v1"'));
    expect(await m.run()).toBe("synced");
    expect(await m.live()).toEqual(locs);

    const downgraded = m.url.replace("https:", "http:");
    m.answers.set(m.url, () => new Response(null, { status: 301, headers: { Location: downgraded } }));
    m.answers.set(downgraded, xml(urlset([`${m.origin}/a`])));
    expect(await m.run()).toBe("failed");
    const status = await m.status();
    expect(status.state).toBe("failing");
    expect(status.lastError).toBe(`${m.url} answered 301 to ${downgraded}: a redirect from https to http is refused`);
    expect(m.fake.asked).not.toContain(downgraded);
    expect(await m.live()).toEqual(locs);
  });

  it("follows a redirect from https to https on the same host", async () => {
    const m = setup((origin) => `${origin}/sitemap.xml`);
    m.answers.set(m.url, () => new Response(null, { status: 302, headers: { Location: "/moved.xml" } }));
    m.answers.set(`${m.origin}/moved.xml`, xml(urlset([`${m.origin}/moved`])));
    expect(await m.run()).toBe("synced");
    expect(await m.live()).toEqual([`${m.origin}/moved`]);
  });

  it("an https index never leads to an http sitemap: it is rejected and counted, never fetched", async () => {
    const m = setup((origin) => `${origin}/index.xml`);
    const plain = `${m.origin.replace("https:", "http:")}/plain.xml`;
    m.answers.set(m.url, xml(index([`${m.origin}/secure.xml`, plain])));
    m.answers.set(`${m.origin}/secure.xml`, xml(urlset([`${m.origin}/s`])));
    m.answers.set(plain, xml(urlset([`${m.origin}/p`])));
    expect(await m.run()).toBe("synced");
    expect(await m.live()).toEqual([`${m.origin}/s`]);
    expect((await m.status()).counts.rejected).toBe(1);
    expect(m.fake.asked).not.toContain(plain);
  });

  it("a token in the mirror's URL shows in no status, no sync source and no log", async () => {
    const token = "tok-3f9a7c2e1d";
    const m = setup((origin) => `${origin}/feed.xml?key=${token}`);
    const logged: string[] = [];
    for (const method of ["log", "error", "warn", "info"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => logged.push(args.map(String).join(" ")));
    }
    // A failure quoting the URL, from a part that does not know to hide it.
    const sync = m.s.store.sync!;
    const broken = { ...sync, start: sync.start.bind(sync), get: sync.get.bind(sync), abort: sync.abort.bind(sync), commit: sync.commit.bind(sync) };
    broken.upsert = async () => {
      throw new Error(`write failed for ${m.url}`);
    };
    m.answers.set(m.url, xml(urlset([`${m.origin}/a`])));
    // Not swallowed: the step fails (and its job retries); status says so without the token.
    const outcome = runMirror({ config: m.s.config, sync: broken, state: m.s.mirrors!, fetch: m.fake.fetch }, m.url, {
      records: 1000,
      requests: 1000,
    });
    await expect(outcome).rejects.toThrow("write failed for");
    expect((await m.status()).lastError).toBe("internal error (see the Worker's logs); the job retries it");
    expect(logged.join("\n")).toContain("write failed for");
    expect(logged.join("\n")).not.toContain(token);

    m.answers.set(m.url, () => new Response("gone", { status: 410 }));
    await m.run();
    expect((await m.status()).lastError).toBe(`${m.origin}/feed.xml?… answered 410`);

    m.answers.set(m.url, xml(urlset([`${m.origin}/a`, `${m.origin}/b`])));
    expect(await m.run()).toBe("synced");
    const status = await m.status();
    expect(status.url).toBe(`${m.origin}/feed.xml?…`);
    const { results } = await baseEnv.DB.prepare("SELECT id FROM syncs WHERE scope LIKE ?1").bind(`%${token}%`).all<{ id: string }>();
    expect(results.length).toBeGreaterThan(0);
    for (const { id } of results) {
      const res = await call(m.env, `${m.origin}/sitemap-admin/syncs/${id}`, { headers: AUTH });
      const body = await res.text();
      expect(res.status, body).toBe(200);
      expect(JSON.parse(body).source).toBe(`mirror:${m.origin}/feed.xml?…`);
      expect(body).not.toContain(token);
    }
    const admin = await call(m.env, `${m.origin}/sitemap-admin/status`, { headers: AUTH });
    expect(admin.status).toBe(200);
    expect(await admin.text()).not.toContain(token);
    expect(logged.join("\n")).not.toContain(token);
  });
});

describe("one site per mirror", () => {
  it("a mirror on a site's own origin writes that site only: records of another configured site are dropped and counted", async () => {
    const shop = freshOrigin("shop");
    const m = setup((origin) => `${origin}/sitemap.xml`, [shop]);
    m.answers.set(m.url, xml(urlset([`${shop}/planted`, `${m.origin}/own`])));
    expect(await m.run()).toBe("synced");
    expect(await m.live()).toEqual([`${m.origin}/own`]);
    expect(await m.status()).toMatchObject({ site: m.origin, counts: { records: 2, foreign: 1, inserted: 1 } });
    const planted = await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1").bind(shop).first<{ n: number }>();
    expect(planted?.n).toBe(0);

    // Nothing of its own site left: refused like an empty sync, nothing deleted.
    m.answers.set(m.url, xml(urlset([`${shop}/planted`])));
    expect(await m.run()).toBe("failed");
    expect((await m.status()).lastError).toMatch(/^the remote lists no record this mirror may write/);
    expect(await m.live()).toEqual([`${m.origin}/own`]);
  });
});

describe("the sitemaps of an unchanged index", () => {
  const syncsOf = async (url: string) =>
    (await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM syncs WHERE scope LIKE ?1").bind(`%${url}%`).first<{ n: number }>())?.n ?? 0;

  it("without validators, a sitemap is compared by its entries: the same is no pass, a change is followed", async () => {
    const m = setup((origin) => `${origin}/index.xml`);
    const child = `${m.origin}/pages.xml`;
    m.answers.set(m.url, xml(index([child]), '"index-1"'));
    m.answers.set(child, xml(urlset([`${m.origin}/a`, `${m.origin}/b`])));
    expect(await m.run()).toBe("synced");
    const passes = await syncsOf(m.url);

    // Same entries, formatted otherwise (the digest reads entries, not bytes or lines).
    m.answers.set(child, xml(urlset([`${m.origin}/a`, `${m.origin}/b`]).replaceAll("<url>", "\n  <url>")));
    expect(await m.run()).toBe("unchanged");
    expect(await syncsOf(m.url)).toBe(passes);

    m.answers.set(child, xml(urlset([`${m.origin}/a`, `${m.origin}/c`])));
    expect(await m.run()).toBe("synced");
    expect(await m.live()).toEqual([`${m.origin}/a`, `${m.origin}/c`]);
  });

  it("a sitemap answering 200 with the ETag it had is unchanged, without being read", async () => {
    const m = setup((origin) => `${origin}/index.xml`);
    const child = `${m.origin}/pages.xml`;
    m.answers.set(m.url, xml(index([child]), '"index-1"'));
    m.answers.set(child, xml(urlset([`${m.origin}/a`]), '"pages-1"'));
    expect(await m.run()).toBe("synced");
    let asked: string | null = null;
    m.answers.set(child, ({ headers }) => {
      asked = headers.get("If-None-Match");
      // A body that is not a sitemap at all: read, it would fail the mirror.
      return new Response("not xml", { headers: { ETag: '"pages-1"' } });
    });
    expect(await m.run()).toBe("unchanged");
    expect(asked).toBe('"pages-1"');
    expect((await m.status()).state).toBe("idle");
  });

  it("after a pass that failed at its commit (the guard), an unchanged index still fails: nothing is taken as done", async () => {
    const m = setup((origin) => `${origin}/index.xml`);
    const child = `${m.origin}/pages.xml`;
    const locs = Array.from({ length: 10 }, (_, i) => `${m.origin}/p${i}`);
    m.answers.set(m.url, xml(index([child]), '"index-1"'));
    m.answers.set(child, xml(urlset(locs), '"pages-1"'));
    expect(await m.run()).toBe("synced");
    m.answers.set(child, xml(urlset(locs.slice(0, 2)), '"pages-2"'));
    expect(await m.run()).toBe("failed");
    expect((await m.status()).lastError).toMatch(/would delete 8 of the 10/);
    expect(await m.run()).toBe("failed");
    expect((await m.status()).state).toBe("failing");
    expect(await m.live()).toEqual([...locs].sort());
  });
});

describe("a pass over an index that changes under it", () => {
  it("when the index lists other sitemaps before the commit, the pass reads it all again: a URL moved to the new sitemap stays", async () => {
    const m = setup((origin) => `${origin}/index.xml`);
    const [a, b, c] = ["a", "b", "c"].map((name) => `${m.origin}/${name}.xml`) as [string, string, string];
    const aLocs = [`${m.origin}/a1`, `${m.origin}/a2`, `${m.origin}/a3`];
    const bLocs = [`${m.origin}/b1`, `${m.origin}/b2`, `${m.origin}/b3`];
    m.answers.set(m.url, xml(index([a, b]), '"index-1"'));
    m.answers.set(a, xml(urlset(aLocs), '"a-1"'));
    m.answers.set(b, xml(urlset(bLocs), '"b-1"'));
    expect(await m.run()).toBe("synced");

    m.answers.set(a, xml(urlset(aLocs.slice().reverse()), '"a-2"')); // a new pass
    expect(await m.run(4)).toBe("in-progress"); // the index, a.xml, and b1
    expect((await m.status()).position).toEqual({ document: 2, recordsDone: 1, verifying: false });
    // b3, not yet read, moves to a sitemap the index lists from now on.
    m.answers.set(m.url, xml(index([a, b, c]), '"index-2"'));
    m.answers.set(b, xml(urlset(bLocs.slice(0, 2)), '"b-2"'));
    m.answers.set(c, xml(urlset([`${m.origin}/b3`]), '"c-1"'));
    expect(await m.run()).toBe("synced");
    expect((await m.status()).counts).toMatchObject({ restarts: 1, deleted: 0 });
    expect(await m.live()).toEqual([...aLocs, ...bLocs].sort());
  });
});
