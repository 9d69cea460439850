import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { d1Fixture } from "./fixtures/sources.ts";
import { call, freshOrigin, validRecords } from "./support.ts";

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
