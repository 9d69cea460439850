/**
 * GET /robots.txt through the real Worker in workerd (real Cache API, real KV for the last good
 * copy); only the site's origin server is fake, stubbed at the global fetch boundary. RFC 9309:
 * a 4xx means "no file" (allow all), a 5xx or an unreachable origin "disallow all", so an origin
 * failure must never become a 200 without the origin's rules.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KvRobotsLastGoodStore } from "../../src/adapters/kv/robots-last-good.ts";
import { parseConfig } from "../../src/config.ts";
import { REFRESH_MS, rememberGood } from "../../src/http/robots/last-good.ts";
import { ROBOTS_LOOP_HEADER } from "../../src/http/robots/loop.ts";
import { cutAtLineEnd, mergeRobots, minimalRobots } from "../../src/http/robots/text.ts";
import { siteEnv as notifySiteEnv } from "./notify-support.ts";
import { call, freshOrigin } from "./support.ts";

/** Most cases check the index line alone; the feed's own line has its test below. */
const siteEnv = (origin: string, vars: Record<string, string> = {}): Env => notifySiteEnv(origin, { FEED_SIZE: "0", ...vars });
/** No caching: every request asks the origin, as in the check (`ROBOTS_MAX_AGE=0`). */
const uncached = (origin: string, vars: Record<string, string> = {}): Env => siteEnv(origin, { ROBOTS_MAX_AGE: "0", ...vars });

interface OriginCall {
  url: string;
  headers: Headers;
  redirect: RequestInit["redirect"];
}

/** Replaces fetch with a fake origin server; returns what it was asked. */
function fakeOrigin(answer: (url: string, init: RequestInit | undefined) => Response | Promise<Response>): OriginCall[] {
  const calls: OriginCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    calls.push({ url, headers: new Headers(init?.headers), redirect: init?.redirect });
    return answer(url, init);
  });
  return calls;
}

/** An answer that never comes: rejects like fetch when the caller's deadline aborts it. */
const hang = (_: string, init: RequestInit | undefined): Promise<Response> =>
  new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)));

afterEach(() => {
  vi.restoreAllMocks();
});

const text = (body: string, type = "text/plain") => new Response(body, { headers: { "Content-Type": type } });
const bytes = (s: string) => new TextEncoder().encode(s);
const str = (b: Uint8Array) => new TextDecoder().decode(b);
const redirect = (location: string, status = 301) => new Response(null, { status, headers: { Location: location } });

const RULES = "User-agent: *\nDisallow: /private/\nAllow: /private/help\n\nUser-agent: BadBot\nDisallow: /\n";
const withIndex = (rules: string, origin: string) => `${rules}\nSitemap: ${origin}/sitemap.xml\n`;

/** A generated robots.txt of 756 KB (the case): numbered rule lines of 34 bytes. */
function bigRobots(): Uint8Array {
  const lines = ["User-agent: *\n"];
  for (let i = 0; lines.length < 22_240; i++) lines.push(`Disallow: /generated/path-${String(i).padStart(6, "0")}/\n`);
  return bytes(lines.join(""));
}

/** Serves `body` in 64 KiB chunks on demand; `pulled()` says how many bytes the reader asked for. */
function chunked(body: Uint8Array): { response: () => Response; pulled: () => number } {
  let pulled = 0;
  return {
    pulled: () => pulled,
    response: () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (pulled >= body.length) return controller.close();
            const chunk = body.subarray(pulled, pulled + 65_536);
            pulled += chunk.length;
            controller.enqueue(chunk);
          },
        }),
        { headers: { "Content-Type": "text/plain" } },
      ),
  };
}

