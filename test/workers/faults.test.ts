import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { RENDER_RETRY_AFTER_SECONDS, serveDocument } from "../../src/http/cache/serve.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { kvFixture } from "./fixtures/kv.ts";
import { d1Fixture } from "./fixtures/sources.ts";
import { call, freshOrigin, locsOf, validRecords } from "./support.ts";

describe("a source failing mid-render", () => {
  it("breaks the transfer instead of ending a short document that looks complete", async () => {
    const origin = freshOrigin("fault");
    const healthy = d1Fixture.env({ SITES: origin });
    await d1Fixture.upsert(healthy, validRecords(healthy, demoSection(origin, "products", 8_000)));
    await rebuildManifest(services(healthy), origin);

    const faulty = { ...healthy, FAULT_INJECTION: "on", FAULT_AFTER_RECORDS: "6000" } as Env;
    for (const headers of [{}, { "Accept-Encoding": "gzip" }] as Record<string, string>[]) {
      const res = await call(faulty, `${origin}/sitemap-products-1.xml`, { headers });
      expect(res.status).toBe(200); // headers were sent before the failure…
      await expect(res.arrayBuffer()).rejects.toThrow(); // …and the body errors rather than ending
    }
    const gz = await call(faulty, `${origin}/sitemap-products-1.xml.gz`);
    await expect(gz.arrayBuffer()).rejects.toThrow();

    // The fault hook is off unless FAULT_INJECTION is "on".
    const ok = await call({ ...healthy, FAULT_AFTER_RECORDS: "10" } as Env, `${origin}/sitemap-products-1.xml`);
    expect((await ok.text()).match(/<url>/g)).toHaveLength(8_000);
    expect((baseEnv as unknown as Record<string, unknown>).FAULT_INJECTION).toBeUndefined();
  });
});

describe("a render failing before its first byte", () => {
  const forms: [string, Record<string, string>][] = [
    ["/sitemap-products-1.xml", {}],
    ["/sitemap-products-1.xml", { "Accept-Encoding": "gzip" }],
    ["/sitemap-products-1.xml.gz", {}],
    ["/sitemap-products-1.txt", {}],
  ];

  function expectUnavailable(res: Response, body: string, what: string): void {
    expect(res.status, what).toBe(503);
    expect(res.headers.get("Retry-After"), what).toBe(String(RENDER_RETRY_AFTER_SECONDS));
    expect(res.headers.get("Cache-Control"), what).toBe("no-store");
    expect(res.headers.get("ETag"), what).toBeNull();
    expect(res.headers.get("Content-Encoding"), what).toBeNull();
    expect(body, what).toMatch(/^503 Service Unavailable/);
    expect(body, what).not.toMatch(/fault|D1|SQL/i); // the cause is logged, not published
  }

  it("answers 503 with Retry-After when the store fails on its first read, and caches nothing", async () => {
    const origin = freshOrigin("first-byte");
    const healthy = d1Fixture.env({ SITES: origin });
    // Written before the settle window, so the live render keeps its validators.
    await d1Fixture.upsert(healthy, validRecords(healthy, demoSection(origin, "products", 3_000)), Date.now() - 3_600_000);
    await rebuildManifest(services(healthy), origin);

    const faulty = { ...healthy, FAULT_INJECTION: "on", FAULT_AFTER_RECORDS: "0" } as Env;
    for (const [path, headers] of forms) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await call(faulty, origin + path, { headers });
        expectUnavailable(res, await res.text(), `${path} ${JSON.stringify(headers)}`);
      }
    }
    // The index needs no record read: it still answers.
    expect((await call(faulty, `${origin}/sitemap.xml`)).status).toBe(200);

    // Without the fault: the whole document, rendered afresh (no 503 and no partial copy was cached).
    const ok = await call(healthy, `${origin}/sitemap-products-1.xml`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("X-Sitemap-Source")).toBe("live");
    expect(ok.headers.get("ETag")).toMatch(/^".+-i"$/);
    expect(locsOf(await ok.text())).toHaveLength(3_000);
  });

  it("answers 503, not an empty 200, when the manifest lists shards the store no longer holds", async () => {
    // What `npm start -- --var URL_SOURCE:kv` did when it seeded D1: manifests (D1) list shards,
    // the records are read from KV, which holds none for the site.
    const origin = freshOrigin("store-mismatch");
    const d1 = d1Fixture.env({ SITES: origin });
    await d1Fixture.upsert(d1, validRecords(d1, demoSection(origin, "products", 500)));
    await rebuildManifest(services(d1), origin);

    const kv = kvFixture.env({ SITES: origin, MANIFEST_STORE: "d1" });
    const index = await call(kv, `${origin}/sitemap.xml`);
    expect(index.status).toBe(200);
    const shards = locsOf(await index.text());
    expect(shards.length).toBeGreaterThan(0);
    for (const shard of shards) {
      for (const headers of [{}, { "Accept-Encoding": "gzip" }] as Record<string, string>[]) {
        const res = await call(kv, shard, { headers });
        expectUnavailable(res, await res.text(), `${shard} ${JSON.stringify(headers)}`);
      }
    }
  });

  it("answers 503 when the freshness check fails, and cancels the render it started", async () => {
    const origin = freshOrigin("freshness-fails");
    const env = d1Fixture.env({ SITES: origin });
    let cancelled = false;
    const render = (): ReadableStream<Uint8Array> =>
      new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.enqueue(new TextEncoder().encode("<urlset>"));
        },
        cancel() {
          cancelled = true;
        },
      });
    const res = await serveDocument(
      { request: new Request(`${origin}/sitemap-products-1.xml`), config: services(env).config, snapshots: null, waitUntil: () => {}, registeredAt: null },
      {
        origin,
        path: "/sitemap-products-1.xml",
        file: "xml",
        version: "v1",
        lastChange: 0,
        tags: [],
        render,
        current: () => Promise.reject(new Error("D1_ERROR: storage timed out")),
      },
    );
    expectUnavailable(res, await res.text(), "freshness check");
    expect(cancelled).toBe(true);
  });

  it("answers 503 for a document that ends without a byte", async () => {
    const origin = freshOrigin("empty-body");
    const env = d1Fixture.env({ SITES: origin });
    const res = await serveDocument(
      { request: new Request(`${origin}/sitemap-products-1.xml`), config: services(env).config, snapshots: null, waitUntil: () => {}, registeredAt: null },
      { origin, path: "/sitemap-products-1.xml", file: "xml", version: "v1", lastChange: 0, tags: [], render: () => new Blob([]).stream() },
    );
    expectUnavailable(res, await res.text(), "empty body");
  });
});
