/**
 * What each answer of the site's origin to our robots.txt fetch becomes: never fewer rules than the
 * origin's own answer (issue 34, RFC 9309 §2.3.1). Rules are told from an HTML page by the body, not
 * the Content-Type; only 404/410 mean "no file"; a 5xx or 429 is passed on; another 4xx to our fetch
 * or an unreachable origin gives the last good copy, else 503; a fetch that loops back into the
 * Worker is a configuration problem shown in status. Through the real Worker in workerd (real Cache
 * API, real KV); only the origin server is fake, stubbed at the global fetch boundary. The file
 * itself (merging, size, redirects, caching, pass-through): robots-file.test.ts.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KvRobotsLastGoodStore } from "../../src/adapters/kv/robots-last-good.ts";
import { KvRobotsLoopStore } from "../../src/adapters/kv/robots-loop.ts";
import { ROBOTS_LOOP_HEADER } from "../../src/http/robots/loop.ts";
import { RECORD_INTERVAL_MS, clearLoop, recordLoop } from "../../src/http/robots/loop-record.ts";
import { minimalRobots } from "../../src/http/robots/text.ts";
import { RULES, countingKv, fakeOrigin, hang, redirect, siteEnv, str, text, uncached, withIndex } from "./robots-support.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

type Answer = (url: string, init: RequestInit | undefined) => Response | Promise<Response>;

const robots = (e: Env, origin: string, init?: RequestInit) => call(e, `${origin}/robots.txt`, init);

/** A site whose last good copy is RULES: one good fetch first. */
async function withLastGoodCopy(vars: Record<string, string> = {}): Promise<{ origin: string; e: Env }> {
  const origin = freshOrigin("robots");
  const e = uncached(origin, vars);
  fakeOrigin(() => text(RULES));
  expect(await (await robots(e, origin)).text()).toBe(withIndex(RULES, origin));
  vi.restoreAllMocks();
  return { origin, e };
}

describe("GET /robots.txt: rules or an HTML page, told by the body", () => {
  it("keeps rules sent as text/html byte for byte (Express, Django, PHP), and keeps them as the last good copy", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => text(RULES, "text/html; charset=utf-8"));
    const res = await robots(siteEnv(origin), origin);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(res.headers.get("X-Robots-Origin")).toBeNull();
    expect(str((await new KvRobotsLastGoodStore(env.SNAPSHOTS).get(origin))!.body)).toBe(RULES);
  });

  it("reads any body that does not open an HTML document as rules, whatever its Content-Type", async () => {
    for (const body of ["<p>User-agent: *</p>\nDisallow: /tmp/\n", "# <html> is not an opening here\nUser-agent: *\nDisallow: /x\n", ""]) {
      const origin = freshOrigin("robots");
      fakeOrigin(() => text(body, "text/html"));
      const res = await robots(siteEnv(origin), origin);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(body === "" ? `Sitemap: ${origin}/sitemap.xml\n` : withIndex(body, origin));
      vi.restoreAllMocks();
    }
  });

  it("treats an HTML document (a soft 404) as no file whatever its Content-Type: <!doctype html or <html, after a BOM or whitespace, any case", async () => {
    const pages: [string, string][] = [
      ["<!doctype html><title>Home</title>", "text/html; charset=utf-8"],
      ["\uFEFF\r\n  \t<HTML lang=en><body>Not found</body></HTML>", "text/plain"],
      ['\n<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN">\n<html>', "application/octet-stream"],
    ];
    for (const [page, type] of pages) {
      const origin = freshOrigin("robots");
      fakeOrigin(() => text(page, type));
      const res = await robots(uncached(origin), origin);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(minimalRobots([`${origin}/sitemap.xml`]));
      expect(res.headers.get("X-Robots-Origin")).toBe("origin answered an HTML page");
      expect(await new KvRobotsLastGoodStore(env.SNAPSHOTS).stamp(origin)).toBeNull();
      vi.restoreAllMocks();
    }
  });
});

