/** validateBatch: a batch of records validated as a whole (validateRecord's own cases are in validate.test.ts). */
import { describe, expect, it } from "vitest";
import { RecordValidationError } from "./errors.ts";
import { DEFAULT_SECTION } from "./limits.ts";
import { type ValidationContext, validateBatch, validateRecord } from "./validate.ts";

const ctx: ValidationContext = {
  sites: new Set(["https://example.com", "https://xn--bcher-kva.example", "http://localhost:8787"]),
  defaultSection: DEFAULT_SECTION,
};

function batchError(inputs: unknown[]): RecordValidationError {
  try {
    validateBatch(inputs, ctx);
  } catch (e) {
    if (e instanceof RecordValidationError) return e;
    throw e;
  }
  throw new Error("expected validateBatch to throw");
}

describe("validateBatch", () => {
  it("returns normalised records in order", () => {
    const records = validateBatch(
      [{ loc: "https://example.com/b" }, { loc: "https://EXAMPLE.com/a", priority: 0.3 }, { loc: "http://localhost:8787/" }],
      ctx,
    );
    expect(records.map((r) => r.loc)).toEqual(["https://example.com/b", "https://example.com/a", "http://localhost:8787/"]);
    expect(records[1]?.priority).toBe(0.3);
  });

  it("returns an empty array for an empty batch", () => {
    expect(validateBatch([], ctx)).toEqual([]);
  });

  it("rejects a loc that appears twice after normalisation, on the later record", () => {
    const err = batchError([
      { loc: "https://example.com/a" },
      { loc: "https://example.com/b" },
      { loc: "HTTPS://example.com:443/%61" },
      { loc: "https://example.com/a", section: "other" },
    ]);
    expect(err.issues).toHaveLength(2);
    expect(err.issues[0]).toMatchObject({ index: 2, loc: "HTTPS://example.com:443/%61", field: "loc", rule: "duplicate-loc" });
    expect(err.issues[0]?.message).toContain("record 0");
    expect(err.issues[1]).toMatchObject({ index: 3, rule: "duplicate-loc" });
    expect(err.issues[1]?.message).toContain("record 0");
  });

  it("treats the root with and without slash as different locs (kept as given)", () => {
    expect(validateBatch([{ loc: "https://example.com" }, { loc: "https://example.com/" }], ctx)).toHaveLength(2);
  });

  it("detects duplicates even when one of the records has other issues", () => {
    const err = batchError([{ loc: "https://example.com/a", priority: 2 }, { loc: "https://example.com/a" }]);
    expect(err.issues.map((i) => `${i.index}:${i.rule}`)).toEqual(["0:priority-range", "1:duplicate-loc"]);
  });

  it("throws RecordValidationError with every issue of every record, in record order", () => {
    const err = batchError([
      { loc: "https://example.com/ok" },
      { loc: "https://example.com/\x00", priority: 1.5 },
      "not an object",
      { loc: "https://example.com/ok2", lastmod: "yesterday", changefreq: "Weekly" },
      { loc: "javascript:alert(1)" },
      { loc: "https://other.example/x" },
      { loc: `https://example.com/${"a".repeat(3000)}` },
      { loc: "https://example.com/ok" },
    ]);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("RecordValidationError");
    expect(err.issues.map((i) => `${i.index}:${i.field}:${i.rule}`)).toEqual([
      "1:loc:xml-char",
      "1:priority:priority-range",
      "2:record:type",
      "3:lastmod:w3c-datetime",
      "3:changefreq:changefreq-enum",
      "4:loc:scheme",
      "5:loc:site",
      "6:loc:length",
      "7:loc:duplicate-loc",
    ]);
    expect(err.message).toContain("record 1");
    expect(err.message).toContain("and 4 more");
  });

  it("keeps at most maxIssues issues but counts them all", () => {
    const inputs = [{ loc: 1 }, { loc: 2 }, { loc: 3 }, { loc: "https://example.com/ok" }];
    const all = batchError(inputs);
    expect(all.issues).toHaveLength(3);
    expect(all.issueCount).toBe(3);
    let capped: RecordValidationError | undefined;
    try {
      validateBatch(inputs, ctx, { maxIssues: 2 });
    } catch (e) {
      if (e instanceof RecordValidationError) capped = e;
    }
    expect(capped?.issues).toEqual(all.issues.slice(0, 2));
    expect(capped?.issueCount).toBe(3);
  });

  it("keeps at most 1,000 issues of one record but counts them all", () => {
    // One zod issue (an object's unknown keys) would otherwise become 5,000 of ours.
    const image = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 0]));
    const record = { loc: "https://example.com/a", images: [{ loc: "https://example.com/i.jpg", ...image }] };
    const single = validateRecord(record, ctx);
    expect(single.ok).toBe(false);
    if (!single.ok) expect(single.issues).toHaveLength(1_000);
    const err = batchError([record, { loc: 1 }]);
    expect(err.issues).toHaveLength(1_001);
    expect(err.issueCount).toBe(5_001);
  });

  it("counts the issues of records past the listed cap exactly as it would list them", () => {
    // Past the cap, records are only counted (no messages made): the count must not change.
    const unknown = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, 0]));
    const inputs = [
      { loc: 1 },
      { loc: "https://example.com/a", priority: 7, changefreq: "sometimes", images: [{ loc: "not a url", ...unknown }, 5] },
      { loc: "https://other.example/b", lastmod: "yesterday" },
      { loc: "https://example.com/a" },
      { loc: "https://example.com/c", videos: "x", alternates: [{ href: 1 }], ...unknown },
    ];
    const all = batchError(inputs);
    for (const maxIssues of [0, 1, 2, 40]) {
      let capped: RecordValidationError | undefined;
      try {
        validateBatch(inputs, ctx, { maxIssues });
      } catch (e) {
        if (e instanceof RecordValidationError) capped = e;
      }
      expect(capped?.issueCount, String(maxIssues)).toBe(all.issueCount);
      expect(capped?.issues, String(maxIssues)).toEqual(all.issues.slice(0, maxIssues));
    }
  });
});
