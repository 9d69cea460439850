import { describe, expect, it } from "vitest";
import { utf8Length } from "../escape.ts";
import { renderUrlset } from "../render.ts";
import type { UrlRecord } from "../types.ts";
import { type ValidationContext, validateRecord } from "../validate.ts";
import { urlElement, urlElementBytes, urlsetOpen, urlsetOverheadBytes } from "../writers.ts";
import { EXT_ALL, EXT_IMAGE, EXT_NEWS, EXT_VIDEO, EXT_XHTML, NAMESPACES, extKindsOf } from "./kinds.ts";
import { videoElement } from "./writers.ts";

const SITE = "https://example.com";
const ctx: ValidationContext = { sites: new Set([SITE]), defaultSection: "pages" };

function record(input: Record<string, unknown>): UrlRecord {
  const r = validateRecord({ loc: `${SITE}/it's?a=1&b=2`, ...input }, ctx);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.record;
}

const full = record({
  lastmod: "2026-01-01",
  changefreq: "daily",
  priority: 0.5,
  images: [
    {
      loc: "https://cdn.example.net/a.jpg?w=1&h=2",
      caption: `"Big" <cat> & dog`,
      title: "T",
      geo_location: "Limerick",
      license: "https://l.example.net/",
    },
  ],
  videos: [
    {
      thumbnail_loc: "https://cdn.example.net/t.jpg",
      title: "V",
      description: "D",
      content_loc: "https://cdn.example.net/v.mp4",
      player_loc: "https://p.example.net/?id=1&auto=0",
      duration: 60,
      expiration_date: "2030-01-01",
      rating: 4.5,
      view_count: 3,
      publication_date: "2026-01-01T00:00:00Z",
      tags: ["x", "y"],
      family_friendly: true,
      restriction: { relationship: "allow", countries: ["US", "CA"] },
      requires_subscription: false,
      uploader: { name: "Up & Co", info: "https://example.com/up" },
      platform: { relationship: "deny", platforms: ["tv"] },
      live: false,
    },
  ],
  news: { publication: { name: "N", language: "en" }, publication_date: "2026-01-01T10:00:00Z", title: "Breaking & <hot>" },
  alternates: [
    { hreflang: "en", href: `${SITE}/it's?a=1&b=2` },
    { hreflang: "x-default", href: `${SITE}/it's?a=1&b=2` },
  ],
});

describe("extension writers", () => {
  it("writes extensions after <priority>: images, videos, then hreflang links; news only when asked", () => {
    const xml = urlElement(full, { namespaces: EXT_ALL });
    const order = ["<loc>", "<lastmod>", "<changefreq>", "<priority>", "<image:image>", "<video:video>", "<xhtml:link "].map((t) => xml.indexOf(t));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(xml).not.toContain("news:");
    const withNews = urlElement(full, { namespaces: EXT_NEWS, extensions: EXT_NEWS });
    expect(withNews).toContain(
      "<news:news><news:publication><news:name>N</news:name><news:language>en</news:language></news:publication>" +
        "<news:publication_date>2026-01-01T10:00:00Z</news:publication_date><news:title>Breaking &amp; &lt;hot&gt;</news:title></news:news>",
    );
    expect(withNews).not.toContain("image:");
  });

  it("writes video children in sitemap-video.xsd sequence order", () => {
    const xml = videoElement(full.ext!.videos![0]!);
    const sequence = [
      "thumbnail_loc",
      "title",
      "description",
      "content_loc",
      "player_loc",
      "duration",
      "expiration_date",
      "rating",
      "view_count",
      "publication_date",
      "tag",
      "family_friendly",
      "restriction",
      "requires_subscription",
      "uploader",
      "platform",
      "live",
    ];
    const positions = sequence.map((name) => (xml.indexOf(`<video:${name}>`) >= 0 ? xml.indexOf(`<video:${name}>`) : xml.indexOf(`<video:${name} `)));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(xml).toContain('<video:restriction relationship="allow">US CA</video:restriction>');
    expect(xml).toContain('<video:uploader info="https://example.com/up">Up &amp; Co</video:uploader>');
    expect(xml).toContain("<video:rating>4.5</video:rating><video:view_count>3</video:view_count>");
    expect(xml).toContain("<video:family_friendly>yes</video:family_friendly>");
  });

  it("escapes text and attribute values", () => {
    const xml = urlElement(full, { namespaces: EXT_ALL });
    expect(xml).toContain("<image:loc>https://cdn.example.net/a.jpg?w=1&amp;h=2</image:loc>");
    expect(xml).toContain("<image:caption>&quot;Big&quot; &lt;cat&gt; &amp; dog</image:caption>");
    expect(xml).toContain(`<xhtml:link rel="alternate" hreflang="en" href="${SITE}/it&apos;s?a=1&amp;b=2"/>`);
    expect(xml).toContain("<video:player_loc>https://p.example.net/?id=1&amp;auto=0</video:player_loc>");
  });

  it("declares on <urlset> only the namespaces asked for", () => {
    const head = urlsetOpen(EXT_IMAGE | EXT_XHTML);
    expect(head).toContain('xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"');
    expect(head).toContain('xmlns:xhtml="http://www.w3.org/1999/xhtml"');
    expect(head).not.toContain("xmlns:video");
    expect(head).not.toContain("xmlns:news");
    expect(urlsetOpen()).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n');
    expect(urlsetOpen(0, true)).toContain('<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>\n<urlset');
  });

  it("declares a namespace on the element itself when the head did not", () => {
    const xml = urlElement(full, { namespaces: EXT_IMAGE });
    expect(xml).toContain("<image:image><image:loc>");
    expect(xml).toContain('<video:video xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">');
    expect(xml).toContain('<xhtml:link xmlns:xhtml="http://www.w3.org/1999/xhtml" rel="alternate"');
  });

  it("counts extension markup in urlElementBytes, with the namespaces in the planned head", () => {
    const plain = record({});
    expect(urlElementBytes(full)).toBe(utf8Length(urlElement(full, { namespaces: EXT_ALL })));
    expect(urlElementBytes(full)).toBeGreaterThan(urlElementBytes(plain) + 500);
    expect(urlsetOverheadBytes(EXT_ALL, true)).toBe(utf8Length(urlsetOpen(EXT_ALL, true)) + utf8Length("</urlset>\n"));
  });

  it("renders a urlset whose size is the planned upper bound at most", async () => {
    const records = [full, record({}), full];
    const rendered = new Uint8Array(
      await new Response(renderUrlset(records, { namespaces: extKindsOf(full.ext) & ~EXT_NEWS, stylesheet: true })).arrayBuffer(),
    );
    const planned = urlsetOverheadBytes(EXT_ALL, true) + records.reduce((n, r) => n + urlElementBytes(r), 0);
    expect(rendered.byteLength).toBeLessThanOrEqual(planned);
    expect(rendered.byteLength).toBeGreaterThan(planned - 200);
  });

  it("knows each record's extension kinds", () => {
    expect(extKindsOf(full.ext)).toBe(EXT_ALL);
    expect(extKindsOf(record({ images: ["https://cdn.example.net/a.jpg"] }).ext)).toBe(EXT_IMAGE);
    expect(extKindsOf(null)).toBe(0);
    expect(NAMESPACES.map((n) => n.bit)).toEqual([EXT_IMAGE, EXT_VIDEO, EXT_NEWS, EXT_XHTML]);
  });
});
