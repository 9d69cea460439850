import { describe, expect, it } from "vitest";
import type { ValidationIssue } from "./errors.ts";
import { DEFAULT_SECTION } from "./limits.ts";
import { type ValidationContext, validateRecord } from "./validate.ts";

const ctx: ValidationContext = {
  sites: new Set(["https://example.com", "https://xn--bcher-kva.example", "http://localhost:8787"]),
  defaultSection: DEFAULT_SECTION,
};

function issuesOf(input: unknown, index?: number): ValidationIssue[] {
  const r = validateRecord(input, ctx, index);
  if (r.ok) throw new Error(`expected issues for ${JSON.stringify(input)}`);
  return r.issues;
}

function rulesOf(input: unknown): string[] {
  return issuesOf(input).map((i) => `${i.field}:${i.rule}`);
}

describe("validateRecord: valid records", () => {
  it("normalises a minimal record and fills defaults", () => {
    expect(validateRecord({ loc: "https://Example.com/a" }, ctx)).toEqual({
      ok: true,
      record: {
        loc: "https://example.com/a",
        lastmod: null,
        changefreq: null,
        priority: null,
        origin: "https://example.com",
        section: "pages",
        sectionDefaulted: true,
      },
    });
  });

  it("normalises every field of a full record", () => {
    const r = validateRecord(
      { loc: "https://bücher.example/straße?q=ä&x='y'", lastmod: "2024-02-29T10:00+01:00", changefreq: "weekly", priority: "0.8", section: "books" },
      ctx,
    );
    expect(r).toEqual({
      ok: true,
      record: {
        loc: "https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%A4&x=%27y%27",
        lastmod: "2024-02-29T10:00:00+01:00",
        changefreq: "weekly",
        priority: 0.8,
        origin: "https://xn--bcher-kva.example",
        section: "books",
        sectionDefaulted: false,
      },
    });
  });

  it.each([undefined, null, ""])("treats %j optional fields as absent", (absent) => {
    const r = validateRecord({ loc: "https://example.com/x", lastmod: absent, changefreq: absent, priority: absent, section: absent }, ctx);
    expect(r).toMatchObject({ ok: true, record: { lastmod: null, changefreq: null, priority: null, section: "pages" } });
  });

  it("uses ctx.defaultSection", () => {
    const r = validateRecord({ loc: "https://example.com/x" }, { ...ctx, defaultSection: "main" });
    expect(r).toMatchObject({ ok: true, record: { section: "main" } });
  });

  it.each(["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"])("accepts changefreq %s", (changefreq) => {
    expect(validateRecord({ loc: "https://example.com/x", changefreq }, ctx)).toMatchObject({ ok: true, record: { changefreq } });
  });

  it.each([
    [0, 0],
    [-0, 0],
    [1, 1],
    [0.5, 0.5],
    [0.85, 0.85],
    ["0", 0],
    ["1", 1],
    ["0.0", 0],
    ["1.0", 1],
    ["1.000", 1],
    ["0.8", 0.8],
    [".5", 0.5],
    ["0.123456", 0.123456],
  ])("accepts priority %j as %d", (priority, expected) => {
    const r = validateRecord({ loc: "https://example.com/x", priority }, ctx);
    expect(r.ok && r.record.priority).toBe(expected);
    expect(r.ok && Object.is(r.record.priority, -0)).toBe(false);
  });

  it.each(["a", "a-b", "news_2024", "0", "x".repeat(64)])("accepts section %j", (section) => {
    expect(validateRecord({ loc: "https://example.com/x", section }, ctx)).toMatchObject({ ok: true, record: { section } });
  });

  it("validates extension fields into ext (extensions/validate.test.ts has the details), only when present", () => {
    const images = [{ loc: "https://example.com/a.jpg" }];
    const r = validateRecord({ loc: "https://example.com/x", images, alternates: [], videos: null }, ctx);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.record.ext).toEqual({ images });
    const news = { publication: { name: "Example", language: "en" } };
    expect(validateRecord({ loc: "https://example.com/x", news }, ctx).ok).toBe(false); // no date, no title
    const plain = validateRecord({ loc: "https://example.com/x" }, ctx);
    expect(plain.ok && "ext" in plain.record).toBe(false);
    const undef = validateRecord({ loc: "https://example.com/x", images: undefined }, ctx);
    expect(undef.ok && "ext" in undef.record).toBe(false);
  });

  it("accepts null-prototype objects", () => {
    const input = Object.assign(Object.create(null) as Record<string, unknown>, { loc: "https://example.com/x" });
    expect(validateRecord(input, ctx).ok).toBe(true);
  });

  it("accepts objects from JSON.parse, and the root URL kept as given", () => {
    const input: unknown = JSON.parse('{"loc":"https://example.com","lastmod":"2024","priority":1}');
    expect(validateRecord(input, ctx)).toMatchObject({ ok: true, record: { loc: "https://example.com", lastmod: "2024-01-01", priority: 1 } });
  });
});

