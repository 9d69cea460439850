/**
 * The real Worker, seen from outside: every document it serves validates against the official
 * XSDs (libxml2), and gzip is checked on the wire bytes (node:http never decodes).
 */
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { type RunningWorker, rawGet, startWorker } from "./support/worker.ts";
import { validateXml } from "./support/xsd.ts";

const SITE = "http://localhost:8787";
const HOST = "localhost:8787";

let worker: RunningWorker;
const inputs = [
  ...demoSection(SITE, "pages", 1_100),
  ...demoSection(SITE, "products", 2_300),
  ...demoSection(SITE, "blog", 400),
  { loc: `${SITE}/quotes?q="a"&b='c'&d=<e>`, lastmod: "2024-02-29T23:59:59.123-05:00", priority: "1" },
];

beforeAll(async () => {
  worker = await startWorker({ SITES: SITE, MAX_URLS_PER_SHARD: "1000" });
  await worker.seed(inputs);
});
afterAll(async () => {
  await worker?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => rawGet(new URL(path, worker.url), headers, HOST);
const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!.replaceAll("&apos;", "'").replaceAll("&amp;", "&"));

describe("documents served by the Worker", () => {
  it("index and every shard validate against the official XSDs and cover every record once", async () => {
    const index = await get("/sitemap.xml");
    expect(index.status).toBe(200);
    const indexXml = index.body.toString("utf8");
    expect(await validateXml(indexXml, "siteindex")).toEqual({ valid: true, errors: [] });

    const shardUrls = locs(indexXml);
    expect(shardUrls.length).toBeGreaterThanOrEqual(6);
    const seen: string[] = [];
    for (const url of shardUrls) {
      expect(url.startsWith(`${SITE}/sitemap-`)).toBe(true);
      const shard = await get(new URL(url).pathname);
      expect(shard.status, url).toBe(200);
      const result = await validateXml(shard.body, "urlset");
      expect(result, url).toEqual({ valid: true, errors: [] });
      seen.push(...locs(shard.body.toString("utf8")));
    }
    expect(seen).toHaveLength(inputs.length);
    expect(new Set(seen).size).toBe(inputs.length);
    expect(seen).toContain(`${SITE}/quotes?q=%22a%22&b=%27c%27&d=%3Ce%3E`);
  });

  it("sends gzip on the wire for Accept-Encoding: gzip, identity otherwise, and .xml.gz as a file", async () => {
    const identity = await get("/sitemap-products-1.xml");
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(identity.body.subarray(0, 5).toString()).toBe("<?xml");

    const encoded = await get("/sitemap-products-1.xml", { "Accept-Encoding": "gzip" });
    expect(encoded.headers["content-encoding"]).toBe("gzip");
    expect([...encoded.body.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(gunzipSync(encoded.body).equals(identity.body)).toBe(true);

    const explicitIdentity = await get("/sitemap-products-1.xml", { "Accept-Encoding": "identity" });
    expect(explicitIdentity.headers["content-encoding"]).toBeUndefined();
    expect(explicitIdentity.body.equals(identity.body)).toBe(true);

    const file = await get("/sitemap-products-1.xml.gz", { "Accept-Encoding": "gzip" });
    expect(file.headers["content-type"]).toBe("application/gzip");
    expect(file.headers["content-encoding"]).toBeUndefined();
    expect(gunzipSync(file.body).equals(identity.body)).toBe(true);
    expect(await validateXml(gunzipSync(file.body), "urlset")).toEqual({ valid: true, errors: [] });
  });

  it("answers unknown hosts with 404", async () => {
    const res = await rawGet(new URL("/sitemap.xml", worker.url), {}, "evil.example");
    expect(res.status).toBe(404);
    expect(res.body.toString()).toBe("404 Not Found: unknown site\n");
  });
});
