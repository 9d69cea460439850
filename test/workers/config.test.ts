import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "./support.ts";

describe("a bad configuration variable", () => {
  it("answers 500 with a message naming the variable and the rule, not the value or a stack trace", async () => {
    const res = await call({ ...env, SITES: "http://localhost:8787", MAX_URLS_PER_SHARD: "lots" } as Env, "http://localhost:8787/sitemap.xml");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("configuration error: MAX_URLS_PER_SHARD must be a whole number from 1 to 50000\n");
  });
});
