/**
 * ETags name the bytes (issue 14): a live render whose rows moved past the manifest's version — a
 * record changed straight in D1, outside the API — goes out without validators and is never
 * cached; unchanged rows keep the version's ETag.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { serveDocument } from "../../src/http/cache/serve.ts";
import { d1Fixture } from "./fixtures/sources.ts";
import { call, range, seedSite } from "./support.ts";

const BUILT = Date.UTC(2026, 0, 1);

async function seeded(label: string, vars: Record<string, string>) {
  // A past stamp, so the manifest built now is newer than every row (and the settle window).
  return seedSite(d1Fixture, label, (origin) => range(20).map((i) => ({ loc: `${origin}/p/${i}`, lastmod: "2025-01-01" })), vars, BUILT);
}

/** A record changed outside the API: new content and a change stamp after the manifest. */
async function changeInD1(origin: string, loc: string): Promise<void> {
  await env.DB.prepare("UPDATE urls SET lastmod = '2026-06-06', updated_at = ?1 WHERE loc = ?2")
    .bind(Date.now() + 60_000, `${origin}${loc}`)
    .run();
}

describe("a live render whose rows moved past the version", () => {
  it("keeps the version's ETag while the rows are the version's", async () => {
    const site = await seeded("etag-steady", { EDGE_CACHE_TTL: "0", REGEN_SETTLE_SECONDS: "0" });
    const res = await call(site.env, `${site.origin}/sitemap-pages-1.xml`, { headers: { "Accept-Encoding": "identity" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toMatch(/^"/);
    expect(res.headers.get("last-modified")).not.toBeNull();
    expect(res.headers.get("x-sitemap-source")).toBe("live");
  });

  it("goes out without ETag or Last-Modified, no-store, with the new bytes", async () => {
    const site = await seeded("etag-moved", { EDGE_CACHE_TTL: "0", REGEN_SETTLE_SECONDS: "0" });
    const url = `${site.origin}/sitemap-pages-1.xml`;
    const before = await call(site.env, url, { headers: { "Accept-Encoding": "identity" } });
    const etag = before.headers.get("etag");
    expect(etag).toMatch(/^"/);
    expect(await before.text()).not.toContain("2026-06-06");

    await changeInD1(site.origin, "/p/7");
    const after = await call(site.env, url, { headers: { "Accept-Encoding": "identity" } });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).toBeNull();
    expect(after.headers.get("last-modified")).toBeNull();
    expect(after.headers.get("cache-control")).toBe("no-store");
    expect(await after.text()).toContain("<lastmod>2026-06-06</lastmod>");
    // The text form of the same shard follows the same rule.
    const txt = await call(site.env, `${site.origin}/sitemap-pages-1.txt`);
    expect(txt.status).toBe(200);
    expect(txt.headers.get("etag")).toBeNull();
  });

  it("is never stored in the Cache API under the version's key", async () => {
    const site = await seeded("etag-nocache", { EDGE_CACHE_TTL: "3600", MANIFEST_CACHE_TTL: "0", REGEN_SETTLE_SECONDS: "0" });
    const url = `${site.origin}/sitemap-pages-1.xml`;
    await changeInD1(site.origin, "/p/3");
    for (let i = 0; i < 2; i++) {
      const res = await call(site.env, url, { headers: { "Accept-Encoding": "gzip" } });
      expect(res.status).toBe(200);
      // A cached copy would answer from the cache with the version's ETag: it never does.
      expect(res.headers.get("x-sitemap-source")).toBe("live");
      expect(res.headers.get("etag")).toBeNull();
      await res.arrayBuffer();
    }
  });
});

describe("the live render and the check that its rows are current", () => {
  const base = { origin: "https://overlap.example.com", file: "xml" as const, version: "v1", lastChange: BUILT, tags: [], path: "/sitemap-a-1.xml" };
  const serveContext = (request: Request) => ({
    request,
    config: loadConfig({ ...env, SITES: base.origin, EDGE_CACHE_TTL: "0" }),
    snapshots: null,
    waitUntil: () => {},
    registeredAt: null,
  });

  it("start together: the render's first read is asked for before the check answers", async () => {
    const events: string[] = [];
    const res = await serveDocument(serveContext(new Request(`${base.origin}${base.path}`)), {
      ...base,
      render: () =>
        new ReadableStream<Uint8Array>({
          pull(controller) {
            events.push("read");
            controller.enqueue(new TextEncoder().encode("<urlset/>"));
            controller.close();
          },
        }),
      current: async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push("checked");
        return true;
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toMatch(/^"/);
    expect(await res.text()).toBe("<urlset/>");
    expect(events).toEqual(["read", "checked"]);
  });

  it("a check that fails cancels the render and answers 503 with Retry-After", async () => {
    let cancelled = false;
    const answer = await serveDocument(serveContext(new Request(`${base.origin}${base.path}`)), {
      ...base,
      render: () =>
        new ReadableStream<Uint8Array>({
          pull: () => new Promise(() => {}), // a read that never answers
          cancel: () => {
            cancelled = true;
          },
        }),
      current: () => Promise.reject(new Error("D1 unavailable")),
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).not.toBeNull();
    expect(answer.headers.get("etag")).toBeNull();
    expect(await answer.text()).not.toContain("D1 unavailable");
    expect(cancelled).toBe(true);
  });
});
