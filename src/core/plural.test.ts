import { describe, expect, it } from "vitest";
import { plural } from "./plural.ts";

describe("plural", () => {
  it("is singular for exactly one, plural for every other count, thousands separated", () => {
    const counts = [-1, 0, 1, 2, 11, 21, 101, 999, 1_000, 1_001, 50_000, 1_000_000];
    for (const n of counts) expect(plural(n, "job")).toBe(`${n.toLocaleString("en-US")} ${n === 1 ? "job" : "jobs"}`);
    expect(plural(1, "entry", "entries")).toBe("1 entry");
    expect(plural(0, "entry", "entries")).toBe("0 entries");
    expect(plural(1000, "URL")).toBe("1,000 URLs");
  });
});
