import { describe, expect, it } from "vitest";
import { type Config, ConfigError, checkConfig, parseConfig } from "./config.ts";

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
      const problems = checkConfig({ SITES: "https://e.com", ...vars });
      expect(problems, JSON.stringify(vars)).toHaveLength(1);
      expect(problems[0]).toBeInstanceOf(ConfigError);
      expect(problems[0]?.message).toEqual(message);
      expect(problems[0]?.message).not.toMatch(/secret|lots|sqlite|yes-please/i);
    }
  });

  it("throws for a bad core variable: what serving sitemaps and robots.txt reads", () => {
    for (const vars of [{ MAX_URLS_PER_SHARD: "lots" }, { URL_SOURCE: "sqlite" }, { CACHE_MAX_AGE: "-1" }, { SECTION_RULES: "x" }]) {
      expect(() => parseConfig({ SITES: "https://e.com", ...vars }), JSON.stringify(vars)).toThrow(ConfigError);
    }
  });

  it.each([
    [{ INDEXNOW_KEY: "short" }, "indexnow", (c: Config) => c.notify.indexNow === null && c.notify.pingUrls.length === 1],
    [{ INDEXNOW_ENDPOINT: "ftp://x" }, "indexnow", (c: Config) => c.notify.indexNow === null],
    [{ PING_URLS: "https://p.example/ping" }, "ping", (c: Config) => c.notify.pingUrls.length === 0 && c.notify.indexNow !== null],
    [{ GSC_SERVICE_ACCOUNT: "{oops" }, "search-console", (c: Config) => c.notify.searchConsole === null && c.notify.indexNow !== null],
    [{ NOTIFY_TIMEOUT_MS: "7" }, "notifications", (c: Config) => c.notify.indexNow === null && c.notify.pingUrls.length === 0],
    [{ MIRROR_SITEMAPS: "not-a-url" }, "mirrors", (c: Config) => c.mirror.urls.length === 0],
    [{ MIRROR_MAX_DELETE: "200" }, "mirrors", (c: Config) => c.mirror.urls.length === 0],
    [{ ROBOTS_ORIGIN_URL: "nowhere" }, "robots", (c: Config) => c.notify.robots.originUrl === "{origin}/robots.txt" && c.notify.robots.maxAge === 0],
    [{ REGEN_MAX_SHARDS: "99999" }, "regeneration", (c: Config) => !c.regen.enabled],
    [{ ADMIN_MAX_BYTES: "3" }, "admin-ingest", (c: Config) => c.adminMaxRecords === 0],
    [{ ADMIN_TOKEN: "short" }, "admin", () => true],
    [{ BROWSER_VIEW: "maybe" }, "browser-view", (c: Config) => !c.browserView],
    [{ FEED_SIZE: "many" }, "feed", (c: Config) => c.feedSize === 0],
    [{ CRAWLER_IP_RANGES: "googlebot=ftp://x" }, "crawler-log", (c: Config) => c.crawlers.ranges.length === 0],
  ] as const)("a bad %j turns %s off and keeps the sitemaps", (vars, feature, off) => {
    const good = {
      SITES: "https://e.com",
      INDEXNOW_KEY: "0123456789abcdef",
      PING_URLS: "https://p.example/ping?s={sitemap}",
      GSC_SERVICE_ACCOUNT: JSON.stringify({ client_email: "a@b.iam", private_key: "-----BEGIN PRIVATE KEY-----\nx" }),
      MIRROR_SITEMAPS: "https://e.com/remote.xml",
    };
    const config = parseConfig({ ...good, ...vars });
    const variable = Object.keys(vars)[0];
    expect(config.disabled).toEqual([{ feature, variable, rule: expect.stringMatching(/^must /) }]);
    expect(off(config)).toBe(true);
    expect([...config.sites]).toEqual(["https://e.com"]);
    expect(JSON.stringify(config.disabled)).not.toContain(Object.values(vars)[0]);
    // Everything else stays on.
    expect(parseConfig(good).disabled).toEqual([]);
  });

  it("refuses SNAPSHOT_GRACE_SECONDS below MANIFEST_CACHE_TTL: a cached manifest must never point at deleted parts", () => {
    const config = parseConfig({ SITES: "https://e.com", SNAPSHOT_GRACE_SECONDS: "30", MANIFEST_CACHE_TTL: "60" });
    expect(config.disabled).toEqual([{ feature: "regeneration", variable: "SNAPSHOT_GRACE_SECONDS", rule: "must be at least MANIFEST_CACHE_TTL" }]);
    expect(config.regen.enabled).toBe(false);
    expect(parseConfig({ SITES: "https://e.com", SNAPSHOT_GRACE_SECONDS: "60", MANIFEST_CACHE_TTL: "60" }).regen.enabled).toBe(true);
    expect(checkConfig({ SITES: "https://e.com", SNAPSHOT_GRACE_SECONDS: "0", MANIFEST_CACHE_TTL: "0" })).toEqual([]);
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
