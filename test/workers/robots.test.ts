/**
 * GET /robots.txt through the real Worker in workerd (real Cache API); only the site's origin
 * server is fake, stubbed at the global fetch boundary.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.ts";
import { ROBOTS_LOOP_HEADER, mergeRobots, minimalRobots } from "../../src/http/robots.ts";
import { siteEnv as notifySiteEnv } from "./notify-support.ts";
import { call, freshOrigin } from "./support.ts";

/** Most cases check the index line alone; the feed's own line has its test below. */
const siteEnv = (origin: string, vars: Record<string, string> = {}): Env => notifySiteEnv(origin, { FEED_SIZE: "0", ...vars });

interface OriginCall {
  url: string;
  headers: Headers;
}

/** Replaces fetch with a fake origin server; returns what it was asked. */
function fakeOrigin(answer: (url: string, init: RequestInit | undefined) => Response | Promise<Response>): OriginCall[] {
  const calls: OriginCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    calls.push({ url, headers: new Headers(init?.headers) });
    return answer(url, init);
  });
  return calls;
}

afterEach(() => {
  vi.restoreAllMocks();
});

const text = (body: string, type = "text/plain") => new Response(body, { headers: { "Content-Type": type } });

describe("GET /robots.txt", () => {
  it("lists the Atom feed of recent changes as a sitemap too when the feed is on (the default)", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => new Response("not found", { status: 404 }));
    const body = await (await call(notifySiteEnv(origin), `${origin}/robots.txt`)).text();
    expect(body).toBe(minimalRobots([`${origin}/sitemap.xml`, `${origin}/sitemap-feed.atom`]));
  });

  it("keeps the origin's file unchanged and appends the missing Sitemap: line, no Host: line", async () => {
    const origin = freshOrigin("robots");
    const original = [
      "# shop robots",
      "User-agent: *",
      "Disallow: /cart",
      "Allow: /cart/help",
      "",
      "User-agent: BadBot",
      "Disallow: /",
      "",
      "Sitemap: https://cdn.example.net/news-sitemap.xml",
      "",
    ].join("\n");
    const calls = fakeOrigin(() => text(original));
    const res = await call(siteEnv(origin), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=300");
    const body = await res.text();
    expect(body).toBe(`${original}\nSitemap: ${origin}/sitemap.xml\n`);
    expect(body.startsWith(original)).toBe(true);
    expect(body).not.toMatch(/^host:/im);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe(`${origin}/robots.txt`);
    expect(calls[0]!.headers.get(ROBOTS_LOOP_HEADER)).toBe("1");
  });

  it("adds no duplicate when the origin already lists the index (any letter case in scheme and host)", async () => {
    const origin = freshOrigin("robots");
    const shouting = origin.toUpperCase();
    const original = `User-agent: *\r\nDisallow: /private\r\nHost: ${new URL(origin).host}\r\nsitemap:${shouting}/sitemap.xml`;
    fakeOrigin(() => text(original));
    const body = await (await call(siteEnv(origin), `${origin}/robots.txt`)).text();
    expect(body).toBe(original); // byte for byte, the origin's own Host: line and CRLFs included
  });

  it("keeps CRLF line endings and a missing final newline when appending", () => {
    expect(mergeRobots("User-agent: *\r\nDisallow:", ["https://a.example/sitemap.xml"])).toBe(
      "User-agent: *\r\nDisallow:\r\n\r\nSitemap: https://a.example/sitemap.xml\r\n",
    );
    expect(mergeRobots("", ["https://a.example/sitemap.xml"])).toBe("Sitemap: https://a.example/sitemap.xml\n");
  });

  it("puts the lines first when the file is past the 500 KiB crawlers read", () => {
    const big = `User-agent: *\n${"Disallow: /a-long-path-that-repeats\n".repeat(16_000)}`;
    const merged = mergeRobots(`\uFEFF${big}`, ["https://a.example/sitemap.xml"]);
    expect(merged).toBe(`\uFEFFSitemap: https://a.example/sitemap.xml\n\n${big}`);
  });

  it("serves a minimal valid file with the Sitemap: line when the origin has none (404)", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => new Response("Not Found", { status: 404 }));
    const res = await call(siteEnv(origin), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`User-agent: *\nDisallow:\n\nSitemap: ${origin}/sitemap.xml\n`);
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=60");
    expect(res.headers.get("X-Robots-Origin")).toBe("origin answered 404");
  });

  it("serves the minimal file when the origin times out", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin((_, init) => new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason))));
    const res = await call(siteEnv(origin, { ROBOTS_ORIGIN_TIMEOUT_MS: "100" }), `${origin}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(minimalRobots([`${origin}/sitemap.xml`]));
    expect(res.headers.get("X-Robots-Origin")).toBe("origin timed out");
  });

  it("serves the minimal file when the origin fails (5xx, network error) or answers an HTML page", async () => {
    for (const answer of [
      () => new Response("upstream down", { status: 503 }),
      () => Promise.reject(new TypeError("connection refused")),
      () => text("<!doctype html><title>Home</title>", "text/html; charset=utf-8"),
    ]) {
      const origin = freshOrigin("robots");
      fakeOrigin(answer);
      const body = await (await call(siteEnv(origin), `${origin}/robots.txt`)).text();
      expect(body).toBe(minimalRobots([`${origin}/sitemap.xml`]));
      vi.restoreAllMocks();
    }
  });

  it("reads at most 500 KiB of the origin's file and serves the minimal file past that", async () => {
    const origin = freshOrigin("robots");
    let pulled = 0;
    fakeOrigin(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            pull(controller) {
              pulled += 65_536;
              controller.enqueue(new TextEncoder().encode(`Disallow: /x\n`.repeat(65_536 / 13)));
            },
          }),
          { headers: { "Content-Type": "text/plain" } },
        ),
    );
    const res = await call(siteEnv(origin), `${origin}/robots.txt`);
    expect(await res.text()).toBe(minimalRobots([`${origin}/sitemap.xml`]));
    expect(res.headers.get("X-Robots-Origin")).toBe("origin file is larger than 512000 bytes");
    // The endless file was abandoned a few chunks past the limit.
    expect(pulled).toBeLessThanOrEqual(512_000 + 4 * 65_536);
  });

  it("follows redirects within the origin's host only, and a few at most", async () => {
    const origin = freshOrigin("robots");
    const host = new URL(origin).host;
    const calls = fakeOrigin((url) =>
      url.endsWith("/real/robots.txt")
        ? text("User-agent: *\nDisallow: /r\n")
        : new Response(null, { status: 301, headers: { Location: "/real/robots.txt" } }),
    );
    expect(await (await call(siteEnv(origin), `${origin}/robots.txt`)).text()).toBe(`User-agent: *\nDisallow: /r\n\nSitemap: ${origin}/sitemap.xml\n`);
    expect(calls.map((c) => new URL(c.url).host)).toEqual([host, host]);
    vi.restoreAllMocks();

    for (const location of ["http://169.254.169.254/latest/meta-data", "https://elsewhere.example/robots.txt", "/robots.txt"]) {
      const other = freshOrigin("robots");
      const asked = fakeOrigin(() => new Response(null, { status: 302, headers: { Location: location } }));
      const res = await call(siteEnv(other), `${other}/robots.txt`);
      expect(await res.text()).toBe(minimalRobots([`${other}/sitemap.xml`]));
      expect(asked.every((c) => new URL(c.url).host === new URL(other).host)).toBe(true);
      expect(asked.length).toBeLessThanOrEqual(6);
      vi.restoreAllMocks();
    }
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

  it("lists each site's own index only, and is 404 for unknown hosts", async () => {
    const a = freshOrigin("robots-a");
    const b = freshOrigin("robots-b");
    fakeOrigin(() => new Response(null, { status: 404 }));
    const e = siteEnv(`${a} ${b}`);
    expect(await (await call(e, `${a}/robots.txt`)).text()).toBe(minimalRobots([`${a}/sitemap.xml`]));
    expect(await (await call(e, `${b}/robots.txt`)).text()).toBe(minimalRobots([`${b}/sitemap.xml`]));
    expect((await call(e, "https://unknown.example/robots.txt")).status).toBe(404);
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

  it.each([
    ["ROBOTS_ORIGIN_URL", "origin.example/robots.txt"],
    ["ROBOTS_ORIGIN_TIMEOUT_MS", "0"],
    ["INDEXNOW_ENDPOINT", "api.indexnow.org"],
    ["INDEXNOW_BATCHES_PER_RUN", "101"],
    ["NOTIFY_TIMEOUT_MS", "fast"],
    ["GSC_PROPERTY", "example.com"],
  ])("rejects %s=%j naming the variable", (variable, value) => {
    const env = { SITES: "https://example.com", INDEXNOW_KEY: "abcdefgh", [variable]: value };
    if (variable === "GSC_PROPERTY")
      Object.assign(env, { GSC_SERVICE_ACCOUNT: JSON.stringify({ client_email: "a@b.c", private_key: "-----BEGIN PRIVATE KEY-----x" }) });
    expect(() => parseConfig(env)).toThrow(ConfigError);
    try {
      parseConfig(env);
    } catch (e) {
      expect((e as ConfigError).variable).toBe(variable);
    }
  });
});
