import { describe, expect, it } from "vitest";
import { renderUrlset } from "./render.ts";

describe("smoke", () => {
  it("renders", async () => {
    const text = await new Response(renderUrlset([{ loc: "https://example.com/a?b=1&c='d'" }])).text();
    expect(text).toContain("<loc>https://example.com/a?b=1&amp;c=&apos;d&apos;</loc>");
  });
});
