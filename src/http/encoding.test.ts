import { describe, expect, it } from "vitest";
import { acceptsGzip } from "./encoding.ts";

describe("acceptsGzip", () => {
  it.each([
    [null, false],
    ["", false],
    ["gzip", true],
    ["GZIP", true],
    ["br, gzip;q=0.5", true],
    ["gzip;q=0", false],
    ["gzip; q=0.000", false],
    ["identity", false],
    ["br", false],
    ["*", true],
    ["*;q=0", false],
    ["gzip;q=0, *", false],
    ["x-gzip", true],
    ["deflate, *;q=0.1", true],
  ])("%j → %s", (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});
