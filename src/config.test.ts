import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "./config.ts";

describe("parseConfig", () => {
  it("reads a full config with defaults", () => {
    const config = parseConfig({ SITES: "https://example.com, http://localhost:8787/" });
    expect([...config.sites]).toEqual(["https://example.com", "http://localhost:8787"]);
    expect(config).toMatchObject({ defaultSection: "pages", maxUrlsPerShard: 50_000, maxBytesPerShard: 52_428_800, indexLinkForm: "xml" });
  });

  it.each([
    [{}, "SITES"],
    [{ SITES: "example.com" }, "SITES"],
    [{ SITES: "https://example.com/path" }, "SITES"],
    [{ SITES: "https://e.com", MAX_URLS_PER_SHARD: "50001" }, "MAX_URLS_PER_SHARD"],
    [{ SITES: "https://e.com", MAX_URLS_PER_SHARD: "1e3" }, "MAX_URLS_PER_SHARD"],
    [{ SITES: "https://e.com", MAX_BYTES_PER_SHARD: "99999999" }, "MAX_BYTES_PER_SHARD"],
    [{ SITES: "https://e.com", INDEX_LINK_FORM: "gz" }, "INDEX_LINK_FORM"],
    [{ SITES: "https://e.com", DEFAULT_SECTION: "Pages" }, "DEFAULT_SECTION"],
  ])("rejects %j naming %s", (env, variable) => {
    const error = (() => {
      try {
        parseConfig(env);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as ConfigError).message).toMatch(new RegExp(`^configuration error: ${variable} `));
  });
});
