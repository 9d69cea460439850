import { describe, expect, it } from "vitest";
import { parseSectionRules, sectionByRule } from "./section-rules.ts";
import { validateRecord } from "./validate.ts";

describe("SECTION_RULES", () => {
  it("parses comma or space separated section:/prefix/ pairs in order", () => {
    expect(parseSectionRules("products:/products/ blog:/blog/,  news:/news/")).toEqual([
      { section: "products", prefix: "/products/" },
      { section: "blog", prefix: "/blog/" },
      { section: "news", prefix: "/news/" },
    ]);
    expect(parseSectionRules("")).toEqual([]);
  });

  it("refuses a malformed entry", () => {
    expect(parseSectionRules("products")).toBeNull();
    expect(parseSectionRules("products:products/")).toBeNull();
    expect(parseSectionRules("Products:/p/")).toBeNull();
    expect(parseSectionRules(":/p/")).toBeNull();
  });

  it("gives the first matching rule's section, by the loc's path", () => {
    const rules = parseSectionRules("sale:/products/sale/ products:/products/ root:/")!;
    expect(sectionByRule(rules, "https://example.com/products/sale/x")).toBe("sale");
    expect(sectionByRule(rules, "https://example.com/products/x")).toBe("products");
    expect(sectionByRule(rules, "https://example.com/productsx")).toBe("root");
    expect(sectionByRule(rules, "https://example.com")).toBe("root");
    expect(sectionByRule(parseSectionRules("blog:/blog/")!, "https://example.com/about")).toBeNull();
  });

  it("validation: a named section wins, then a rule, else the default marked as such", () => {
    const ctx = { sites: new Set(["https://example.com"]), defaultSection: "pages", sectionRules: parseSectionRules("products:/products/")! };
    const named = validateRecord({ loc: "https://example.com/products/a", section: "misc" }, ctx);
    const ruled = validateRecord({ loc: "https://example.com/products/a" }, ctx);
    const defaulted = validateRecord({ loc: "https://example.com/about" }, ctx);
    expect(named.ok && [named.record.section, named.record.sectionDefaulted]).toEqual(["misc", false]);
    expect(ruled.ok && [ruled.record.section, ruled.record.sectionDefaulted]).toEqual(["products", false]);
    expect(defaulted.ok && [defaulted.record.section, defaulted.record.sectionDefaulted]).toEqual(["pages", true]);
  });
});
