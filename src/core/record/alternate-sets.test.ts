import { afterEach, describe, expect, it, vi } from "vitest";
import type { AlternateLink } from "../extensions/types.ts";
import { type BatchEntry, alternateSetIssues } from "./alternate-sets.ts";

const SITE = "https://example.com";

/** n variants, each listing all n (the last one, when `broken`, lists all but the first). */
function group(n: number, broken = false): BatchEntry[] {
  const links: AlternateLink[] = Array.from({ length: n }, (_, i) => ({ hreflang: `x-${i}`, href: `${SITE}/v${i}` }));
  return links.map((l, i) => ({ index: i, rawLoc: l.href, loc: l.href, alternates: broken && i === n - 1 ? links.slice(1) : links }));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("alternateSetIssues", () => {
  it("computes each record's set key once: a group of n variants costs n sorts, not n²", () => {
    const sort = vi.spyOn(Array.prototype, "sort");
    expect(alternateSetIssues(group(200))).toEqual([]);
    // Only the sorts of set keys' lines count (the test runner may sort its own arrays meanwhile).
    const keySorts = sort.mock.contexts.filter((a: unknown) => Array.isArray(a) && typeof a[0] === "string" && a[0].startsWith("x-"));
    expect(keySorts.length).toBeGreaterThan(0);
    expect(keySorts.length).toBeLessThanOrEqual(200);
  });

  it("names the variants whose set differs from the first one seen, each once (as before)", () => {
    const issues = alternateSetIssues(group(5, true));
    expect(issues.map((i) => `${i.index}:${i.rule}`)).toEqual([
      "4:hreflang-mismatch",
      "1:hreflang-mismatch",
      "2:hreflang-mismatch",
      "3:hreflang-mismatch",
    ]);
  });
});
