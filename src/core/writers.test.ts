import { describe, expect, it } from "vitest";
import { formatPriority } from "./writers.ts";

describe("formatPriority", () => {
  it.each([
    [0, "0.0"],
    [-0, "0.0"],
    [1, "1.0"],
    [0.5, "0.5"],
    [0.85, "0.85"],
    [0.1, "0.1"],
    [0.1 + 0.2, "0.3"],
    [0.7 * 0.1, "0.07"],
    [0.123456, "0.1235"],
    [0.00004, "0.0"],
    [0.00005, "0.0001"],
    [0.0001, "0.0001"],
    [0.99995, "1.0"],
    [0.33333333, "0.3333"],
    [1e-7, "0.0"],
  ])("%d → %s", (p, expected) => {
    expect(formatPriority(p)).toBe(expected);
  });

  it("never emits an exponent or more than 4 decimals", () => {
    for (let i = 0; i <= 10_000; i++) {
      expect(formatPriority(i / 10_000)).toMatch(/^(0|1)\.\d{1,4}$/);
    }
  });

  it.each([1.5, -0.1, Number.NaN, Number.POSITIVE_INFINITY])("throws RangeError for %d", (p) => {
    expect(() => formatPriority(p)).toThrow(RangeError);
  });
});