/** The real SNAPSHOTS namespace, counting the robots copy's writes and optionally failing. */
function countingKv(fail: "none" | "all" = "none"): { kv: KVNamespace; puts: () => number } {
  const real = env.SNAPSHOTS;
  let puts = 0;
  const failing = () => Promise.reject(new Error("KV GET failed: 503 service unavailable"));
  const kv = Object.create(real) as KVNamespace;
  kv.put = (async (key: string, value: ArrayBuffer, options?: KVNamespacePutOptions) => {
    puts++;
    if (fail === "all") throw new Error("KV PUT failed: 429 too many requests");
    return real.put(key, value, options);
  }) as KVNamespace["put"];
  kv.get = (fail === "all" ? failing : real.get.bind(real)) as KVNamespace["get"];
  kv.getWithMetadata = (fail === "all" ? failing : real.getWithMetadata.bind(real)) as KVNamespace["getWithMetadata"];
  return { kv, puts: () => puts };
}

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

describe("GET /robots.txt: the origin has no file", () => {
  it("serves a minimal valid file with the Sitemap: line on a 4xx", async () => {
    for (const status of [404, 401, 403, 410]) {
      const origin = freshOrigin("robots");
      fakeOrigin(() => new Response("Not Found", { status }));
      const res = await call(siteEnv(origin), `${origin}/robots.txt`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`User-agent: *\nDisallow:\n\nSitemap: ${origin}/sitemap.xml\n`);
      expect(res.headers.get("Cache-Control")).toBe("public, max-age=60");
      expect(res.headers.get("X-Robots-Origin")).toBe(`origin answered ${status}`);
      vi.restoreAllMocks();
    }
  });

  it("treats an HTML page (a front end's catch-all) as no file", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => text("<!doctype html><title>Home</title>", "text/html; charset=utf-8"));
    const res = await call(siteEnv(origin), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(minimalRobots([`${origin}/sitemap.xml`]));
    expect(res.headers.get("X-Robots-Origin")).toBe("origin answered an HTML page");
  });

  it("fetches from ROBOTS_ORIGIN_URL, or not at all with ROBOTS_ORIGIN_URL=none", async () => {
    const origin = freshOrigin("robots");
    const calls = fakeOrigin(() => text("User-agent: *\nDisallow: /tmp\n"));
    const res = await call(siteEnv(origin, { ROBOTS_ORIGIN_URL: "https://origin-server.internal/{host}/robots.txt" }), `${origin}/robots.txt`);
    expect(calls.map((c) => c.url)).toEqual([`https://origin-server.internal/${new URL(origin).host}/robots.txt`]);
    expect(await res.text()).toBe(`User-agent: *\nDisallow: /tmp\n\nSitemap: ${origin}/sitemap.xml\n`);

    const other = freshOrigin("robots");
    const none = await call(siteEnv(other, { ROBOTS_ORIGIN_URL: "none" }), `${other}/robots.txt`);
    expect(await none.text()).toBe(minimalRobots([`${other}/sitemap.xml`]));
    expect(calls).toHaveLength(1);
  });
});