describe("GET /robots.txt: only 404 and 410 mean no file", () => {
  it("serves the minimal file with the Sitemap: line on a 404 or a 410", async () => {
    for (const status of [404, 410]) {
      const origin = freshOrigin("robots");
      fakeOrigin(() => new Response("Not Found", { status }));
      const res = await robots(siteEnv(origin), origin);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`User-agent: *\nDisallow:\n\nSitemap: ${origin}/sitemap.xml\n`);
      expect(res.headers.get("Cache-Control")).toBe("public, max-age=60");
      expect(res.headers.get("X-Robots-Origin")).toBe(`origin answered ${status}`);
      vi.restoreAllMocks();
    }
  });

  it("fetches from ROBOTS_ORIGIN_URL, or not at all with ROBOTS_ORIGIN_URL=none", async () => {
    const origin = freshOrigin("robots");
    const calls = fakeOrigin(() => text("User-agent: *\nDisallow: /tmp\n"));
    const res = await robots(siteEnv(origin, { ROBOTS_ORIGIN_URL: "https://origin-server.internal/{host}/robots.txt" }), origin);
    expect(calls.map((c) => c.url)).toEqual([`https://origin-server.internal/${new URL(origin).host}/robots.txt`]);
    expect(await res.text()).toBe(`User-agent: *\nDisallow: /tmp\n\nSitemap: ${origin}/sitemap.xml\n`);

    const other = freshOrigin("robots");
    const none = await robots(siteEnv(other, { ROBOTS_ORIGIN_URL: "none" }), other);
    expect(await none.text()).toBe(minimalRobots([`${other}/sitemap.xml`]));
    expect(calls).toHaveLength(1);
  });
});

describe("GET /robots.txt: the origin's 5xx or 429 is passed on (RFC 9309 §2.3.1.4)", () => {
  const errors: [number, string | null][] = [
    [503, "120"],
    [500, null],
    [502, "Wed, 21 Oct 2026 07:28:00 GMT"],
    [429, "30"],
  ];

  it.each(errors)("answers the origin's %i with its Retry-After (%s), no-store, even when a last good copy exists", async (status, retryAfter) => {
    const { origin, e } = await withLastGoodCopy();
    const calls = fakeOrigin(() => new Response("down for maintenance", { status, headers: retryAfter === null ? {} : { "Retry-After": retryAfter } }));
    const res = await robots(e, origin);
    expect(res.status).toBe(status);
    expect(res.headers.get("Retry-After")).toBe(retryAfter);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("X-Robots-Origin")).toBe(`origin answered ${status}`);
    expect(await res.text()).not.toContain("Disallow");
    // Never cached, here or in the Cache API: the next request asks the origin again.
    await robots(siteEnv(origin), origin);
    expect(calls).toHaveLength(2);
  });

  it("passes on a 503 found at the end of a redirect, and drops a Retry-After that is not one", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin((url) => (url.endsWith("/moved.txt") ? new Response(null, { status: 503, headers: { "Retry-After": "soon" } }) : redirect("/moved.txt")));
    const res = await robots(siteEnv(origin), origin);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBeNull();
  });
});

describe("GET /robots.txt: a 401, 403 or other 4xx to our fetch is not 'no file'", () => {
  it.each([401, 403, 400, 451])("answers %i without a last good copy with 503 and Retry-After, never an allow-all 200", async (status) => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => new Response("Forbidden", { status }));
    const res = await robots(siteEnv(origin), origin);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("60");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("X-Robots-Origin")).toBe(`origin answered ${status} to our fetch`);
    expect(await res.text()).not.toMatch(/^Disallow:\s*$/m);
  });

  it.each([401, 403, 400, 451])("answers %i with the last good copy, the origin's rules kept", async (status) => {
    const { origin, e } = await withLastGoodCopy();
    fakeOrigin(() => new Response("Forbidden", { status }));
    const res = await robots(e, origin);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(res.headers.get("X-Robots-Origin")).toBe(`origin answered ${status} to our fetch; serving the last good copy`);
  });

  it("gets the rules past a WAF that refuses requests without a User-Agent", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin((_, init) => (new Headers(init?.headers).get("User-Agent") ? text(RULES) : new Response("blocked", { status: 403 })));
    const res = await robots(siteEnv(origin), origin);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(withIndex(RULES, origin));
  });
});

