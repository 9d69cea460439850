/**
 * GET /robots.txt when the origin has a file: kept byte for byte with the Sitemap: lines added, cut
 * at 500 KiB, found through redirects; when the last good copy is written; an error of ours passing
 * the origin's answer through; caching; configuration. Through the real Worker in workerd (real
 * Cache API, real KV); only the site's origin server is fake, stubbed at the global fetch boundary.
 * What each kind of origin answer becomes (RFC 9309, issue 34): robots.test.ts.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KvRobotsLastGoodStore } from "../../src/adapters/kv/robots-last-good.ts";
import { parseConfig } from "../../src/config.ts";
import { REFRESH_MS, WRITE_GAP_MS, rememberGood } from "../../src/http/robots/last-good.ts";
import { ROBOTS_LOOP_HEADER } from "../../src/http/robots/loop.ts";
import { cutAtLineEnd, mergeRobots, minimalRobots } from "../../src/http/robots/text.ts";
import { siteEnv as notifySiteEnv } from "./notify-support.ts";
import { RULES, bigRobots, bytes, chunked, countingKv, fakeOrigin, redirect, siteEnv, str, text, uncached, withIndex } from "./robots-support.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("GET /robots.txt: the origin has a file", () => {
  it("lists the Atom feed of recent changes as a sitemap too when the feed is on (the default)", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => new Response("not found", { status: 404 }));
    const body = await (await call(notifySiteEnv(origin), `${origin}/robots.txt`)).text();
    expect(body).toBe(minimalRobots([`${origin}/sitemap.xml`, `${origin}/sitemap-feed.atom`]));
    // The KV source keeps recent changes too (its writer object's stamp index): the same lines.
    const kvOrigin = freshOrigin("robots-kv");
    const kvBody = await (await call(notifySiteEnv(kvOrigin, { URL_SOURCE: "kv" }), `${kvOrigin}/robots.txt`)).text();
    expect(kvBody).toBe(minimalRobots([`${kvOrigin}/sitemap.xml`, `${kvOrigin}/sitemap-feed.atom`]));
    // FEED_SIZE=0: no feed, no line.
    const off = await (await call(notifySiteEnv(origin, { FEED_SIZE: "0" }), `${origin}/robots.txt`)).text();
    expect(off).toBe(minimalRobots([`${origin}/sitemap.xml`]));
  });

  it("keeps the origin's file unchanged and appends the missing Sitemap: line, no Host: line", async () => {
    const origin = freshOrigin("robots");
    const original = `# shop robots\n${RULES}\nSitemap: https://cdn.example.net/news-sitemap.xml\n`;
    const calls = fakeOrigin(() => text(original));
    const res = await call(siteEnv(origin), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=300");
    expect(res.headers.get("X-Robots-Origin")).toBeNull();
    const body = await res.text();
    expect(body).toBe(`${original}\nSitemap: ${origin}/sitemap.xml\n`);
    expect(body).not.toMatch(/^host:/im);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe(`${origin}/robots.txt`);
    expect(calls[0]!.headers.get(ROBOTS_LOOP_HEADER)).toBe("1");
    expect(calls[0]!.redirect).toBe("manual");
  });

  it("adds no duplicate when the origin already lists the index (any letter case in scheme and host)", async () => {
    const origin = freshOrigin("robots");
    const shouting = origin.toUpperCase();
    const original = `User-agent: *\r\nDisallow: /private\r\nHost: ${new URL(origin).host}\r\nsitemap:${shouting}/sitemap.xml`;
    fakeOrigin(() => text(original));
    const body = await (await call(siteEnv(origin), `${origin}/robots.txt`)).text();
    expect(body).toBe(original); // byte for byte, the origin's own Host: line and CRLFs included
  });

  it("keeps the origin's bytes as they are, even when they are not UTF-8", async () => {
    const origin = freshOrigin("robots");
    // "Disallow: /café/" in Latin-1: é is the single byte 0xE9, which UTF-8 decoding would replace.
    const latin1 = new Uint8Array([...bytes("User-agent: *\nDisallow: /caf"), 0xe9, ...bytes("/\n")]);
    fakeOrigin(() => new Response(latin1, { headers: { "Content-Type": "text/plain; charset=iso-8859-1" } }));
    const body = new Uint8Array(await (await call(siteEnv(origin), `${origin}/robots.txt`)).arrayBuffer());
    expect(body.subarray(0, latin1.length)).toEqual(latin1);
    expect(str(body.subarray(latin1.length))).toBe(`\nSitemap: ${origin}/sitemap.xml\n`);
  });

  it("keeps CRLF line endings and a missing final newline when appending", () => {
    expect(str(mergeRobots(bytes("User-agent: *\r\nDisallow:"), ["https://a.example/sitemap.xml"]))).toBe(
      "User-agent: *\r\nDisallow:\r\n\r\nSitemap: https://a.example/sitemap.xml\r\n",
    );
    expect(str(mergeRobots(bytes(""), ["https://a.example/sitemap.xml"]))).toBe("Sitemap: https://a.example/sitemap.xml\n");
  });

  it("keeps the first 500 KiB of a 756 KB file cut at its last line end, then the Sitemap: line, reading no more than that", async () => {
    const origin = freshOrigin("robots");
    const big = bigRobots();
    expect(big.length).toBeGreaterThan(756_000);
    const served = chunked(big);
    fakeOrigin(() => served.response());
    const res = await call(uncached(origin), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    const body = new Uint8Array(await res.arrayBuffer());
    const kept = cutAtLineEnd(big.subarray(0, 512_000));
    // Every whole line of the first 500 KiB, byte for byte at its own offset: what a crawler reads of the origin.
    expect(kept.length).toBeGreaterThan(512_000 - 40);
    expect(body.subarray(0, kept.length)).toEqual(kept);
    expect(str(body.subarray(kept.length))).toBe(`\nSitemap: ${origin}/sitemap.xml\n`);
    expect(str(body)).toMatch(/^User-agent: \*\nDisallow: \/generated\/path-000000\/\n/);
    expect(res.headers.get("X-Robots-Origin")).toBe("origin file cut at its last line end within 512000 bytes");
    // The rest of the file was never downloaded: the chunk that crossed the limit and the one the stream queued ahead.
    expect(served.pulled()).toBeLessThanOrEqual(512_000 + 2 * 65_536);
    expect(served.pulled()).toBeLessThan(big.length);
  });

  it("cuts an endless file the same way, a few chunks past 500 KiB at most", async () => {
    const origin = freshOrigin("robots");
    let pulled = 0;
    fakeOrigin(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            pull(controller) {
              pulled += 65_536;
              controller.enqueue(bytes("Disallow: /x\n".repeat(65_536 / 13)));
            },
          }),
          { headers: { "Content-Type": "text/plain" } },
        ),
    );
    const body = await (await call(uncached(origin), `${origin}/robots.txt`)).text();
    expect(body.endsWith(`Disallow: /x\n\nSitemap: ${origin}/sitemap.xml\n`)).toBe(true);
    expect(pulled).toBeLessThanOrEqual(512_000 + 2 * 65_536);
  });

  it("follows a redirect to another host (apex to www) and keeps the rules found there", async () => {
    const origin = freshOrigin("robots");
    const www = origin.replace("https://", "https://www.");
    const calls = fakeOrigin((url) => (url === `${www}/robots.txt` ? text(RULES) : redirect(`${www}/robots.txt`)));
    const res = await call(uncached(origin), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(calls.map((c) => c.url)).toEqual([`${origin}/robots.txt`, `${www}/robots.txt`]);
    expect(calls.every((c) => c.headers.get(ROBOTS_LOOP_HEADER) === "1")).toBe(true);
  });

  it("follows five redirects (relative ones too), each status of them", async () => {
    const origin = freshOrigin("robots");
    const statuses = [301, 302, 303, 307, 308];
    const calls = fakeOrigin((url) => {
      const hop = Number(new URL(url).searchParams.get("hop") ?? "0");
      return hop === 5
        ? text(RULES)
        : redirect(hop % 2 ? `https://hop${hop + 1}.example/robots.txt?hop=${hop + 1}` : `/robots.txt?hop=${hop + 1}`, statuses[hop]);
    });
    const res = await call(uncached(origin), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(calls).toHaveLength(6);
  });
});

describe("the last good copy", () => {
  it("is written only when the file changed, not on every request", async () => {
    const origin = freshOrigin("robots");
    const counting = countingKv();
    const e = { ...uncached(origin), SNAPSHOTS: counting.kv } as Env;
    let rules = RULES;
    fakeOrigin(() => text(rules));
    for (let i = 0; i < 3; i++) await call(e, `${origin}/robots.txt`);
    expect(counting.puts()).toBe(1);
    rules = `${RULES}Disallow: /new/\n`;
    for (let i = 0; i < 2; i++) await call(e, `${origin}/robots.txt`);
    expect(counting.puts()).toBe(2);
    const copy = await new KvRobotsLastGoodStore(env.SNAPSHOTS).get(origin);
    expect(str(copy!.body)).toBe(rules);
  });

  it("is rewritten once it is older than the refresh interval, so its age stays true", async () => {
    const origin = freshOrigin("robots");
    const store = new KvRobotsLastGoodStore(env.SNAPSHOTS);
    const t0 = Date.UTC(2026, 0, 1);
    expect(await rememberGood(store, origin, bytes(RULES), t0)).toBe("stored");
    expect(await rememberGood(store, origin, bytes(RULES), t0 + REFRESH_MS - 1)).toBe("unchanged");
    expect(await store.stamp(origin)).toMatchObject({ fetchedAt: t0 });
    expect(await rememberGood(store, origin, bytes(RULES), t0 + REFRESH_MS)).toBe("stored");
    expect(await store.stamp(origin)).toMatchObject({ fetchedAt: t0 + REFRESH_MS });
    expect(await rememberGood(store, origin, bytes(`${RULES}# changed\n`), t0 + REFRESH_MS + 1)).toBe("stored");
    expect(await store.get(origin)).toMatchObject({ fetchedAt: t0 + REFRESH_MS + 1 });
  });

  it("is written once by requests that arrive together, and a change right after waits for KV's one write a second to its key", async () => {
    const origin = freshOrigin("robots");
    const writes: number[] = [];
    const store = new KvRobotsLastGoodStore(env.SNAPSHOTS);
    const put = store.put.bind(store);
    store.put = async (o, copy) => {
      writes.push(Date.now());
      return put(o, copy);
    };
    const t0 = Date.now();
    const together = await Promise.all(Array.from({ length: 20 }, () => rememberGood(store, origin, bytes(RULES), t0)));
    expect(together.filter((r) => r === "stored").length).toBeGreaterThan(0);
    expect(writes).toHaveLength(1);
    const changed = await Promise.all([
      rememberGood(store, origin, bytes(`${RULES}# a\n`), t0 + 1),
      rememberGood(store, origin, bytes(`${RULES}# b\n`), t0 + 2),
    ]);
    expect(changed).toEqual(["stored", "stored"]);
    // The newest copy is the one kept; no two writes of the key less than a second apart.
    expect(writes.length).toBeGreaterThanOrEqual(2);
    expect(writes.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < writes.length; i++) expect(writes[i]! - writes[i - 1]!).toBeGreaterThanOrEqual(WRITE_GAP_MS);
    expect(str((await store.get(origin))!.body)).toBe(`${RULES}# b\n`);
  });

  it("is not taken from a 4xx or an HTML page", async () => {
    const origin = freshOrigin("robots");
    for (const answer of [() => new Response("gone", { status: 410 }), () => text("<html></html>", "text/html")]) {
      fakeOrigin(answer);
      await call(uncached(origin), `${origin}/robots.txt`);
      vi.restoreAllMocks();
    }
    expect(await new KvRobotsLastGoodStore(env.SNAPSHOTS).stamp(origin)).toBeNull();
  });
});

describe("GET /robots.txt: an error of ours passes the origin's answer through", () => {
  it("passes status and body through unchanged when the configuration cannot be loaded", async () => {
    for (const [status, body] of [
      [200, RULES],
      [503, "down for maintenance"],
      [404, "no such file"],
    ] as const) {
      const origin = freshOrigin("robots");
      const calls = fakeOrigin(() => new Response(body, { status, headers: { "Content-Type": "text/plain" } }));
      const res = await call(siteEnv(origin, { URL_SOURCE: "a-typo" }), `${origin}/robots.txt`);
      expect(res.status).toBe(status);
      expect(await res.text()).toBe(body);
      expect(res.headers.get("Cache-Control")).toBe("no-store");
      expect(res.headers.get("X-Robots-Origin")).toBe("the origin's answer, passed through");
      expect(calls.map((c) => c.url)).toEqual([`${origin}/robots.txt`]);
      expect(calls[0]!.headers.get(ROBOTS_LOOP_HEADER)).toBe("1");
      vi.restoreAllMocks();
    }
  });

  it("passes a redirect through with its Location, and cuts a long body at a line end", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => redirect("/elsewhere/robots.txt", 308));
    const moved = await call(siteEnv(origin, { URL_SOURCE: "a-typo" }), `${origin}/robots.txt`);
    expect(moved.status).toBe(308);
    expect(moved.headers.get("Location")).toBe(`${origin}/elsewhere/robots.txt`);
    vi.restoreAllMocks();

    const big = bigRobots();
    fakeOrigin(() => new Response(big, { headers: { "Content-Type": "text/plain" } }));
    const res = await call(siteEnv(origin, { URL_SOURCE: "a-typo" }), `${origin}/robots.txt`);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(cutAtLineEnd(big.subarray(0, 512_000)));
  });

  it("passes the origin through when the Cache API throws", async () => {
    const origin = freshOrigin("robots");
    vi.spyOn((caches as unknown as { default: Cache }).default, "match").mockRejectedValue(new Error("cache unavailable"));
    fakeOrigin(() => text(RULES));
    const res = await call(siteEnv(origin), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(RULES);
    expect(res.headers.get("X-Robots-Origin")).toBe("the origin's answer, passed through");
  });

  it("answers 503 when the pass-through cannot reach the origin either", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => Promise.reject(new TypeError("connection refused")));
    const res = await call(siteEnv(origin, { URL_SOURCE: "a-typo" }), `${origin}/robots.txt`);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("60");
  });

  it("passes an unknown host's own file through: the Worker changes robots.txt only for its sites", async () => {
    const a = freshOrigin("robots-a");
    const calls = fakeOrigin(() => text(RULES));
    const res = await call(siteEnv(a), "https://unknown.example/robots.txt");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(RULES);
    expect(calls.map((c) => c.url)).toEqual(["https://unknown.example/robots.txt"]);
  });
});

describe("GET /robots.txt: caching", () => {
  it("is cached briefly in the Cache API: the origin is not asked again", async () => {
    const origin = freshOrigin("robots");
    const calls = fakeOrigin(() => text("User-agent: *\nDisallow:\n"));
    const e = siteEnv(origin);
    const first = await (await call(e, `${origin}/robots.txt`)).text();
    const second = await call(e, `${origin}/robots.txt`);
    expect(await second.text()).toBe(first);
    expect(calls).toHaveLength(1);
  });

  it("lists each site's own index only", async () => {
    const a = freshOrigin("robots-a");
    const b = freshOrigin("robots-b");
    fakeOrigin(() => new Response(null, { status: 404 }));
    const e = siteEnv(`${a} ${b}`);
    expect(await (await call(e, `${a}/robots.txt`)).text()).toBe(minimalRobots([`${a}/sitemap.xml`]));
    expect(await (await call(e, `${b}/robots.txt`)).text()).toBe(minimalRobots([`${b}/sitemap.xml`]));
  });
});

describe("notification and robots.txt configuration", () => {
  it("has safe defaults: every channel off, robots.txt from the same URL", () => {
    const { notify } = parseConfig({ SITES: "https://example.com" });
    expect(notify).toEqual({
      indexNow: null,
      pingUrls: [],
      searchConsole: null,
      timeoutMs: 10_000,
      settleMs: 60_000,
      robots: { originUrl: "{origin}/robots.txt", timeoutMs: 3000, maxAge: 300 },
    });
    expect(parseConfig({ SITES: "https://example.com", INDEXNOW_KEY: "abcdefgh" }).notify.indexNow).toEqual({
      key: "abcdefgh",
      endpoint: "https://api.indexnow.org/indexnow",
      batchesPerRun: 5,
    });
  });

  it("a bad ROBOTS_* variable still serves the origin's rules (never a 500 configuration error)", async () => {
    const bad: Record<string, string>[] = [
      { ROBOTS_ORIGIN_URL: "origin.example/robots.txt" },
      { ROBOTS_ORIGIN_TIMEOUT_MS: "0" },
      { ROBOTS_MAX_AGE: "soon" },
    ];
    for (const vars of bad) {
      const origin = freshOrigin("robots");
      const calls = fakeOrigin(() => text(RULES));
      const res = await call(siteEnv(origin, vars), `${origin}/robots.txt`);
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body.startsWith(RULES)).toBe(true);
      expect(body).not.toMatch(/ROBOTS_|configuration/);
      expect(calls.map((c) => c.url)).toEqual([`${origin}/robots.txt`]);
      vi.restoreAllMocks();
    }
  });
});
