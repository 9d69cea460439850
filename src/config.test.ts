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
    expect((error as ConfigError).message).toMatch(new RegExp(`^configuration error: ${variable} must `));
  });

  it("names the variable and the rule, never the value", () => {
    const cases: [Record<string, string>, string][] = [
      [{ MAX_URLS_PER_SHARD: "lots-of-urls" }, "configuration error: MAX_URLS_PER_SHARD must be a whole number from 1 to 50000"],
      [{ URL_SOURCE: "sqlite-file" }, 'configuration error: URL_SOURCE must be one of "d1", "kv"'],
      [{ BROWSER_VIEW: "yes-please" }, 'configuration error: BROWSER_VIEW must be one of "true", "false", "1", "0"'],
      [{ DEFAULT_SECTION: "Secret-Section" }, 'configuration error: DEFAULT_SECTION must be lowercase letters, digits, "-" or "_" (≤ 64)'],
      [
        { SECTION_RULES: "secret-products" },
        'configuration error: SECTION_RULES must be "section:/path-prefix/" pairs, comma or space separated, e.g. "products:/products/ blog:/blog/"',
      ],
      [
        { SITES: "https://e.com secret-host.example" },
        'configuration error: SITES must list http(s) origins like "https://example.com" (entry 2 is not an http(s) origin)',
      ],
      [{ DATE_ONLY_SITES: "https://secret-other.example" }, "configuration error: DATE_ONLY_SITES must list origins that are also in SITES"],
      [{ INDEXNOW_KEY: "secret!" }, 'configuration error: INDEXNOW_KEY must be 8 to 128 characters of a-z, A-Z, 0-9 and "-"'],
      [
        { GSC_SERVICE_ACCOUNT: "secret-not-json" },
        "configuration error: GSC_SERVICE_ACCOUNT must be the JSON key file of a Google service account (it is not JSON)",
      ],
      [
        { PING_URLS: "https://secret.example/ping" },
        expect.stringMatching(/^configuration error: PING_URLS must list .* \(entry 1 has no \{sitemap\} placeholder\)$/),
      ],
      [
        { ROBOTS_ORIGIN_URL: "secret.example/robots.txt" },
        'configuration error: ROBOTS_ORIGIN_URL must be an http(s) URL (may use {origin} or {host}) or "none"',
      ],
    ] as never;
    for (const [vars, message] of cases) {
      const env = { SITES: "https://e.com", ...vars };
      expect(() => parseConfig(env), JSON.stringify(vars)).toThrow(ConfigError);
      try {
        parseConfig(env);
      } catch (e) {
        expect((e as ConfigError).message).toEqual(message);
        expect((e as ConfigError).message).not.toMatch(/secret|lots|sqlite|yes-please/i);
      }
    }
  });

  it("treats empty and whitespace-only values as unset, everywhere", () => {
    const blank = {
      DEFAULT_SECTION: "  ",
      MAX_URLS_PER_SHARD: " \t",
      BROWSER_VIEW: "\n",
      INDEXNOW_KEY: "   ",
      PING_URLS: " ",
      GSC_SERVICE_ACCOUNT: "",
      ROBOTS_ORIGIN_URL: "  ",
    };
    const config = parseConfig({ SITES: " https://e.com ", ...blank });
    expect(config).toMatchObject({ defaultSection: "pages", maxUrlsPerShard: 50_000, browserView: true });
    expect(config.notify).toMatchObject({
      indexNow: null,
      pingUrls: [],
      searchConsole: null,
      robots: { originUrl: "{origin}/robots.txt" },
    });
    expect(() => parseConfig({ SITES: "   " })).toThrow(/^configuration error: SITES must list at least one origin/);
  });

  it("turns the browser view on by default, as README and wrangler.jsonc say", () => {
    expect(parseConfig({ SITES: "https://e.com" }).browserView).toBe(true);
    expect(parseConfig({ SITES: "https://e.com", BROWSER_VIEW: "0" }).browserView).toBe(false);
  });

  it("keeps test-only fault knobs out of the production config", () => {
    expect(parseConfig({ SITES: "https://e.com", FAULT_INJECTION: "on", FAULT_AFTER_RECORDS: "10" })).not.toHaveProperty("faultAfterRecords");
  });
});
