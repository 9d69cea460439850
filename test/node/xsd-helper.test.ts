import { describe, expect, it } from "vitest";
import { validateXml } from "./support/xsd.ts";

// The validator itself must reject what the schemas reject, or every "valid" elsewhere means nothing.
describe("XSD helper", () => {
  const urlset = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${body}</urlset>`;

  it("accepts a minimal urlset and index", async () => {
    expect(await validateXml(urlset("<url><loc>https://example.com/</loc></url>"), "urlset")).toEqual({ valid: true, errors: [] });
    const index = `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/s.xml</loc><lastmod>2024-01-01</lastmod></sitemap></sitemapindex>`;
    expect((await validateXml(index, "siteindex")).valid).toBe(true);
  });

  it("rejects an empty urlset, bad lastmod, wrong child order and bad changefreq", async () => {
    for (const body of [
      "",
      "<url><loc>https://example.com/</loc><lastmod>2024-01</lastmod></url>",
      "<url><loc>https://example.com/</loc><priority>0.5</priority><lastmod>2024-01-01</lastmod></url>",
      "<url><loc>https://example.com/</loc><changefreq>Weekly</changefreq></url>",
    ]) {
      const result = await validateXml(urlset(body), "urlset");
      expect(result.valid, body).toBe(false);
      expect(result.errors.length).toBeGreaterThan(0);
    }
  });

  it("loads the extension schemas (an image entry validates, a misplaced one does not)", async () => {
    const ns = 'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"';
    const good = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" ${ns}><url><loc>https://example.com/</loc><image:image><image:loc>https://example.com/a.jpg</image:loc></image:image></url></urlset>`;
    expect((await validateXml(good, "urlset")).valid).toBe(true);
    const bad = good.replace("<image:loc>https://example.com/a.jpg</image:loc>", "");
    expect((await validateXml(bad, "urlset")).valid).toBe(false);
  });
});
