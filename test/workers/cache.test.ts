/**
 * Edge caching with exact HTTP semantics, through the real Worker entry and the runtime's Cache API:
 * hits without D1, conditional requests, HEAD, normalised keys, integrity under a failing render,
 * host safety, and the headers for the tiered Workers Cache.
 */
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { newSite, write } from "./regen-support.ts";
import { bytesOf, call, gunzip, locsOf, text } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);

/** An env whose D1 binding counts statements prepared and batches sent (any D1 query does one). */
function counted(env: Env): { env: Env; queries: () => number } {
  let queries = 0;
  const db = new Proxy(env.DB, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (prop === "prepare" || prop === "batch" || prop === "exec") queries++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { env: { ...env, DB: db } as Env, queries: () => queries };
}

async function siteWithShards(label: string, vars: Record<string, string> = {}) {
  const site = newSite(label, { MAX_URLS_PER_SHARD: "100", ...vars });
  await write(site, demoSection(site.origin, "products", 250), PAST);
  await rebuildManifest(services(site.env), site.origin);
  return site;
}

describe("edge cache", () => {
  it("serves the second GET from the cache, byte-identical, without a D1 query", async () => {
    const site = await siteWithShards("cache-hit");
    const { env, queries } = counted(site.env);
    for (const [path, headers] of [
      ["/sitemap-products-2.xml", {}],
      ["/sitemap-products-2.xml", { "Accept-Encoding": "gzip" }],
      ["/sitemap-products-2.xml.gz", {}],
      ["/sitemap.xml", {}],
    ] as const) {
      const first = await call(env, site.origin + path, { headers });
      expect(first.headers.get("x-sitemap-source"), path).toBe("live");
      const firstBytes = await bytesOf(first);
      const before = queries();
      const second = await call(env, site.origin + path, { headers });
      expect(second.headers.get("x-sitemap-source"), path).toBe("cache");
      const secondBytes = await bytesOf(second);
      expect(queries() - before, path).toBe(0);
      expect(secondBytes).toEqual(firstBytes);
      for (const name of ["etag", "last-modified", "cache-control", "content-type", "content-encoding", "vary", "cache-tag"]) {
        expect(second.headers.get(name), `${path} ${name}`).toBe(first.headers.get(name));
      }
    }
  });

  it("shares one entry between query-string variants", async () => {
    const site = await siteWithShards("cache-query");
    const a = await call(site.env, `${site.origin}/sitemap-products-1.xml?utm=1`);
    expect(a.headers.get("x-sitemap-source")).toBe("live");
    const body = await a.text();
    for (const query of ["", "?x=1", "?utm=1&b=2", "?"]) {
      const res = await call(site.env, `${site.origin}/sitemap-products-1.xml${query}`);
      expect(res.headers.get("x-sitemap-source"), query).toBe("cache");
      expect(await res.text()).toBe(body);
    }
  });

  it("makes old entries unreachable when the data changes: new version, new ETag, fresh body", async () => {
    const site = await siteWithShards("cache-change");
    const url = `${site.origin}/sitemap-products-1.xml`;
    const first = await call(site.env, url);
    const etag = first.headers.get("etag")!;
    await first.text();
    expect((await call(site.env, url, { headers: { "If-None-Match": etag } })).status).toBe(304);
    await write(
      site,
      demoSection(site.origin, "products", 1, 5).map((r) => ({ ...r, priority: 0.4321 })),
    );
    await rebuildManifest(services(site.env), site.origin);
    const changed = await call(site.env, url, { headers: { "If-None-Match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect(changed.headers.get("x-sitemap-source")).toBe("live");
    expect(await changed.text()).toContain("<priority>0.4321</priority>");
  });

  it("never stores a render that failed; the next request renders the full document", async () => {
    const site = await siteWithShards("cache-fault");
    // The products-1 shard has 100 records: fail after 60 (the test-only fault hook), inside the
    // first chunk, so the answer is a 503 (test/workers/faults.test.ts has failures after it).
    const faulty = { ...site.env, FAULT_INJECTION: "on", FAULT_AFTER_RECORDS: "60" } as Env;
    for (const [path, headers] of [
      ["/sitemap-products-1.xml", {}],
      ["/sitemap-products-1.xml", { "Accept-Encoding": "gzip" }],
      ["/sitemap-products-1.xml.gz", {}],
    ] as const) {
      const broken = await call(faulty, site.origin + path, { headers });
      expect(broken.status).toBe(503);
      expect(broken.headers.get("cache-control")).toBe("no-store");
      const healthy = await call(site.env, site.origin + path, { headers });
      expect(healthy.headers.get("x-sitemap-source"), path).toBe("live");
      const bytes = await bytesOf(healthy);
      const xml = text(path.endsWith(".gz") || "Accept-Encoding" in headers ? await gunzip(bytes) : bytes);
      expect(xml.endsWith("</urlset>\n")).toBe(true);
      expect(locsOf(xml)).toHaveLength(100);
      const cached = await call(site.env, site.origin + path, { headers });
      expect(cached.headers.get("x-sitemap-source")).toBe("cache");
      expect(await bytesOf(cached)).toEqual(bytes);
    }
  });

  it("keeps sites apart: keys and ETags per site; an unknown or spoofed host neither reads nor fills", async () => {
    const site = await siteWithShards("cache-host-a");
    const other = newSite("cache-host-b", { MAX_URLS_PER_SHARD: "100" });
    const env = { ...site.env, SITES: `${site.origin} ${other.origin}` } as Env;
    await write({ ...other, env }, demoSection(other.origin, "products", 150), PAST);
    await rebuildManifest(services(env), other.origin);

    const a = await call(env, `${site.origin}/sitemap-products-1.xml`);
    const aBody = await a.text();
    expect(a.headers.get("x-sitemap-source")).toBe("live");
    // Same path, other site: its own document, its own ETag, not site A's cached bytes.
    const b = await call(env, `${other.origin}/sitemap-products-1.xml`);
    expect(b.headers.get("x-sitemap-source")).toBe("live");
    expect(b.headers.get("etag")).not.toBe(a.headers.get("etag"));
    const bBody = await b.text();
    expect(locsOf(bBody).every((loc) => loc.startsWith(other.origin))).toBe(true);
    // X-Forwarded-Host is never consulted: site B's request stays site B's.
    const spoofed = await call(env, `${other.origin}/sitemap-products-1.xml`, { headers: { "X-Forwarded-Host": new URL(site.origin).host } });
    expect(await spoofed.text()).toBe(bBody);
    // An unconfigured host gets 404 before any cache or store is touched.
    const unknown = await call(env, `https://unknown.example/sitemap-products-1.xml`);
    expect(unknown.status).toBe(404);
    expect((await call(env, `${site.origin}/sitemap-products-1.xml`)).headers.get("x-sitemap-source")).toBe("cache");
    expect(aBody).not.toBe(bBody);
  });

  it("caches only 200 documents; 404s carry a short max-age", async () => {
    const site = await siteWithShards("cache-404");
    for (const path of ["/sitemap-products-9.xml", "/sitemap-nope-1.xml", "/sitemap-products-0.xml", "/elsewhere"]) {
      const res = await call(site.env, site.origin + path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("cache-control"), path).toBe("public, max-age=60");
      expect(res.headers.get("x-sitemap-source"), path).toBeNull();
      expect((await call(site.env, site.origin + path)).status).toBe(404);
    }
  });

  it("sends config-driven Cache-Control and a Cache-Tag per site, section and shard", async () => {
    const site = await siteWithShards("cache-headers", { CACHE_MAX_AGE: "120", CACHE_S_MAXAGE: "7200", CACHE_STALE_WHILE_REVALIDATE: "30" });
    const host = new URL(site.origin).host;
    const shard = await call(site.env, `${site.origin}/sitemap-products-2.xml`);
    expect(shard.headers.get("cache-control")).toBe("public, max-age=120, s-maxage=7200, stale-while-revalidate=30, no-transform");
    expect(shard.headers.get("cache-tag")).toBe(`sitemaps/${host},sitemaps/${host}/products,sitemaps/${host}/products/2`);
    const index = await call(site.env, `${site.origin}/sitemap.xml`);
    expect(index.headers.get("cache-tag")).toBe(`sitemaps/${host},sitemaps/${host}/index`);
    const off = await call({ ...site.env, CACHE_STALE_WHILE_REVALIDATE: "0", EDGE_CACHE_TTL: "0" } as Env, `${site.origin}/sitemap-products-3.xml`);
    expect(off.headers.get("cache-control")).toBe("public, max-age=120, s-maxage=7200, no-transform");
    expect(off.headers.get("x-sitemap-source")).toBe("live");
    expect((await call({ ...site.env, EDGE_CACHE_TTL: "0" } as Env, `${site.origin}/sitemap-products-3.xml`)).headers.get("x-sitemap-source")).toBe(
      "live",
    );
    expect((await call({ ...site.env, CACHE_MAX_AGE: "soon" } as Env, `${site.origin}/sitemap.xml`)).status).toBe(503);
  });
});