describe("GET /robots.txt: the origin cannot be reached", () => {
  const failures: [string, Answer, string, Record<string, string>][] = [
    ["a timeout", hang, "origin timed out", { ROBOTS_ORIGIN_TIMEOUT_MS: "100" }],
    ["a network error", () => Promise.reject(new TypeError("connection refused")), "origin fetch failed", {}],
  ];

  it.each(failures)("answers 503 with Retry-After, never a 200, on %s without a last good copy", async (_, answer, reason, vars) => {
    const origin = freshOrigin("robots");
    const calls = fakeOrigin(answer);
    const e = siteEnv(origin, vars);
    const res = await robots(e, origin);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("60");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("X-Robots-Origin")).toBe(reason);
    expect(await res.text()).toMatch(/^503 Service Unavailable: /);
    await robots(e, origin);
    expect(calls).toHaveLength(2);
  });

  it.each(failures)("serves the last good copy with its age on %s, the origin's rules kept", async (_, answer, reason, vars) => {
    const { origin, e } = await withLastGoodCopy(vars);
    fakeOrigin(answer);
    const res = await robots(e, origin);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(res.headers.get("X-Robots-Origin")).toBe(`${reason}; serving the last good copy`);
    const age = Number(res.headers.get("X-Robots-Origin-Age"));
    expect(Number.isInteger(age) && age >= 0 && age < 600).toBe(true);
  });

  it("serves the last good copy for 60 s at most, from the Cache API too", async () => {
    const origin = freshOrigin("robots");
    fakeOrigin(() => text(RULES));
    await robots(siteEnv(origin, { ROBOTS_MAX_AGE: "3600", ROBOTS_ORIGIN_URL: "{origin}/robots.txt?first" }), origin);
    vi.restoreAllMocks();
    // Another cache key (the origin URL is part of it), the same site: the copy is found.
    const later = siteEnv(origin, { ROBOTS_MAX_AGE: "3600", ROBOTS_ORIGIN_URL: "{origin}/robots.txt?second" });
    const calls = fakeOrigin(() => Promise.reject(new TypeError("connection reset")));
    const res = await robots(later, origin);
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=60");
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(await (await robots(later, origin)).text()).toBe(withIndex(RULES, origin));
    expect(calls).toHaveLength(1);
  });

  it("treats a sixth redirect, a redirect loop and a redirect without a usable Location as unreachable", async () => {
    const cases: [Answer, string, number][] = [
      [(url) => redirect(`/robots.txt?hop=${Number(new URL(url).searchParams.get("hop") ?? "0") + 1}`), "origin redirected more than 5 times", 6],
      [(url) => redirect(url.endsWith("?b") ? "/robots.txt?a" : "/robots.txt?b", 302), "origin redirects in a loop", 3],
      [() => new Response(null, { status: 302 }), "origin answered 302 without a usable Location", 1],
      [() => redirect("ftp://files.example/robots.txt"), "origin answered 301 without a usable Location", 1],
    ];
    for (const [answer, reason, requests] of cases) {
      const origin = freshOrigin("robots");
      const calls = fakeOrigin(answer);
      const res = await robots(uncached(origin), origin);
      expect(res.status, reason).toBe(503);
      expect(res.headers.get("X-Robots-Origin")).toBe(reason);
      expect(calls).toHaveLength(requests);
      vi.restoreAllMocks();
    }
  });

  it("answers 503 when the origin fails and the copy cannot be read (KV down); a failed write costs nothing", async () => {
    const origin = freshOrigin("robots");
    const e = { ...uncached(origin), SNAPSHOTS: countingKv("all").kv } as Env;
    fakeOrigin(() => text(RULES));
    const good = await robots(e, origin);
    expect(good.status).toBe(200);
    expect(await good.text()).toBe(withIndex(RULES, origin));
    vi.restoreAllMocks();
    fakeOrigin(() => Promise.reject(new TypeError("connection refused")));
    const res = await robots(e, origin);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("60");
  });
});

