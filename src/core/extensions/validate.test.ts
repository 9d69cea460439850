import { describe, expect, it } from "vitest";
import { RecordValidationError, type ValidationIssue } from "../errors.ts";
import { type ValidationContext, validateBatch, validateRecord } from "../validate.ts";

const SITE = "https://example.com";
const ctx: ValidationContext = { sites: new Set([SITE]), defaultSection: "pages" };

function extOf(input: Record<string, unknown>) {
  const r = validateRecord({ loc: `${SITE}/a`, ...input }, ctx);
  if (!r.ok) throw new Error(`unexpected issues: ${JSON.stringify(r.issues)}`);
  return r.record.ext;
}

function issuesOf(input: Record<string, unknown>, loc = `${SITE}/a`): ValidationIssue[] {
  const r = validateRecord({ loc, ...input }, ctx, 7);
  if (r.ok) throw new Error(`expected issues for ${JSON.stringify(input)}`);
  return r.issues;
}

const rulesOf = (input: Record<string, unknown>): string[] => issuesOf(input).map((i) => `${i.field}:${i.rule}`);

const video = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  thumbnail_loc: "https://cdn.example.net/t.jpg",
  title: "A video",
  description: "About it",
  content_loc: "https://cdn.example.net/v.mp4",
  ...extra,
});

const news = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  publication: { name: "The Times", language: "en" },
  publication_date: "2026-11-20T09:30:00Z",
  title: "Headline",
  ...extra,
});

function batchIssues(inputs: unknown[]): ValidationIssue[] {
  try {
    validateBatch(inputs, ctx);
  } catch (e) {
    if (e instanceof RecordValidationError) return e.issues;
    throw e;
  }
  throw new Error("expected validateBatch to throw");
}

describe("images", () => {
  it("normalises URLs and accepts a bare URL string as an image", () => {
    expect(
      extOf({ images: ["https://CDN.example.net/a b%7e.jpg".replace(" ", "%20"), { loc: "https://cdn.example.net/b.jpg", title: "B & C" }] }),
    ).toEqual({ images: [{ loc: "https://cdn.example.net/a%20b~.jpg" }, { loc: "https://cdn.example.net/b.jpg", title: "B & C" }] });
  });

  it("accepts 1,000 images and rejects 1,001 with a max-count issue", () => {
    const images = (n: number) => Array.from({ length: n }, (_, i) => `https://cdn.example.net/${i}.jpg`);
    expect(extOf({ images: images(1_000) })?.images).toHaveLength(1_000);
    const issues = issuesOf({ images: images(1_001) });
    expect(issues).toEqual([
      { index: 7, loc: `${SITE}/a`, field: "images", rule: "max-count", message: "images has 1001 entries; at most 1000 are allowed per URL" },
    ]);
  });

  it("names the image and field of each problem", () => {
    expect(rulesOf({ images: ["https://ok.example/a.jpg", "ftp://x.example/a.jpg", { loc: "/relative.jpg" }, { caption: "no loc" }, 5] })).toEqual([
      "images[1].loc:scheme",
      "images[2].loc:absolute-url",
      "images[3].loc:required",
      "images[4]:type",
    ]);
    const [issue] = issuesOf({ images: [{ loc: "https://ok.example/a.jpg", caption: "bad \u0001 char" }] });
    expect(issue).toMatchObject({ field: "images[0].caption", rule: "xml-char" });
    expect(issue!.message).toContain("U+0001");
    expect(rulesOf({ images: [{ loc: "https://ok.example/a.jpg", width: 3 }] })).toEqual(["images[0].width:unknown-field"]);
    expect(rulesOf({ images: "https://ok.example/a.jpg" })).toEqual(["images:type"]);
  });
});