describe("GET /robots.txt: the origin cannot be reached", () => {
  const failures: [string, (url: string, init: RequestInit | undefined) => Response | Promise<Response>, string, Record<string, string>][] = [
    ["a 503", () => new Response("upstream down", { status: 503 }), "origin answered 503", {}],
    ["a 500", () => new Response("oops", { status: 500 }), "origin answered 500", {}],
    ["a 429", () => new Response("slow down", { status: 429 }), "origin answered 429", {}],
    ["a timeout", hang, "origin timed out", { ROBOTS_ORIGIN_TIMEOUT_MS: "100" }],
    ["a network error", () => Promise.reject(new TypeError("connection refused")), "origin fetch failed", {}],
  ];

  it.each(failures)("answers 503 with Retry-After, never a 200, on %s without a last good copy", async (_, answer, reason, vars) => {
    const origin = freshOrigin("robots");
    const calls = fakeOrigin(answer);
    const e = siteEnv(origin, vars);
    const res = await call(e, `${origin}/robots.txt`);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("60");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("X-Robots-Origin")).toBe(reason);
    expect(await res.text()).toMatch(/^503 Service Unavailable: /);
    // Never cached: the next request asks the origin again.
    await call(e, `${origin}/robots.txt`);
    expect(calls).toHaveLength(2);
  });

  it.each(failures)("serves the last good copy with its age on %s, the origin's rules kept", async (_, answer, reason, vars) => {
    const origin = freshOrigin("robots");
    const e = uncached(origin, vars);
    fakeOrigin(() => text(RULES));
    expect(await (await call(e, `${origin}/robots.txt`)).text()).toBe(withIndex(RULES, origin));
    vi.restoreAllMocks();

    fakeOrigin(answer);
    const res = await call(e, `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(res.headers.get("X-Robots-Origin")).toBe(`${reason}; serving the last good copy`);
    const age = Number(res.headers.get("X-Robots-Origin-Age"));
    expect(Number.isInteger(age) && age >= 0 && age < 600).toBe(true);
  });

  it("serves the last good copy for 60 s at most, from the Cache API too", async () => {
    const origin = freshOrigin("robots");
    const e = siteEnv(origin, { ROBOTS_MAX_AGE: "3600", ROBOTS_ORIGIN_URL: "{origin}/robots.txt?first" });
    fakeOrigin(() => text(RULES));
    await call(e, `${origin}/robots.txt`);
    vi.restoreAllMocks();
    // Another cache key (the origin URL is part of it), the same site: the copy is found.
    const later = siteEnv(origin, { ROBOTS_MAX_AGE: "3600", ROBOTS_ORIGIN_URL: "{origin}/robots.txt?second" });
    const calls = fakeOrigin(() => new Response(null, { status: 502 }));
    const res = await call(later, `${origin}/robots.txt`);
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=60");
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(await (await call(later, `${origin}/robots.txt`)).text()).toBe(withIndex(RULES, origin));
    expect(calls).toHaveLength(1);
  });

  it("treats a sixth redirect, a loop and a redirect without a usable Location like a 5xx", async () => {
    const cases: [string, (url: string) => Response, string, number][] = [
      ["six", (url) => redirect(`/robots.txt?hop=${Number(new URL(url).searchParams.get("hop") ?? "0") + 1}`), "origin redirected more than 5 times", 6],
      ["loop", (url) => redirect(url.endsWith("?b") ? "/robots.txt?a" : "/robots.txt?b", 302), "origin redirects in a loop", 3],
      ["no Location", () => new Response(null, { status: 302 }), "origin answered 302 without a usable Location", 1],
      ["not http", () => redirect("ftp://files.example/robots.txt"), "origin answered 301 without a usable Location", 1],
    ];
    for (const [, answer, reason, requests] of cases) {
      const origin = freshOrigin("robots");
      const calls = fakeOrigin(answer);
      const res = await call(uncached(origin), `${origin}/robots.txt`);
      expect(res.status, reason).toBe(503);
      expect(res.headers.get("X-Robots-Origin")).toBe(reason);
      expect(calls).toHaveLength(requests);
      vi.restoreAllMocks();
    }
  });

  it("answers 503 when the origin fails and the copy cannot be read (KV down); a failed write costs nothing", async () => {
    const origin = freshOrigin("robots");
    const broken = countingKv("all");
    const e = { ...uncached(origin), SNAPSHOTS: broken.kv } as Env;
    fakeOrigin(() => text(RULES));
    const good = await call(e, `${origin}/robots.txt`);
    expect(good.status).toBe(200);
    expect(await good.text()).toBe(withIndex(RULES, origin));
    vi.restoreAllMocks();
    fakeOrigin(() => new Response(null, { status: 503 }));
    const res = await call(e, `${origin}/robots.txt`);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("60");
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

describe("GET /robots.txt: loops and caching", () => {
  it("answers a request that looped back from its own origin fetch with 404", async () => {
    const origin = freshOrigin("robots");
    const calls = fakeOrigin(() => text("unused"));
    const res = await call(siteEnv(origin), `${origin}/robots.txt`, { headers: { [ROBOTS_LOOP_HEADER]: "1" } });
    expect(res.status).toBe(404);
    expect(calls).toHaveLength(0);
  });

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