describe("GET /robots.txt: every origin fetch names the product", () => {
  it("sends one User-Agent with the product, its version and its URL on every request: each redirect hop, the pass-through", async () => {
    const origin = freshOrigin("robots");
    const calls = fakeOrigin((url) => (url.includes("?hop") ? text(RULES) : redirect("/robots.txt?hop=1")));
    await robots(uncached(origin), origin);
    await robots(siteEnv(origin, { URL_SOURCE: "a-typo" }), origin);
    await call(siteEnv(origin), "https://unknown.example/robots.txt");
    expect(calls.map((c) => c.url)).toEqual([
      `${origin}/robots.txt`,
      `${origin}/robots.txt?hop=1`,
      `${origin}/robots.txt`,
      "https://unknown.example/robots.txt",
    ]);
    const agents = new Set(calls.map((c) => c.headers.get("User-Agent")));
    expect(agents.size).toBe(1);
    expect([...agents][0]).toMatch(/^edge-sitemaps\/\d+\.\d+\.\d+ \(\+https:\/\/\S+\)$/);
  });
});

describe("GET /robots.txt: a fetch that loops back into this Worker", () => {
  const TOKEN = "test-admin-token-0123456789abcdef";
  /** The origin fetch reaches this Worker again, as on a Custom Domain or in wrangler dev. */
  const loopingOrigin = (e: Env) => fakeOrigin((url, init) => call(e, url, init));
  const robotsStatusOf = async (e: Env, origin: string) =>
    (
      (await (await call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as {
        robots: Record<string, unknown>;
      }
    ).robots;

  it("answers the looped request itself with 508 and fetches nothing", async () => {
    const origin = freshOrigin("robots");
    const calls = fakeOrigin(() => text("unused"));
    const res = await robots(siteEnv(origin), origin, { headers: { [ROBOTS_LOOP_HEADER]: "1" } });
    expect(res.status).toBe(508);
    expect(calls).toHaveLength(0);
  });

  it("is no 'no file': 503 without a last good copy, shown in status until the origin answers again", async () => {
    const origin = freshOrigin("robots");
    const e = uncached(origin, { ROBOTS_ORIGIN_URL: "{origin}/robots.txt?token=s3cret" });
    const calls = loopingOrigin(e);
    const res = await robots(e, origin);
    expect(calls).toHaveLength(1);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("60");
    expect(res.headers.get("X-Robots-Origin")).toMatch(/loop/);
    const looped = await robotsStatusOf(e, origin);
    expect(looped).toMatchObject({ originUrl: `${origin}/robots.txt`, loop: "seen" });
    expect(String(looped["problem"])).toContain("ROBOTS_ORIGIN_URL");
    expect(JSON.stringify(looped)).not.toContain("s3cret");
    expect(Date.parse(String(looped["loopLastSeenAt"]))).toBeGreaterThan(Date.now() - 60_000);
    vi.restoreAllMocks();

    fakeOrigin(() => text(RULES));
    expect(await (await robots(e, origin)).text()).toBe(withIndex(RULES, origin));
    expect(await robotsStatusOf(e, origin)).toMatchObject({ loop: "none", loopLastSeenAt: null, problem: null });
  });

  it("serves the last good copy while the loop lasts", async () => {
    const { origin, e } = await withLastGoodCopy();
    loopingOrigin(e);
    const res = await robots(e, origin);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(withIndex(RULES, origin));
    expect(res.headers.get("X-Robots-Origin")).toMatch(/loop.*; serving the last good copy$/);
  });

  it("answers 503 for an unknown host whose pass-through loops, never the loop answer", async () => {
    const e = siteEnv(freshOrigin("robots"));
    loopingOrigin(e);
    const res = await call(e, "https://unknown.example/robots.txt");
    expect(res.status).toBe(503);
    expect(res.headers.get("X-Robots-Origin")).toMatch(/loop/);
  });

  it("records a loop once per interval (one KV write every ten minutes at most) and clears it only when there is one", async () => {
    const counting = countingKv();
    const store = new KvRobotsLoopStore(counting.kv);
    const origin = freshOrigin("robots");
    const t0 = Date.UTC(2026, 0, 1);
    expect(await clearLoop(store, origin)).toBe("none");
    expect(await recordLoop(store, origin, t0)).toBe("recorded");
    expect(await recordLoop(store, origin, t0 + RECORD_INTERVAL_MS - 1)).toBe("unchanged");
    expect(await store.lastSeen(origin)).toBe(t0);
    expect(await recordLoop(store, origin, t0 + RECORD_INTERVAL_MS)).toBe("recorded");
    expect(counting.puts()).toBe(2);
    expect(await clearLoop(store, origin)).toBe("cleared");
    expect(await store.lastSeen(origin)).toBeNull();
  });
});