describe("videos", () => {
  it("keeps every supported field, normalised", () => {
    const ext = extOf({
      videos: [
        video({
          player_loc: "https://player.example.net/p?id=1&x=2",
          duration: "600",
          expiration_date: "2030-01-01",
          rating: 4.256,
          view_count: 12,
          publication_date: "2026-01-02T03:04+01:00",
          tags: ["a", "b"],
          family_friendly: "YES",
          restriction: { relationship: "deny", countries: "US  CA" },
          requires_subscription: false,
          uploader: "Someone",
          platform: { relationship: "allow", platforms: ["web", "tv"] },
          live: "no",
        }),
      ],
    });
    expect(ext?.videos?.[0]).toEqual({
      thumbnail_loc: "https://cdn.example.net/t.jpg",
      title: "A video",
      description: "About it",
      content_loc: "https://cdn.example.net/v.mp4",
      player_loc: "https://player.example.net/p?id=1&x=2",
      duration: 600,
      expiration_date: "2030-01-01",
      rating: 4.26,
      view_count: 12,
      publication_date: "2026-01-02T03:04:00+01:00",
      tags: ["a", "b"],
      family_friendly: true,
      restriction: { relationship: "deny", countries: ["US", "CA"] },
      requires_subscription: false,
      uploader: { name: "Someone" },
      platform: { relationship: "allow", platforms: ["web", "tv"] },
      live: false,
    });
  });

  it("requires thumbnail_loc, title, description and content_loc or player_loc", () => {
    expect(rulesOf({ videos: [{}] })).toEqual([
      "videos[0].thumbnail_loc:required",
      "videos[0].title:required",
      "videos[0].description:required",
      "videos[0].content_loc:required",
    ]);
    expect(extOf({ videos: [video({ content_loc: undefined, player_loc: "https://p.example.net/1" })] })?.videos?.[0]?.player_loc).toBe(
      "https://p.example.net/1",
    );
  });

  it("enforces the XSD's lengths, ranges and enumerations", () => {
    expect(rulesOf({ videos: [video({ title: "x".repeat(101) })] })).toEqual(["videos[0].title:length"]);
    // Characters, as XSD counts them: 100 emoji are 200 UTF-16 units but 100 characters.
    expect(extOf({ videos: [video({ title: "🎬".repeat(100) })] })?.videos?.[0]?.title).toHaveLength(200);
    expect(rulesOf({ videos: [video({ description: "d".repeat(2_049) })] })).toEqual(["videos[0].description:length"]);
    expect(rulesOf({ videos: [video({ duration: 0 })] })).toEqual(["videos[0].duration:range"]);
    expect(rulesOf({ videos: [video({ duration: 28_801 })] })).toEqual(["videos[0].duration:range"]);
    expect(rulesOf({ videos: [video({ duration: 1.5 })] })).toEqual(["videos[0].duration:type"]);
    expect(rulesOf({ videos: [video({ rating: 5.01 })] })).toEqual(["videos[0].rating:range"]);
    expect(rulesOf({ videos: [video({ tags: Array.from({ length: 33 }, (_, i) => `t${i}`) })] })).toEqual(["videos[0].tags:max-count"]);
    expect(rulesOf({ videos: [video({ restriction: { relationship: "maybe", countries: ["us"] } })] })).toEqual([
      "videos[0].restriction.relationship:enum",
      "videos[0].restriction.countries:format",
    ]);
    expect(rulesOf({ videos: [video({ platform: { relationship: "allow", platforms: ["phone"] } })] })).toEqual(["videos[0].platform.platforms:format"]);
    expect(rulesOf({ videos: [video({ family_friendly: "maybe" })] })).toEqual(["videos[0].family_friendly:type"]);
    expect(rulesOf({ videos: [video({ expiration_date: "soon" })] })).toEqual(["videos[0].expiration_date:w3c-datetime"]);
    expect(rulesOf({ videos: [video({ category: "x" })] })).toEqual(["videos[0].category:unknown-field"]);
  });

  it("rejects a content_loc that is the page itself", () => {
    expect(rulesOf({ videos: [video({ content_loc: `${SITE}/a` })] })).toEqual(["videos[0].content_loc:format"]);
  });
});