describe("validateRecord: hostile and invalid input", () => {
  it.each([null, undefined, "https://example.com/x", 42, true, [], [{ loc: "https://example.com/x" }], new Date(0), new Map(), () => 1])(
    "rejects non-object record %j",
    (input) => {
      const issues = issuesOf(input, 3);
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({ index: 3, field: "record", rule: "type" });
      expect(issues[0]?.loc).toBeUndefined();
    },
  );

  it.each([{}, { loc: null }, { loc: undefined }, { loc: "" }])("requires loc: %j", (input) => {
    expect(rulesOf(input)).toEqual(["loc:required"]);
  });

  it.each([{ loc: 42 }, { loc: ["https://example.com/"] }, { loc: { href: "https://example.com/" } }, { loc: true }])(
    "rejects non-string loc %j",
    (input) => {
      expect(rulesOf(input)).toEqual(["loc:type"]);
    },
  );

  it.each([
    ["https://example.com/\x00", "xml-char"],
    ["https://example.com/a\x01b", "xml-char"],
    ["https://example.com/\ud800", "xml-char"],
    ["https://example.com/\ufffe", "xml-char"],
    ["https://example.com/a\tb", "absolute-url"],
    ["https://example.com/a\r\nb", "absolute-url"],
    ["https://example.com/a b", "absolute-url"],
    ["/relative", "absolute-url"],
    ["https://user:pass@example.com/", "absolute-url"],
    ["javascript:alert(document.cookie)", "scheme"],
    ["ftp://example.com/x", "scheme"],
    [`https://example.com/${"a".repeat(2048)}`, "length"],
    ["https://evil.com/x", "site"],
    ["http://example.com/x", "site"], // other scheme: other origin
    ["https://example.com:8443/x", "site"], // other port: other origin
    ["https://www.example.com/x", "site"], // other host
    ["https://example.com.evil.com/x", "site"],
  ])("rejects loc %j with rule %s", (loc, expectedRule) => {
    const issues = issuesOf({ loc }, 7);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ index: 7, field: "loc", rule: expectedRule });
  });

  it("names the foreign origin and the configured sites", () => {
    const [issue] = issuesOf({ loc: "https://Evil.com/x" });
    expect(issue?.message).toContain("https://evil.com");
    expect(issue?.message).toContain("https://example.com");
    expect(issue?.loc).toBe("https://Evil.com/x"); // raw loc, as given
  });

  it("rejects every loc when no site is configured", () => {
    const r = validateRecord({ loc: "https://example.com/x" }, { sites: new Set(), defaultSection: "pages" });
    expect(r.ok ? [] : r.issues.map((i) => i.rule)).toEqual(["site"]);
  });

  it.each([
    "yesterday",
    "now",
    "2024-02-30",
    "2023-02-29",
    "2024-13-01",
    "2024-01-01T12:00:00",
    "2017-06-20-04:00",
    "2024-01-01T24:00:00Z",
    "2024-01-01T12:00:00+15:00",
    " 2024-01-01",
    "01/02/2024",
  ])("rejects lastmod %j", (lastmod) => {
    const issues = issuesOf({ loc: "https://example.com/x", lastmod });
    expect(issues.map((i) => `${i.field}:${i.rule}`)).toEqual(["lastmod:w3c-datetime"]);
    expect(issues[0]?.message).toContain(JSON.stringify(lastmod));
    expect(issues[0]?.message).toContain("YYYY-MM-DD");
  });

  it.each([[1704067200000], [new Date(0)], [{}], [true]])("rejects non-string lastmod %j", (lastmod) => {
    expect(rulesOf({ loc: "https://example.com/x", lastmod })).toEqual(["lastmod:type"]);
  });

  it.each(["Weekly", "WEEKLY", " weekly", "weekly ", "fortnightly", "0", "sometimes"])("rejects changefreq %j", (changefreq) => {
    const issues = issuesOf({ loc: "https://example.com/x", changefreq });
    expect(issues.map((i) => `${i.field}:${i.rule}`)).toEqual(["changefreq:changefreq-enum"]);
    expect(issues[0]?.message).toContain("always, hourly, daily, weekly, monthly, yearly, never");
  });

  it.each([[7], [["weekly"]], [false]])("rejects non-string changefreq %j", (changefreq) => {
    expect(rulesOf({ loc: "https://example.com/x", changefreq })).toEqual(["changefreq:type"]);
  });

  it.each([
    1.5,
    -0.1,
    1.0000001,
    2,
    -1,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    "abc",
    "1.5",
    "-0.1",
    "1.01",
    "0.5.5",
    "5e-1",
    "0x1",
    " 0.5",
    "0,5",
    "1.",
    "+0.5",
    "Infinity",
    "NaN",
  ])("rejects priority %j", (priority) => {
    expect(rulesOf({ loc: "https://example.com/x", priority })).toEqual(["priority:priority-range"]);
  });

  it("names the priority range and the value", () => {
    const [issue] = issuesOf({ loc: "https://example.com/x", priority: 1.5 });
    expect(issue?.message).toBe("priority must be between 0.0 and 1.0, got 1.5");
  });

  it.each([[true], [[0.5]], [{ value: 0.5 }]])("rejects non-number priority %j", (priority) => {
    expect(rulesOf({ loc: "https://example.com/x", priority })).toEqual(["priority:type"]);
  });

  it.each(["News", "a b", "-a", "a-", "_a", "a/b", "../etc", "ü", "x".repeat(65), "a.b"])("rejects section %j", (section) => {
    expect(rulesOf({ loc: "https://example.com/x", section })).toEqual(["section:section-name"]);
  });

  it.each([[1], [["news"]]])("rejects non-string section %j", (section) => {
    expect(rulesOf({ loc: "https://example.com/x", section })).toEqual(["section:type"]);
  });

  it.each([
    ["lastmod", "2024-01-01\x00"],
    ["changefreq", "weekly\x0b"],
    ["priority", "0.5\ufffe"],
    ["section", "news\ud800"],
  ])("rejects an XML-forbidden character in %s", (field, value) => {
    const issues = issuesOf({ loc: "https://example.com/x", [field]: value });
    expect(issues.map((i) => `${i.field}:${i.rule}`)).toEqual([`${field}:xml-char`]);
    expect(issues[0]?.message).toMatch(/U\+[0-9A-F]{4}/);
  });

  it("rejects unknown fields, naming them and the allowed ones", () => {
    const issues = issuesOf({ loc: "https://example.com/x", url: "https://example.com/y", Priority: 0.5 });
    expect(issues.map((i) => `${i.field}:${i.rule}`)).toEqual(["url:unknown-field", "Priority:unknown-field"]);
    expect(issues[0]?.message).toContain('"url"');
    expect(issues[0]?.message).toContain("loc, lastmod, changefreq, priority, section, images, videos, news, alternates");
  });

  it("rejects a __proto__ key from JSON.parse instead of following it", () => {
    const input: unknown = JSON.parse('{"loc":"https://example.com/x","__proto__":{"section":"evil"}}');
    expect(rulesOf(input)).toEqual(["__proto__:unknown-field"]);
  });

  it("collects every issue of a record, with index and raw loc on each", () => {
    const issues = issuesOf(
      { loc: "https://evil.com/x", lastmod: "yesterday", changefreq: "Weekly", priority: 1.5, section: "Bad Section", extra: 1 },
      12,
    );
    expect(issues.map((i) => `${i.field}:${i.rule}`)).toEqual([
      "loc:site",
      "lastmod:w3c-datetime",
      "changefreq:changefreq-enum",
      "priority:priority-range",
      "section:section-name",
      "extra:unknown-field",
    ]);
    for (const issue of issues) {
      expect(issue.index).toBe(12);
      expect(issue.loc).toBe("https://evil.com/x");
      expect(issue.message.length).toBeGreaterThan(10);
    }
  });

  it("omits index and loc from issues when they are not known", () => {
    const [issue] = issuesOf({ loc: 5 });
    expect(issue).toEqual({ field: "loc", rule: "type", message: "loc must be a string, got 5" });
    expect("index" in (issue ?? {})).toBe(false);
    expect("loc" in (issue ?? {})).toBe(false);
  });

  it("keeps messages short for huge hostile values", () => {
    const huge = "x".repeat(1_000_000);
    const issues = issuesOf({ loc: `https://example.com/${huge}`, lastmod: huge, changefreq: huge, [huge]: 1 });
    expect(issues.map((i) => i.rule)).toEqual(["length", "w3c-datetime", "changefreq-enum", "unknown-field"]);
    for (const issue of issues) {
      expect(issue.message.length).toBeLessThan(500);
      expect(issue.field.length).toBeLessThan(200);
      expect((issue.loc ?? "").length).toBeLessThan(2200);
    }
  });
});