describe("news", () => {
  it("normalises publication_date to seconds and keeps the zone", () => {
    expect(extOf({ news: news({ publication_date: "2026-11-20T09:30+02:00" }) })?.news).toEqual({
      publication: { name: "The Times", language: "en" },
      publication_date: "2026-11-20T09:30:00+02:00",
      title: "Headline",
    });
    expect(extOf({ news: news({ publication: { name: "Zhongwen", language: "zh-tw" } }) })?.news?.publication.language).toBe("zh-tw");
  });

  it("requires publication name and language, a datetime with a time, and a title", () => {
    expect(rulesOf({ news: {} })).toEqual(["news.publication:required", "news.publication_date:required", "news.title:required"]);
    expect(rulesOf({ news: news({ publication: { name: "", language: "EN" } }) })).toEqual([
      "news.publication.name:required",
      "news.publication.language:format",
    ]);
    expect(rulesOf({ news: news({ publication_date: "2026-11-20" }) })).toEqual(["news.publication_date:w3c-datetime"]);
    expect(rulesOf({ news: news({ keywords: "a, b" }) })).toEqual(["news.keywords:unknown-field"]);
    expect(rulesOf({ news: [news()] })).toEqual(["news:type"]);
  });
});

describe("alternates", () => {
  const cluster = [
    { hreflang: "en", href: `${SITE}/en` },
    { hreflang: "de-DE", href: `${SITE}/de` },
    { hreflang: "x-default", href: `${SITE}/en` },
  ];

  it("accepts a set that lists the URL itself, with x-default", () => {
    const r = validateRecord({ loc: `${SITE}/de`, alternates: cluster }, ctx);
    expect(r.ok && r.record.ext?.alternates).toEqual(cluster);
  });

  it("requires the URL itself in its set", () => {
    expect(rulesOf({ alternates: cluster })).toEqual(["alternates:hreflang-self"]);
  });

  it("rejects bad and repeated hreflang values and bad hrefs", () => {
    const issues = issuesOf(
      {
        alternates: [
          { hreflang: "en", href: `${SITE}/en` },
          { hreflang: "EN", href: `${SITE}/en2` },
          { hreflang: "english", href: `${SITE}/en3` },
          { hreflang: "fr", href: "not a url" },
          { lang: "it", href: `${SITE}/it` },
        ],
      },
      `${SITE}/en`,
    );
    expect(issues.map((i) => `${i.field}:${i.rule}`)).toEqual([
      "alternates[1].hreflang:hreflang-duplicate",
      "alternates[2].hreflang:format",
      "alternates[3].href:absolute-url",
      "alternates[4].lang:unknown-field",
      "alternates[4].hreflang:required",
    ]);
  });

  it("checks within a batch that every variant lists the same set", () => {
    const set = [
      { hreflang: "en", href: `${SITE}/en` },
      { hreflang: "de", href: `${SITE}/de` },
    ];
    expect(
      validateBatch(
        [
          { loc: `${SITE}/en`, alternates: set },
          { loc: `${SITE}/de`, alternates: [...set].reverse() },
        ],
        ctx,
      ),
    ).toHaveLength(2);

    const mismatch = batchIssues([
      { loc: `${SITE}/en`, alternates: set },
      { loc: `${SITE}/de`, alternates: [set[1], { hreflang: "fr", href: `${SITE}/fr` }] },
    ]);
    expect(mismatch.map((i) => `${i.index}:${i.field}:${i.rule}`)).toEqual(["1:alternates:hreflang-mismatch"]);
    expect(mismatch[0]!.message).toContain(`record 0 (${SITE}/en)`);

    const missing = batchIssues([{ loc: `${SITE}/en`, alternates: set }, { loc: `${SITE}/de` }]);
    expect(missing).toEqual([expect.objectContaining({ index: 1, loc: `${SITE}/de`, field: "alternates", rule: "hreflang-mismatch" })]);
  });
});

describe("records", () => {
  it("carries ext only when an extension field is present and non-empty", () => {
    const r = validateRecord({ loc: `${SITE}/a`, images: [], news: null }, ctx);
    expect(r.ok && "ext" in r.record).toBe(false);
  });

  it("reports extension issues together with the record's other issues", () => {
    expect(rulesOf({ priority: 2, images: [{}], news: news({ title: "" }) })).toEqual([
      "priority:priority-range",
      "images[0].loc:required",
      "news.title:required",
    ]);
  });
});
